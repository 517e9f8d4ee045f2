"""The runtime every front end shares: settings, the store, one model for all sessions, tools.

`Runtime(settings)` loads engines lazily (the LLM on first use, the embedder when the state
path, a tool or per-turn recall first needs it, after which the store searches with it too);
tests and benchmarks inject their own (`Runtime(settings, llm=ScriptedLLM(...), store=Store())`).
One LLM serves every session: the adapter queues calls on a FIFO lock, so sessions never
interleave inside the model. `open_session()` starts a conversation with its own ledger,
assembler, loaded tool groups and compaction hooks; `answer_chain()` is the one chain of
answerers every session (and `ask`) decides with. The runtime keeps the open sessions; a
session that closes drops out of `sessions`. `reminders` is the scheduler that fires
reminders from the table and tells every open session (the serving front end starts it).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bot.reminders.scheduler import ReminderScheduler
from bot.tools.approval import approved_runner
from bot.tools.registry import ActiveTools, ToolRegistry, default_registry
from bot.turn.answers import STAGES, AnswerChain
from bot.turn.surroundings import Parts, Shared
from compaction import create_hooks
from compaction.briefing import build_briefing, notes_block
from compaction.hooks import HookInputs, HooksFactory
from config import Settings
from context.assembler import Assembler
from context.conversation import Conversation, Prefix
from context.ledger import Ledger
from context.lookup import Remembered

if TYPE_CHECKING:
    from bot.turn.session import Session
    from context.intents import IntentIndex
    from memory.calendar import Calendar
    from memory.rows import ReminderRow
    from memory.store import Store
    from models.base import LLM, CallStats, Embedder, Tokenizer

CONFIG_DIR = Path(__file__).resolve().parent.parent / "config"


def load_system_prompt(settings: Settings) -> str:
    """config/system_prompt.md, or the file settings.context.system_prompt_file names."""
    name = settings.context.system_prompt_file
    path = Path(name).expanduser()
    if not path.is_absolute():
        path = CONFIG_DIR / name
    try:
        return path.read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise FileNotFoundError(
            f"the system prompt {path} cannot be read ({exc}); restore config/system_prompt.md "
            "or set context.system_prompt_file"
        ) from exc


class Runtime:
    """Shared engines and services; sessions come from `open_session()`."""

    def __init__(
        self,
        settings: Settings,
        *,
        llm: LLM | None = None,
        store: Store | None = None,
        embedder: Embedder | None = None,
        tokenizer: Tokenizer | None = None,
        registry: ToolRegistry | None = None,
        hooks_factory: HooksFactory | None = None,
        system_prompt: str | None = None,
        answer_stages: tuple[str, ...] = STAGES,
    ) -> None:
        self.settings = settings
        self._llm = llm
        # Engines passed in belong to the caller; only what this runtime loads, it closes.
        self._owns_llm = llm is None
        self._store = store
        self._owns_store = store is None
        self._embedder = embedder
        self._tokenizer = tokenizer
        self.registry = registry or default_registry()
        self.hooks_factory = hooks_factory or create_hooks
        self.system_prompt = (
            system_prompt if system_prompt is not None else load_system_prompt(settings)
        )
        # The chain's stages before the model; replay of a recorded trace keeps only the model.
        self.answer_stages = answer_stages
        self._intents: IntentIndex | None = None
        self._calendar: Calendar | None = None
        # Record titles' vectors, shared by every session's state path: a new session's first
        # lookup finds the titles already embedded.
        self._title_vectors = Remembered()
        self._sessions: list[Session] = []
        self._closed = False
        self._head_kept = False
        # Set by the first user activity: the head evaluated at start-up yields to them.
        self.head_stop = threading.Event()
        # Fires reminders from the table; the front end that serves starts it (`start()`).
        self.reminders = ReminderScheduler(lambda: self.store, self._reminders_fired)

    # --- engines ------------------------------------------------------------------------

    @property
    def llm(self) -> LLM:
        """The shared chat model (loaded on first use)."""
        if self._llm is None:
            from models import load_llm

            self._llm = load_llm(self.settings)
        return self._llm

    @property
    def has_llm(self) -> bool:
        return self._llm is not None

    @property
    def has_embedder(self) -> bool:
        return self._embedder is not None

    @property
    def store(self) -> Store:
        if self._store is None:
            from memory.store import Store

            self._store = Store.open(self.settings, embedder=self._embedder)
        return self._store

    @property
    def embedder(self) -> Embedder | None:
        """Loaded on first use; None if it cannot load (search then runs lexical only)."""
        if self._embedder is None:
            from models import ModelError, load_embedder

            with contextlib.suppress(ModelError, OSError):
                self._embedder = load_embedder(self.settings)
        store = self._store
        if self._embedder is not None and store is not None and store.notes.embedder is None:
            store.notes.embedder = self._embedder  # it now embeds writes and searches hybrid
        return self._embedder

    @property
    def window(self) -> int:
        """The context window in use: the configured one, capped by the loaded model's."""
        window = self.settings.context.window
        if self._llm is not None:
            window = min(window, int(self._llm.n_ctx))
        return window

    def codec(self) -> Any:
        """What the ledger counts with: the LLM when loaded, else the vocab-only tokenizer.
        A served model is reached instead (a probe, not a load): a local GGUF may be another
        model's vocabulary, and the served one decides which counts are exact."""
        from models import served

        if self._llm is not None or served(self.settings):
            return self.llm
        if self._tokenizer is None:
            from models import load_tokenizer

            self._tokenizer = load_tokenizer(self.settings)
        return self._tokenizer

    def session_settings(self) -> Settings:
        """Settings whose window is the one in use, so lane budgets scale to it."""
        if self.window == self.settings.context.window:
            return self.settings
        copy = self.settings.model_copy(deep=True)
        copy.context.window = self.window
        return copy

    def answer_chain(
        self, usage: Callable[[], tuple[int, int]] | None = None, *, store_error: str = ""
    ) -> AnswerChain:
        """The chain of answerers before the model, with every stage loaded: the state path's
        classifier loads the embedding model at the first question that needs it.
        `usage` tells the context answer how full the asking session is; `store_error` says
        why the store could not be opened (its answers then say they cannot read it)."""
        from context.state import StateResolver

        store = None if store_error else self.store
        resolver = StateResolver(
            store,
            self.settings,
            usage,
            store_error=store_error,
            intents=self.intents,
            calendar=self.calendar,
            vectors=self._title_vectors,
        )
        # A yes runs the approved tool itself, with the stored parameters.
        run = approved_runner(self.registry, self.settings, store, lambda: self.embedder)
        return AnswerChain.standard(store, resolver, run, self.answer_stages)

    @property
    def calendar(self) -> Calendar | None:
        """The user's own calendar files (`[calendar] files`), read where they lie, and the
        fetched copy of `[calendar] url`; None when neither is set. Files are parsed at the
        first question that reads them."""
        if self._calendar is None:
            from memory.calendar import from_settings

            self._calendar = from_settings(self.settings)
        return self._calendar

    @property
    def intents(self) -> IntentIndex:
        """The state path's classifier, shared by every session and `ask`."""
        if self._intents is None:
            from context.intents import IntentIndex

            self._intents = IntentIndex(lambda: self.embedder)
        return self._intents

    def _ledger(self, settings: Settings) -> Ledger:
        """A session's token ledger: the model's own counts at the window in use."""
        return Ledger(
            self.codec(),
            window=self.window,
            output_reserve_tokens=settings.context.output_reserve_tokens,
        )

    @property
    def head_kept(self) -> bool:
        """The shared head is evaluated and kept: a session that starts now restores it."""
        return self._head_kept

    async def keep_head(self, stop: threading.Event | None = None) -> CallStats | None:
        """Evaluate the head every session shares (system prompt and tool schemas) once and
        keep its state: a session that starts restores it and evaluates only its briefing.
        The state is saved under the home folder's cache/ as well, and a later start with the
        same model and head reads it back in milliseconds (`models.saved_state`).

        None if it is kept already; else the evaluation's figures (`cancelled` when `stop`
        ended it: what was evaluated stays, and the next call goes on from there).
        """
        if self._head_kept:
            return None
        ledger = self._ledger(self.session_settings())
        tools = ActiveTools(self.registry)
        prefix = Prefix(self.system_prompt, tools.prefix_schemas(), tools.prefix_groups)
        # Kept on disk too: the next start reads it back instead of evaluating it again.
        saved = self.settings.home_path / "cache"
        stats = await self.llm.prefill(ledger.shared_head(prefix), stop, pin=True, saved_in=saved)
        self._head_kept = not stats.cancelled
        return stats

    # --- sessions -----------------------------------------------------------------------

    @property
    def sessions(self) -> list[Session]:
        """The sessions open now."""
        return list(self._sessions)

    def ended(self, session: Session) -> None:
        """`session` closed (tier 3 done): it leaves the open sessions."""
        if session in self._sessions:
            self._sessions.remove(session)

    def open_session(
        self,
        *,
        meta: dict[str, Any] | None = None,
        record_metrics: bool = True,
    ) -> Session:
        """A new conversation: fixed head built now (briefing, notes, core tool schemas).

        `record_metrics`: store each turn's stage timings; off for a front end that stores
        its own end-to-end timings (the voice loop: speech, model, synthesis) under the turn id.
        """
        from bot.turn.session import Session

        if self._closed:
            raise RuntimeError("the runtime is closed")
        llm = self.llm
        settings = self.session_settings()
        ledger = self._ledger(settings)
        assembler = Assembler(settings, ledger)
        session_id = self.store.sessions.start(meta or {"front_end": "runtime"})
        tools = ActiveTools(self.registry)
        briefing, notes, sources = self._briefing(session_id, ledger, settings)
        prefix = assembler.build_prefix(
            self.system_prompt,
            tools.prefix_schemas(),
            tools.prefix_groups,
            briefing=briefing,
            notes=notes,
            source_ids=sources,
        )
        conv = Conversation(session_id=session_id, prefix=prefix)
        hooks = self.hooks_factory(
            HookInputs(
                settings=settings,
                session_id=session_id,
                ledger=ledger,
                store=self.store,
                llm=llm,
                protects=self.registry.protects(),
            )
        )

        def usage() -> tuple[int, int]:
            u = ledger.usage(conv)
            return u.total, u.window

        session = Session(
            self,
            Parts(settings, conv, ledger, assembler, tools, hooks),
            Shared(self.store, llm, lambda: self.embedder, self.answer_chain(usage)),
            record_metrics=record_metrics,
        )
        self._sessions.append(session)
        return session

    def yield_model(self, session: Session) -> None:
        """`session`'s user started to speak or type: background model work stops for them.
        A local model runs one call at a time, so another session's warm-up or summary would
        make this user's turn wait behind it; those stop too. A serving engine runs sessions
        side by side, and only this session's own stops."""
        self.head_stop.set()
        shared = self._llm is None or not self._llm.parallel
        for other in list(self.sessions) if shared else [session]:
            other.stop_background()

    def _briefing(
        self, session_id: str, ledger: Ledger, settings: Settings
    ) -> tuple[str, str, list[str]]:
        """The memory briefing from the previous session: briefing, notes, their sources."""
        briefing = build_briefing(
            self.store,
            budget=settings.context.budget("briefing"),
            count=ledger.count,
            current_session_id=session_id,
            protects=self.registry.protects(),
            calendar=self.calendar,
        )
        return briefing.text, notes_block(briefing.notes), briefing.source_ids

    def _reminders_fired(self, rows: list[ReminderRow]) -> None:
        """Said once, on the device the user last spoke from, and shown on the others; before
        anyone has spoken, every open session is told and the first gap says them (each is
        said once: `announce` takes only unannounced ones). With none open they wait."""
        sessions = list(self.sessions)
        speaker = max(sessions, key=lambda s: s.last_heard, default=None)
        if speaker is None or not speaker.last_heard:
            for session in sessions:
                session.reminders_due()
            return
        speaker.reminders_due()
        for session in sessions:
            if session is not speaker:
                session.show_reminders(rows)

    async def close(self) -> None:
        """Close every session (tier 3 runs for each), then the engines it loaded itself."""
        if self._closed:
            return
        for session in list(self.sessions):
            with contextlib.suppress(Exception):
                await session.close()
        self._closed = True
        await self.reminders.stop()
        if self._owns_llm and self._llm is not None:
            await asyncio.to_thread(self._llm.close)
        if self._owns_store and self._store is not None:
            self._store.close()
