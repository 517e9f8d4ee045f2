"""What of a streamed answer is said aloud, and when generating it should stop.

A voice answer has a spoken budget (words or sentences, whichever comes first); generation
has its own budget per channel (the spoken one for a turn that came from the microphone, a
larger written one for typed text, whose rest stays on the page). Both end at a sentence end
(a line end inside a block), so what is kept is complete. Runaway repetition (a sentence or
line seen again, or a short loop of words) ends generation too. Code, fenced blocks, lists,
tables and URLs are never read aloud: the voice says one short sentence instead, while the
page still gets every delta. Lines are classified from their first characters, so only a
few characters at each line start wait before prose goes on to the sentence chunker.
Pure: no I/O, no clock.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from bot.voice.chunker import SentenceChunker
from bot.voice.loops import unbroken_runaway, words_loop

if TYPE_CHECKING:
    from config.settings import SpeechSettings

# Characters to a word of English prose, spaces included: a block's size where spaces are few.
_CHARS_PER_WORD = 6

Kind = Literal["prose", "fence", "list", "table", "code", "rule", "blank"]

NOTICES: dict[str, str] = {
    "fence": "I've put the code on the page.",
    "code": "I've put the code on the page.",
    "list": "The list is on the page.",
    "table": "The table is on the page.",
}
REST_ON_PAGE = "The rest is on the page."
LINK = "the link on the page"

_FENCE = ("```", "~~~")
_LIST = re.compile(r"([-*+•]|\d{1,3}[.)])\s")
_LIST_START = re.compile(r"([-*+•]|\d{1,3}[.)]?)")
_RULE = re.compile(r"[-*_]{3,}")
# Line starts that are code, not prose (read on lines that start lower case or with a symbol;
# prose lines start upper case): declarations, calls, assignments, braces, comments, tags.
_CODE_LINE = re.compile(
    r"(function|def|class)\s+\w+\s*[({:]"
    r"|(const|let|var)\s+\w+\s*="
    r"|(import|from)\s+[\w.{*]+(\s+import\b|\s*;|\s*$|\s+from\b)"
    r"|(if|for|while|switch|catch)\s*\("
    r"|(return|await)\b.*[;(]"
    r"|(else|try)\s*[{:]"
    r"|[{}\]]|//|/\*|#include|<[a-zA-Z/!]|\$ "
    r"|[a-zA-Z_][\w.]*(\(|\s*[-+*/]?=\s)"
)
# Lines starting like this wait for more characters before they are classified.
_CODE_WAIT_CHARS = 24
_WORDISH = re.compile(r"[a-z#/{}<$]")
_SENTENCE_END = re.compile(r"[.!?…][\"')\]]*$")
_MD_LINK = re.compile(r"\[([^\]]*)\]\((?:[^)\s]*)\)")
_URL = re.compile(r"(?:https?://|www\.)[^\s<>()\[\]]+?(?=[.,;:!?)\]]*(?:\s|$))")
# A record's id (memory.rows.PREFIXES), alone or as an aside in brackets.
_ID_SAID = {
    "note": "the note",
    "task": "the task",
    "rem": "the reminder",
    "appr": "the request",
    "ev": "an earlier turn",
    "sess": "an earlier conversation",
    "ckpt": "a saved summary",
    "mood": "what you said",
}
_ID_NAME = "|".join(_ID_SAID)
_ID = re.compile(rf"\b({_ID_NAME})-\d+\b", re.IGNORECASE)
# An aside of ids in brackets; the chunker may cut one at its comma, so a piece may hold
# only its opening or only its close.
_ID_ASIDE = re.compile(
    rf"\s*[(\[]\s*(?:(?:{_ID_NAME})-\d+[,\s]*)+[)\]]?|^\s*(?:(?:{_ID_NAME})-\d+[,\s]*)+[)\]]",
    re.IGNORECASE,
)
_CODE_MARKS = ("=>", "();", "){", "===", "!==", "&&", "||", "::", "</", "/>")
_CODE_CHARS = frozenset("{}[]();=<>$\\")
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class Budget:
    """At most `words` words or `sentences` sentences (0: no sentence limit)."""

    words: int
    sentences: int = 0

    def reached(self, words: int, sentences: int) -> bool:
        return words >= self.words or (self.sentences > 0 and sentences >= self.sentences)


@dataclass(frozen=True)
class Cut:
    """Generation should stop: why, and the answer's text to keep (complete units)."""

    reason: Literal["budget", "repetition"]
    kept: str


