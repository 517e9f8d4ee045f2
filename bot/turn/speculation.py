"""Work done ahead of a turn while the user pauses: nothing said, nothing recorded.

When a pause's speculative transcript is ready and the turn has not ended yet, the voice loop
asks the session to get ready for those words (`Session.prepare`):

- a status question: the state path's answer is computed (it only reads) and returned, so the
  voice can synthesize it while the user is still silent;
- anything for the model: the prompt the turn would send is built on a copy of the
  conversation (the same admission: state snapshot, recalled notes, the words) and evaluated
  into the model's cache, after the history's end is evaluated as a turn boundary.

When the turn comes with the same words, its model call finds its prompt evaluated and starts
sampling at once. When the words differ, or the user speaks on, the evaluation stops at its
next batch and the cache goes back on the next call: an attention-only model cuts its KV cache
to the last message start; a hybrid model, whose state cannot be cut, restores the state saved
at the history's end (`models.llm_cache`). Nothing here writes to the store, the event log or
the conversation.
"""

from __future__ import annotations

import asyncio
import dataclasses
import re
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from context.admission import admit_turn
from context.assembler import Request
from context.provenance import with_provenance
from context.snapshot import safe_snapshot

if TYPE_CHECKING:
    from bot.turn.answers import AnswerChain
    from bot.turn.model_inputs import Memory, PromptParts
    from config import Settings
    from context.inputs import Evidence

_NOT_WORD = re.compile(r"[^\w']+")


def same_words(a: str, b: str) -> bool:
    """The same words, whatever their case and punctuation ("Any tasks?" is "any tasks")."""
    return _NOT_WORD.sub(" ", a.lower()).split() == _NOT_WORD.sub(" ", b.lower()).split()


@dataclass
class AheadStats:
    """How preparation went: pauses prepared for, by path, and what became of them."""

    state: int = 0
    model: int = 0
    prefilled_tokens: int = 0
    used: int = 0  # the turn came with the words prepared for
    dropped: int = 0  # the words differed, or the user spoke on
    skipped: int = 0  # not prepared: a turn was running, or the prompt would need compacting
    recalled: int = 0  # turns that admitted the notes recalled in the pause, not searching again
    ms: list[float] = field(default_factory=list)  # time each preparation took


class Ahead:
    """One session's preparation for the words of the current pause (one at a time)."""

    def __init__(self) -> None:
        self.words: str | None = None
        self.stats = AheadStats()
        self._stop = threading.Event()
        # The notes recalled for the words prepared for, kept for the turn that says them.
        self._recalled: tuple[str, list[Evidence]] | None = None

    def drop(self) -> None:
        """The user speaks on: what was prepared is not for them; stop evaluating it."""
        if self.words is not None:
            self.stats.dropped += 1
        self.words = None
        self._recalled = None
        self._stop.set()

    def recalled(self, text: str) -> list[Evidence] | None:
        """The notes recalled in the pause for `text`, once (None when there are none for it):
        recall searched with the same words, so the turn need not search again."""
        kept, self._recalled = self._recalled, None
        if kept is None or not same_words(text, kept[0]):
            return None
        self.stats.recalled += 1
        return kept[1]

    def settle(self, text: str) -> bool:
        """A turn starts with `text`: keep what was prepared when it is for the same words
        (True), drop it otherwise."""
        if self.words is not None and same_words(text, self.words):
            self.words = None
            self.stats.used += 1
            return True
        self.drop()
        return False

    async def prepare(
        self,
        prompt: PromptParts,
        memory: Memory,
        chain: AnswerChain,
        text: str,
        *,
        settings: Settings,
        sends_out: bool,
    ) -> str | None:
        """Get ready for `text`: the state path's spoken answer when it answers (None for
        the model path, whose prompt is evaluated here). `sends_out` says whether a tool that
        sends data out is in reach, so private notes stay out of the prompt as the turn's would."""
        self.drop()
        if chain.may_act(text):
            return None  # a command or an answer to an approval: the turn acts, nothing before
        stop = self._stop = threading.Event()
        self.words = text
        started = time.perf_counter()
        try:
            result = await chain.preview(text, memory.session_id)
            if result is not None:
                self.stats.state += 1
                # Said only while the turn has not begun: a turn under way says it itself.
                return (result.spoken or result.text) if self.words == text else None
            await self._evaluate(prompt, memory, text, stop, settings, sends_out)
            return None
        finally:
            self.stats.ms.append((time.perf_counter() - started) * 1000.0)

    async def _evaluate(
        self,
        prompt: PromptParts,
        memory: Memory,
        text: str,
        stop: threading.Event,
        settings: Settings,
        sends_out: bool,
    ) -> None:
        found = await asyncio.to_thread(memory.recall, text, settings)
        if stop.is_set() or self.words != text:
            return  # the turn began meanwhile (it builds its own prompt), or the user went on
        self._recalled = (text, found)
        evidence = with_provenance(memory.store, found, sends_out=sends_out)
        conv, ledger = prompt.conv, prompt.ledger
        # A copy under its own id: the ledger's running tally of the real one stays as it is.
        copy = dataclasses.replace(
            conv,
            session_id=f"{conv.session_id}#ahead",
            items=list(conv.items),
            omitted=list(conv.omitted),
        )
        request = Request(text=text, turn_id="ahead", id="ahead")
        admit_turn(
            copy,
            request,
            safe_snapshot(memory.store),
            evidence,
            ledger=ledger,
            ctx=settings.context,
        )
        needed = ledger.usage(copy).total + settings.context.output_reserve_tokens
        if needed > ledger.window:
            self.stats.skipped += 1  # the turn compacts first: its prompt will not be this one
            return
        history = ledger.prompt(conv, add_generation_prompt=False)
        request_prompt = ledger.prompt(copy)
        self.stats.model += 1
        # The history's end first: a turn boundary, saved, that a hybrid model restores when
        # the words turn out different.
        await prompt.llm.prefill(history, stop)
        if stop.is_set():
            return
        stats = await prompt.llm.prefill(request_prompt, stop)
        self.stats.prefilled_tokens += stats.evaluated_tokens
