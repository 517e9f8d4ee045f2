"""`python -m bot ask "TEXT" [--json]`: answer one question; `ask -` answers one per stdin line.

A question goes through the runtime's chain of answerers (`bot.turn.answers`), exactly as in
the live session: reminder commands, approvals, the state path (its embedding stage loaded at
the first question that needs it), then the model. Only a question for the model loads it, so
status questions stay fast. With `-`, each line of standard input gets one JSON line on
standard output, so a script pays start-up once, and every line is one conversation.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, TextIO

from bot.runtime import Runtime
from bot.turn.answers import Answered, Decision
from config import Settings, load_settings
from memory.db import StoreError

if TYPE_CHECKING:
    from bot.turn.session import Session
    from models.base import LLM

HELP = "answer a question: status questions from memory, others through the model"


@dataclass
class Answer:
    answer: str
    # "state" (no model: the state path, a reminder command, an approval's refusal) or "model"
    path: str
    sources: list[str] = field(default_factory=list)
    latency_ms: float = 0.0

    def to_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False)


# The model path: (question, the chain's decision) -> the answer.
ModelAnswerer = Callable[[str, Decision], Answer]


class SessionAnswerer:
    """The model path: one conversation through the session loop, opened on first use, on
    the asker's runtime (so the model loads only when a question needs it). The chain already
    decided, so the session takes its decision instead of asking again."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self._loop: asyncio.AbstractEventLoop | None = None
        self._session: Session | None = None

    @property
    def session_id(self) -> str:
        """The model's conversation, once a question needed it ("" before)."""
        return str(self._session.id) if self._session is not None else ""

    def __call__(self, text: str, decision: Decision) -> Answer:
        if self._loop is None:
            self._loop = asyncio.new_event_loop()
        answer: Answer = self._loop.run_until_complete(self._ask(text, decision))
        return answer

    async def _ask(self, text: str, decision: Decision) -> Answer:
        from bot.turn.events import ToolResultEvent, TurnDone

        start = time.perf_counter()
        if self._session is None:
            self._session = self.runtime.open_session(meta={"front_end": "ask"})
        sources: list[str] = []
        reply = ""
        async for event in self._session.handle_text(text, decided=decision):
            if isinstance(event, ToolResultEvent):
                sources.append(f"{event.name}:{event.call_id}")
            elif isinstance(event, TurnDone):
                reply = event.text
        latency = round((time.perf_counter() - start) * 1000.0, 3)
        return Answer(reply, "model", sources, latency)

    def close(self) -> None:
        if self._loop is None:
            return
        self._loop.run_until_complete(self.runtime.close())
        self._loop.close()
        self._loop = None


class Asker:
    """One runtime, one chain and one model session for any number of questions.

    `model` answers what the chain leaves to the model (default: a session on this runtime);
    `llm` is the model that session uses (default: the configured one, loaded when needed)."""

    def __init__(
        self,
        settings: Settings,
        model: ModelAnswerer | None = None,
        warn: TextIO = sys.stderr,
        *,
        llm: LLM | None = None,
    ) -> None:
        self.settings = settings
        self.warn = warn
        self.runtime = Runtime(settings, llm=llm)
        self.store: Any = None
        self.session_id = ""
        error = ""
        try:
            self.store = self.runtime.store
            self.session_id = self.store.sessions.start({"front_end": "ask"})
        except StoreError as exc:
            # Still answer what needs no store (time, date); task answers say they can't read.
            error = str(exc)
            print(f"warning: {exc}", file=warn)
        self.chain = self.runtime.answer_chain(store_error=error)
        self.answerer = SessionAnswerer(self.runtime)
        self.model: ModelAnswerer = model or self.answerer
        self._loop = asyncio.new_event_loop()

    def ask(self, text: str) -> Answer:
        start = time.perf_counter()
        self._log("user", text, role="user")
        decision = self._loop.run_until_complete(self.chain.decide(text, self.conversation()))
        if not isinstance(decision, Answered):
            answer = self.model(text, decision)
            if not answer.latency_ms:
                answer.latency_ms = (time.perf_counter() - start) * 1000.0
            return answer
        result = decision.result
        meta: dict[str, object] = {
            "intent": result.intent,
            "sources": result.sources,
            "path": decision.path,
        }
        self._log("state_answer", result.text, role="assistant", meta=meta)
        return Answer(result.text, "state", result.sources, round(result.latency_ms, 3))

    def conversation(self) -> str:
        """The conversation a yes here may answer: the model's session once it has one (it
        asked; `ask -` answers on a later line), else this run's own. A separate `ask yes`
        is a conversation of its own, so it can never confirm what another one proposed."""
        return str(getattr(self.model, "session_id", "") or self.session_id)

    def _log(
        self, kind: str, content: str, role: str = "", meta: dict[str, object] | None = None
    ) -> None:
        if self.store is None or not self.session_id:
            return
        try:
            self.store.events.append(self.session_id, kind, content, role=role, meta=meta)
        except StoreError as exc:
            # The answer still goes out; the log problem is reported, not hidden.
            print(f"warning: could not log the {kind}: {exc}", file=self.warn)

    def close(self) -> None:
        """End this run's conversation, then close the runtime (its model session too)."""
        if self.store is not None and self.session_id:
            try:
                self.store.sessions.end(self.session_id)
            except StoreError as exc:
                print(f"warning: {exc}", file=self.warn)
        self.answerer.close()
        self._loop.run_until_complete(self.runtime.close())
        self._loop.close()


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("text", help="the question, or - to read one question per line from stdin")
    parser.add_argument("--json", action="store_true", help="print answer, path, sources, latency")


def run(args: argparse.Namespace) -> int:
    text: str = args.text.strip()
    if not text:
        print("error: the question is empty", file=sys.stderr)
        return 2
    asker = Asker(load_settings())
    try:
        if text == "-":
            for line in sys.stdin:
                if line.strip():
                    print(asker.ask(line.strip()).to_json(), flush=True)
            return 0
        answer = asker.ask(text)
        print(answer.to_json() if args.json else answer.answer)
        return 0
    finally:
        asker.close()
