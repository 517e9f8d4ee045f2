"""Cut streamed answer text into pieces that speech synthesis can start on early.

The first piece of a turn goes out as soon as a clause is ready (a comma, colon, semicolon or
dash after a few words), so the first audio does not wait for a whole sentence; a first
sentence that runs on with no clause in it is cut at a space after about fifteen words, since
on a CPU each further word is another tenth of a second of silence. Later pieces
follow sentence ends, which sound more natural, unless a sentence runs long, when a clause
boundary is used instead. Markup that would be read aloud (``**``, backticks, heading marks,
list bullets) is removed, and so is a short bracketed aside (``[1]``, ``[laughs]``, or the
history's "[interrupted: ...]" note, which a small model sometimes copies into its answer):
no piece is cut inside an open bracket, so the aside is removed whole. Pure: no I/O, no clock.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# Words whose trailing period does not end a sentence.
_ABBREVIATIONS = frozenset(
    {"mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "vs", "etc", "e.g", "i.e", "approx"}
    | {"no", "fig", "dept", "inc", "ltd", "co"}
)
_SENTENCE_END = re.compile(r"[.!?…]+[\"')\]]*(?=\s)")
_CLAUSE_END = re.compile(r"[,;:]+(?=\s)|\s[–—-]\s")
_MARKUP = re.compile(r"\*\*|__|`+|^#{1,6}\s*|^\s*[-*•]\s+", re.MULTILINE)
_SPACES = re.compile(r"\s+")
# A bracketed aside of up to this many characters is not read aloud.
_ASIDE_CHARS = 120
# (Not a markdown link's text: `bot.voice.aloud` says that one.)
_ASIDE = re.compile(rf"\s*\[[^\[\]\n]{{0,{_ASIDE_CHARS}}}\](?!\()")


def clean_for_speech(text: str) -> str:
    """Remove markup that a voice would read out and collapse whitespace."""
    return _SPACES.sub(" ", _MARKUP.sub("", _ASIDE.sub("", text))).strip()


@dataclass
class SentenceChunker:
    """Accumulates deltas with `feed` and returns speakable pieces; `flush` returns the rest.

    `first_clause_chars`: the shortest first piece that may end at a clause boundary.
    `max_chars`: a sentence longer than this is cut at its last clause boundary (or space).
    `first_max_chars`: the same for the first piece.
    """

    first_clause_chars: int = 16
    first_max_chars: int = 80
    min_chars: int = 2
    max_chars: int = 220
    _buffer: str = field(default="", init=False)
    _emitted: int = field(default=0, init=False)

    def feed(self, delta: str) -> list[str]:
        self._buffer += delta
        out: list[str] = []
        while True:
            cut = self._next_cut()
            if cut is None:
                break
            piece = clean_for_speech(self._buffer[:cut])
            self._buffer = self._buffer[cut:]
            if self._speakable(piece):
                out.append(piece)
                self._emitted += 1
        return out

    def flush(self) -> list[str]:
        piece = clean_for_speech(self._buffer)
        self._buffer = ""
        if not self._speakable(piece):
            return []
        self._emitted += 1
        return [piece]

    def reset(self) -> None:
        self._buffer = ""
        self._emitted = 0

    @property
    def pending(self) -> str:
        return self._buffer

    def _speakable(self, piece: str) -> bool:
        return len(piece) >= self.min_chars and any(ch.isalnum() for ch in piece)

    def _next_cut(self) -> int | None:
        text = self._buffer
        for match in _SENTENCE_END.finditer(text):
            end = match.end()
            if not self._is_abbreviation(text, match.start()) and not _in_aside(text, end):
                return end
        if self._emitted == 0:
            for match in _CLAUSE_END.finditer(text):
                end = match.end()
                if len(text[:end].strip()) >= self.first_clause_chars and not _in_aside(text, end):
                    return end
        longest = self.first_max_chars if self._emitted == 0 else self.max_chars
        if len(text) > longest:
            window = text[:longest]
            clauses = list(_CLAUSE_END.finditer(window))
            if clauses:
                cut = clauses[-1].end()
            else:
                space = window.rfind(" ")
                cut = space if space > 0 else longest
            if _in_aside(text, cut):
                # Before the bracket, so the aside goes whole into the next piece.
                cut = text.rfind("[", 0, cut) or cut
            return cut
        return None

    @staticmethod
    def _is_abbreviation(text: str, dot_at: int) -> bool:
        if text[dot_at] != ".":
            return False
        start = dot_at
        while start > 0 and (text[start - 1].isalpha() or text[start - 1] == "."):
            start -= 1
        word = text[start:dot_at].lower()
        if word in _ABBREVIATIONS:
            return True
        # A single capital letter ("J. Smith") is an initial, not a sentence end.
        return len(word) == 1 and text[start].isupper()


def _in_aside(text: str, at: int) -> bool:
    """`at` falls inside a bracket opened shortly before and not closed yet."""
    start = text.rfind("[", max(0, at - _ASIDE_CHARS), at)
    return start >= 0 and text.find("]", start, at) < 0