def for_turn(speech: SpeechSettings, source: str) -> SpokenAnswer:
    """The budgets of a turn from `source`: one from the microphone ("voice") stops
    generating at the spoken budget; typed text generates up to the written one."""
    spoken = Budget(speech.spoken_words, speech.spoken_sentences)
    written = Budget(speech.written_words)
    return SpokenAnswer(spoken, spoken if source == "voice" else written)


def spoken_pieces(text: str) -> list[str]:
    """`text` in the pieces the voice says it in, each as said (what `SpokenAnswer.say` gives
    for a whole answer, and what audio prepared ahead must be keyed by)."""
    plain = SentenceChunker()
    return [speakable(p) for p in plain.feed(text + " ") + plain.flush()]


def speakable(piece: str) -> str:
    """A chunker piece as the voice should say it: a link's text, never its address, and a
    record by what it is, never by its id ("(note-3)" goes; "delete note-3" says "delete the
    note"): the page shows ids, the voice does not read them."""
    piece = _MD_LINK.sub(lambda m: m.group(1) or LINK, piece)
    piece = _URL.sub(LINK, piece)
    aside = _ID_ASIDE.sub("", piece)
    if aside != piece:
        piece = aside.strip()
    return _ID.sub(lambda m: _ID_SAID[m.group(1).lower()], piece)


def holds_id(text: str) -> bool:
    """Whether `text` names a record by its id ("note-3", "task-12")."""
    return _ID.search(text) is not None


def looks_like_code(text: str) -> bool:
    """A sentence that is really code (a statement, an expression): not for reading aloud."""
    stripped = text.strip()
    if not stripped:
        return False
    if stripped[-1] in ";{}" or any(mark in stripped for mark in _CODE_MARKS):
        return True
    dense = [ch for ch in stripped if not ch.isspace()]
    return sum(ch in _CODE_CHARS for ch in dense) >= max(3, 0.1 * len(dense))


def classify(line: str, complete: bool) -> Kind | None:
    """The kind of a line from its start; None while more characters are needed."""
    s = line.lstrip(" \t")
    if not s.strip():
        return "blank" if complete else None
    if s.startswith(_FENCE):
        return "fence"
    if not complete and any(f.startswith(s) for f in _FENCE):
        return None
    if len(line) - len(s) >= 4:
        return "code"  # markdown's indented code block
    if s.startswith("|"):
        return "table"
    if complete and _RULE.fullmatch(s.strip()):
        return "rule"
    if _LIST.match(s):
        return "list"
    if not complete and (_LIST_START.fullmatch(s) or _RULE.fullmatch(s)):
        return None  # a bullet, a number or a rule may be arriving
    if not complete and len(s) < _CODE_WAIT_CHARS and _WORDISH.match(s):
        return None  # code or a lower-case line of prose: the next characters tell
    if _CODE_LINE.match(s) and not s[:1].isupper():
        return "code"
    return "prose"


def _norm(text: str) -> str:
    return " ".join(_WORD.findall(text.lower()))


