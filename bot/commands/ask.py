"""`python -m bot ask "TEXT" [--json]`: answer one question; `ask -` answers one per stdin line.

A status question is answered by the deterministic state path from the store; anything else
goes to `answer_with_model`, the hook where the conversation runtime answers. With `-`, each
line of standard input gets one JSON line on standard output, so a script pays start-up once.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, TextIO

from bot.tools.approval import executor
from bot.tools.registry import default_registry
from config import Settings, load_settings
from context.state import StateResolver
from memory.db import StoreError
from memory.store import Store

HELP = "answer a question: status questions from memory, others through the model"


@dataclass
class Answer:
    answer: str
    path: str  # "state" or "model"
    sources: list[str] = field(default_factory=list)
    latency_ms: float = 0.0

    def to_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False)


ModelAnswerer = Callable[[str], Answer]


class SessionAnswerer:
    """The model path: one conversation through the session loop, opened on first use.

    The runtime (and the model) load only when a question needs them, so status questions
    stay fast. The state path already ran in `Asker`, so this session skips it. One event
    loop serves every question, so the session's locks and the model's queue stay valid.
    """

    def __init__(self, settings: Settings, store: Store | None = None, llm: Any = None) -> None:
        self.settings = settings
        self.store = store
        self.llm = llm
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runtime: Any = None
        self._session: Any = None

    @property
    def session_id(self) -> str:
        """The model's conversation, once a question needed it ("" before)."""
        return str(self._session.id) if self._session is not None else ""

    def __call__(self, text: str) -> Answer:
        if self._loop is None:
            self._loop = asyncio.new_event_loop()
        answer: Answer = self._loop.run_until_complete(self._ask(text))
        return answer

    async def _ask(self, text: str) -> Answer:
        from bot.events import ToolResultEvent, TurnDone
        from bot.runtime import Runtime

        start = time.perf_counter()
        if self._session is None:
            self._runtime = Runtime(self.settings, llm=self.llm, store=self.store, state_path=False)
            self._session = self._runtime.open_session(meta={"front_end": "ask"})
        sources: list[str] = []
        reply = ""
        async for event in self._session.handle_text(text):
            if isinstance(event, ToolResultEvent):
                sources.append(f"{event.name}:{event.call_id}")
            elif isinstance(event, TurnDone):
                reply = event.text
        latency = round((time.perf_counter() - start) * 1000.0, 3)
        return Answer(reply, "model", sources, latency)

    def close(self) -> None:
        if self._loop is None:
            return
        if self._runtime is not None:
            self._loop.run_until_complete(self._runtime.close())
        self._loop.close()
        self._loop = None


def answer_with_model(text: str) -> Answer:
    """The model path for one question (a fresh session; `Asker` keeps one for many)."""
    answerer = SessionAnswerer(load_settings())
    try:
        return answerer(text)
    finally:
        answerer.close()


class Asker:
    """One store, one resolver and one session for any number of questions."""

    def __init__(
        self,
        settings: Settings,
        model: ModelAnswerer = answer_with_model,
        warn: TextIO = sys.stderr,
    ) -> None:
        self.settings = settings
        self.model = model
        self.warn = warn
        self.store: Store | None = None
        self.session_id = ""
        error = ""
        try:
            self.store = Store.open(settings)
            self.session_id = self.store.sessions.start({"front_end": "ask"})
        except StoreError as exc:
            # Still answer what needs no store (time, date); task answers say they can't read.
            error = str(exc)
            print(f"warning: {exc}", file=warn)
        run = executor(default_registry(), settings, self.store)
        self.resolver = StateResolver(self.store, settings, store_error=error, executor=run)

    def ask(self, text: str) -> Answer:
        start = time.perf_counter()
        self._log("user", text, role="user")
        result = self.resolver.resolve(text, session_id=self.conversation())
        if result is None:
            answer = self.model(text)
            if not answer.latency_ms:
                answer.latency_ms = (time.perf_counter() - start) * 1000.0
            return answer
        self._log(
            "state_answer",
            result.text,
            role="assistant",
            meta={"intent": result.intent, "sources": result.sources},
        )
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
        if self.store is None:
            return
        try:
            if self.session_id:
                self.store.sessions.end(self.session_id)
            self.store.close()
        except StoreError as exc:
            print(f"warning: {exc}", file=self.warn)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("text", help="the question, or - to read one question per line from stdin")
    parser.add_argument("--json", action="store_true", help="print answer, path, sources, latency")


def run(args: argparse.Namespace) -> int:
    text: str = args.text.strip()
    if not text:
        print("error: the question is empty", file=sys.stderr)
        return 2
    settings = load_settings()
    answerer = SessionAnswerer(settings)
    asker = Asker(settings, model=answerer)
    answerer.store = asker.store
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
        answerer.close()
        asker.close()
