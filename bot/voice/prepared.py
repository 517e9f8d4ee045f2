"""Speech synthesized ahead: audio for the texts Annie is about to say, ready before she says them.

Piper takes 200-400 ms on a small CPU to give a sentence's first audio, and the user hears that
as silence after their question. Two kinds of text are synthesized before they are needed:
fixed phrases the state path says often ("Nothing needs you right now."), once at start-up,
and the answer prepared while the user pauses (`Preparer`: the speculative transcript's state
answer). `PreparedVoice` wraps the real voice: a piece that was prepared,
or is being prepared, plays from here (joining a synthesis still under way, never starting a
second); any other text is synthesized as usual. Audio is keyed by the exact text of the
piece, so a preparation for words the user did not finish with is never heard; it ages out.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import AsyncIterator, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Literal

from bot.turn.events import MODEL_FAILED
from bot.turn.speculation import same_words
from bot.voice.aloud import NOTICES, REST_ON_PAGE, holds_id, spoken_pieces
from context.state_answers import NOTHING_PENDING, NOTHING_TO_APPROVE
from models.base import TTS, AudioChunk

log = logging.getLogger(__name__)

Kind = Literal["fixed", "speculative"]

# Said often and always in the same words: synthesized once, at start-up.
FIXED_PHRASES = (
    NOTHING_PENDING,
    NOTHING_TO_APPROVE,
    *sorted(set(NOTICES.values())),
    REST_ON_PAGE,
    MODEL_FAILED,
)
# Pieces of a prepared answer synthesized ahead: the first is the one the user waits for,
# the next plays while the rest is synthesized.
AHEAD_PIECES = 2


@dataclass
class _Entry:
    kind: Kind
    task: asyncio.Future[list[AudioChunk]]


@dataclass
class PreparedStats:
    """Pieces prepared and how they were used; a speculative piece never said is a miss."""

    prepared: dict[str, int] = field(default_factory=lambda: {"fixed": 0, "speculative": 0})
    hits: dict[str, int] = field(default_factory=lambda: {"fixed": 0, "speculative": 0})
    # Hits whose audio was done when it was asked for: the turn waited on no synthesis.
    ready_hits: int = 0
    synthesized: int = 0  # pieces that were not prepared
    # Pieces said that held a record id ("note-3"): `speakable` keeps this at 0, and the voice
    # tests hold it there.
    ids_voiced: int = 0


class PreparedVoice(TTS):
    """The real voice behind a small store of audio prepared ahead, shared by every connection.

    `capacity` bounds the speculative entries (the oldest go first); fixed phrases stay."""

    def __init__(self, inner: TTS, capacity: int = 16) -> None:
        self.inner = inner
        self.sample_rate = inner.sample_rate
        self.capacity = capacity
        self.stats = PreparedStats()
        self._entries: OrderedDict[str, _Entry] = OrderedDict()

    def synthesize_iter(self, text: str) -> Iterator[AudioChunk]:
        return self.inner.synthesize_iter(text)

    def prepare(self, texts: Iterable[str], kind: Kind = "speculative") -> None:
        """Start synthesizing each text not prepared yet (in a worker thread, in order).
        Needs a running event loop."""
        for text in texts:
            if not text.strip() or text in self._entries:
                continue
            task = asyncio.ensure_future(asyncio.to_thread(self._all_chunks, text))
            # A preparation nobody plays must not report an unretrieved failure.
            task.add_done_callback(lambda t: t.cancelled() or t.exception())
            self._entries[text] = _Entry(kind, task)
            self.stats.prepared[kind] += 1
        self._evict()

    def ready(self, text: str) -> bool:
        """`text` is prepared and its audio done."""
        entry = self._entries.get(text)
        return entry is not None and entry.task.done() and not entry.task.cancelled()

    def fixed_ready(self) -> bool:
        """Every fixed phrase prepared so far has its audio."""
        return all(e.task.done() for e in self._entries.values() if e.kind == "fixed")

    async def wait(self) -> None:
        """Until every preparation under way has finished (tests, start-up)."""
        for entry in list(self._entries.values()):
            if not entry.task.done():
                await asyncio.wait({entry.task})

    async def synthesize(self, text: str) -> AsyncIterator[AudioChunk]:
        if holds_id(text):
            self.stats.ids_voiced += 1
            log.warning("a record id is being said aloud: %r", text[:120])
        chunks = await self._prepared(text)
        if chunks is not None:
            for chunk in chunks:
                yield chunk
            return
        self.stats.synthesized += 1
        made: list[AudioChunk] = []
        async for chunk in self.inner.synthesize(text):
            made.append(chunk)
            yield chunk
        if text in FIXED_PHRASES and text not in self._entries:
            # Said once in full: kept, so the next time it plays at once.
            done: asyncio.Future[list[AudioChunk]] = asyncio.get_running_loop().create_future()
            done.set_result(made)
            self._entries[text] = _Entry("fixed", done)

    async def _prepared(self, text: str) -> list[AudioChunk] | None:
        """The prepared audio for `text` (waiting for it if under way), or None."""
        entry = self._entries.get(text)
        if entry is None:
            return None
        done = entry.task.done()
        try:
            chunks = await asyncio.shield(entry.task)
        except Exception:  # a failed preparation: synthesize it now
            log.warning("a prepared piece failed; synthesizing %r again", text[:60])
            self._entries.pop(text, None)
            return None
        self.stats.hits[entry.kind] += 1
        self.stats.ready_hits += int(done)
        if entry.kind == "speculative":
            # Said once: a speculative piece is not kept for the next time.
            self._entries.pop(text, None)
        return chunks

    def _all_chunks(self, text: str) -> list[AudioChunk]:
        return list(self.inner.synthesize_iter(text))

    def _evict(self) -> None:
        speculative = [t for t, e in self._entries.items() if e.kind == "speculative"]
        for text in speculative[: max(0, len(speculative) - self.capacity)]:
            entry = self._entries.pop(text)
            entry.task.cancel()


class Preparer:
    """One connection's answers prepared during the user's pauses (`Hearing`'s `WordsSoFar`):
    the conversation gets ready for the words (the voice session sends it `Paused`), and the
    first pieces of the state answer it gives back (`Prepared`) are synthesized; `outcome`
    tells a turn whether it was prepared for."""

    def __init__(self, voice: PreparedVoice) -> None:
        self.voice = voice
        self.words: str | None = None
        self.hits = 0
        self.misses = 0

    def pause(self, text: str) -> None:
        """The user paused after `text`; the turn may end with these words."""
        if self.words is not None and not same_words(self.words, text):
            self.misses += 1  # prepared for an earlier pause: the user went on
        self.words = text

    def prepared(self, text: str, spoken: str) -> None:
        """The conversation is ready for `text`, and says `spoken` to it ("": the model will
        answer): its first pieces are synthesized, unless the user has gone on since."""
        if spoken and self.words == text:
            self.voice.prepare(spoken_pieces(spoken)[:AHEAD_PIECES])

    def outcome(self, text: str) -> str:
        """A turn begins with `text`: "hit" when it was prepared for, "miss" when something
        else was (it is dropped, never heard), "" when nothing was."""
        words, self.words = self.words, None
        if words is None:
            return ""
        if same_words(words, text):
            self.hits += 1
            return "hit"
        self.misses += 1
        return "miss"