@dataclass
class SpokenAnswer:
    """Feed an answer's deltas; get the pieces to say, and `cut` once generation should stop.

    `spoken`: what the voice says at most. `generated`: where generation stops (all generated
    words count, the page's blocks too; sentences are prose sentences).
    """

    spoken: Budget
    generated: Budget
    chunker: SentenceChunker = field(default_factory=SentenceChunker)
    cut: Cut | None = field(default=None, init=False)
    muted: bool = field(default=False, init=False)  # the spoken budget is spent
    spoken_words: int = field(default=0, init=False)
    spoken_sentences: int = field(default=0, init=False)
    generated_words: int = field(default=0, init=False)
    generated_sentences: int = field(default=0, init=False)
    _text: str = field(default="", init=False)
    _pos: int = field(default=0, init=False)  # processed up to here
    _kind: Kind | None = field(default=None, init=False)  # the current line's, None: at a start
    _in_fence: bool = field(default=False, init=False)
    _accepted: int = field(default=0, init=False)  # end of the last complete unit
    _said: set[str] = field(default_factory=set, init=False)
    _seen: Counter[str] = field(default_factory=Counter, init=False)
    _words: list[str] = field(default_factory=list, init=False)
    _words_upto: int = field(default=0, init=False)
    _prose_words: int = field(default=0, init=False)  # words of the sentence under way

    # --- the stream -----------------------------------------------------------------------

    def feed(self, delta: str) -> list[str]:
        """Take the next delta; returns what to say now (nothing once cut)."""
        if self.cut is not None:
            return []
        self._text += delta
        out: list[str] = []
        # Before any of it is said: a loop's latest words must not be.
        self._check_loop(final=False)
        if self.cut is None:
            self._check_unbroken()
        while self.cut is None and self._pos < len(self._text) and self._step(out, final=False):
            pass
        return out

    def flush(self) -> list[str]:
        """The answer ended: what is left to say."""
        out: list[str] = []
        if self.cut is None:
            self._check_loop(final=True)
        while self.cut is None and self._pos < len(self._text) and self._step(out, final=True):
            pass
        if self.cut is None and self._kind in (None, "prose"):
            self._prose_pieces(self.chunker.flush(), len(self._text), out, ended=True)
        self.chunker.reset()
        return out

    def say(self, text: str) -> list[str]:
        """Text the session itself asks to say (a state answer, an apology): whole, unbudgeted,
        after whatever of the answer is still waiting; links by name, never their address."""
        return self.flush() + spoken_pieces(text)

    @property
    def kept(self) -> str:
        """The answer up to its last complete unit (what a cut keeps)."""
        return self._text[: self._accepted].rstrip()

    # --- one step: a line start, or part of a line ----------------------------------------

    def _step(self, out: list[str], final: bool) -> bool:
        pending = self._text[self._pos :]
        nl = pending.find("\n")
        line = pending if nl < 0 else pending[: nl + 1]
        complete = nl >= 0 or final
        if self._in_fence:
            if not complete:
                return False
            self._pos += len(line)
            if line.strip().startswith(_FENCE):
                self._in_fence = False
                self._accepted = self._pos
            else:
                self._block_line(line, "fence", out)
            return True
        if self._kind is None:
            kind = classify(line.rstrip("\n"), complete)
            if kind is None:
                return False
            self._kind = kind
            if kind not in ("prose", "blank"):
                self._prose_pieces(self.chunker.flush(), self._pos, out, ended=True)
        if self._kind == "prose":
            return self._prose(line, nl >= 0, out)
        if not complete:
            return False
        self._pos += len(line)
        kind, self._kind = self._kind, None
        if kind == "fence":
            self._in_fence = True
            self._notice("fence", out)
        elif kind in ("list", "table", "code"):
            self._block_line(line, kind, out)
        elif kind == "blank":  # a paragraph ends what was waiting (a heading, say)
            self._prose_pieces(self.chunker.flush(), self._pos, out, ended=True)
        return True

    def _prose(self, line: str, ends: bool, out: list[str]) -> bool:
        fence = line.find("```")
        if fence >= 0:
            # A fence opened mid-line ("Here it is:```js"): the prose before it, then the block.
            line, ends = line[:fence], False
            self._kind = None
        elif not ends:
            # A backtick or two at the end may be the start of a fence: wait for the next delta.
            held = len(line) - len(line.rstrip("`"))
            line = line[: len(line) - held]
            if not line:
                return False
        else:
            self._kind = None
        self._pos += len(line)
        self._prose_pieces(self.chunker.feed(line), self._pos - len(self.chunker.pending), out)
        if fence >= 0:
            self._prose_pieces(self.chunker.flush(), self._pos, out, ended=True)
        return bool(line) or fence >= 0

    # --- units: spoken pieces and page lines ----------------------------------------------

    def _prose_pieces(
        self, pieces: list[str], end: int, out: list[str], ended: bool = False
    ) -> None:
        for i, piece in enumerate(pieces):
            if self.cut is not None:
                return
            # A unit ends at a sentence end, or where the prose ends (a block follows); one
            # that introduces a block ("Here it is:") is not counted as a sentence.
            full_stop = bool(_SENTENCE_END.search(piece))
            unit = full_stop or (ended and i == len(pieces) - 1)
            sentence = full_stop or (unit and not piece.rstrip().endswith(":"))
            if self._repeats(piece, short_limit=3, min_words=4):
                self._stop("repetition")
                return
            self._prose_words += len(piece.split())
            if unit:
                self.generated_words += self._prose_words
                self.generated_sentences += int(sentence)
                self._prose_words = 0
                self._accepted = max(self._accepted, end)
            said = speakable(piece)
            if looks_like_code(said):
                self._notice("code", out)
            else:
                self._speak(said, sentence, out)
            if unit and self.generated.reached(self.generated_words, self.generated_sentences):
                self._stop("budget")
            elif not unit and self._runaway_sentence():
                self._accepted = max(self._accepted, end)
                self._stop("budget")

    @staticmethod
    def _block_words(text: str) -> int:
        """A block's length in words for the budget: its spaced words, or one per
        `_CHARS_PER_WORD` characters where that is more, since code runs several words
        together (`localStorage.setItem('ref','QX-7731');` is one spaced word, some 15
        tokens): counted by spaces, a code block ran to three times the tokens of prose."""
        return max(len(text.split()), len(text.strip()) // _CHARS_PER_WORD)

    def _block_line(self, line: str, kind: str, out: list[str]) -> None:
        # Code repeats a line now and then ("return result;"); a runaway repeats it on and on.
        if self._repeats(line, short_limit=0, min_words=1, times=4, min_chars=16):
            self._stop("repetition")
            return
        self.generated_words += self._block_words(line)
        self._accepted = self._pos
        if kind != "fence":  # a fence's notice was said when it opened
            self._notice(kind, out)
        if self.generated_words >= self.generated.words:
            self._stop("budget")

    def _runaway_sentence(self) -> bool:
        """A sentence that never ends: cut at a clause once well past the budget."""
        slack = max(20, self.generated.words // 2)
        return self.generated_words + self._prose_words >= self.generated.words + slack

    def _speak(self, piece: str, sentence: bool, out: list[str]) -> None:
        if self.muted:
            self._rest_on_page(out)
            return
        out.append(piece)
        self.spoken_words += len(piece.split())
        self.spoken_sentences += int(sentence)
        if sentence and self.spoken.reached(self.spoken_words, self.spoken_sentences):
            self.muted = True

    def _notice(self, kind: str, out: list[str]) -> None:
        notice = NOTICES.get(kind)
        if notice is None or notice in self._said:
            return
        if self.muted:
            self._rest_on_page(out)
            return
        self._said.add(notice)
        out.append(notice)

    def _rest_on_page(self, out: list[str]) -> None:
        if REST_ON_PAGE not in self._said:
            self._said.add(REST_ON_PAGE)
            out.append(REST_ON_PAGE)

    def _stop(self, reason: Literal["budget", "repetition"]) -> None:
        self.cut = Cut(reason, self.kept)

    # --- runaway repetition ---------------------------------------------------------------

    def _repeats(
        self, text: str, short_limit: int, min_words: int, times: int = 2, min_chars: int = 12
    ) -> bool:
        """The same sentence (or line) again: a long one (`min_words`, `min_chars`) the
        `times`-th time, a short one at `short_limit` (0: never)."""
        key = _norm(text)
        if not key:
            return False
        self._seen[key] += 1
        n = self._seen[key]
        long_enough = len(key.split()) >= min_words and len(key) >= min_chars
        return (long_enough and n >= times) or (short_limit > 0 and n >= short_limit)

    def _check_loop(self, final: bool) -> None:
        """A short run of words over and over ("and the dragon and the dragon ..."): cut
        before the sentence it is in."""
        upto = len(self._text) if final else max(self._text.rfind(" "), self._text.rfind("\n"))
        if upto <= self._words_upto:
            return
        fresh = _WORD.findall(self._text[self._words_upto : upto].lower())
        self._words_upto = upto
        for word in fresh:
            self._words.append(word)
            if words_loop(self._words):
                self._stop("repetition")
                return

    def _check_unbroken(self) -> None:
        """What the word and line checks never see, since they wait for a space or a line
        end: a run of characters with no space that loops or runs on, and a block line that
        never ends, counted against the budget as it grows."""
        if unbroken_runaway(self._text):
            self._stop("repetition")
            return
        if self._in_fence or self._kind not in (None, "prose", "blank"):
            open_words = self._block_words(self._text[self._pos :])
            slack = max(20, self.generated.words // 2)
            if self.generated_words + open_words >= self.generated.words + slack:
                self._stop("budget")
