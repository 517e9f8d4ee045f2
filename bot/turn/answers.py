"""The chain of answerers: what answers the user's words, tried in a fixed order.

1. Reminder commands ("snooze it ten minutes", "done") act on the reminder just said.
2. Approvals: a "yes" or "no" to the tool call this conversation is waiting on. A yes runs
   the stored call (the exact stored parameters, bounded by tools.timeout_s, stopped by a
   barge-in); its output, or the refusal, goes back to the model as that call's result, so
   the model answers the question that asked for it in the same spoken turn. "Yes, and don't
   ask again" also allows the tool for the rest of the session.
3. The state path: status questions answered from typed state (`context.state`).
4. Done claims: the user saying something is already done that an open task holds as not
   ("I already paid the gas bill"): the task is named and the user asked whether to mark it
   done, as an approval; nothing changes without the yes (`context.done_claims`).
5. Stated facts: the user stating a value a current note states otherwise: both said, and
   the note replaced only on the yes.
6. Deleting a note by words several notes hold ("delete the note about the gate code"): they
   are named and the user's pick says which (`context.forget`); one that fits is the model's.
7. The model (`bot.turn.model_turn`), for everything else and after an approval.

The first six answer without the model, in milliseconds. Each is an `Answerer`: it answers
(`answer`), says whether answering may change the store (`acts`), and says read only whether
it would answer and why (`place`, what `python -m bot route` prints). Every front end (the
voice page, `chat`, `ask`, replay) decides through one `AnswerChain`, built by
`Runtime.answer_chain` with the same stages loaded, so a question takes the same path wherever
it is asked.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Protocol

from bot.reminders import phrases as reminder_phrases
from bot.reminders.phrases import may_be_command
from bot.reminders.phrases import resolve as reminder_command
from bot.tools.base import ToolOutput
from context import forget
from context.choice import Choices
from context.done_claims import claim, fitting
from context.intent_specs import BY_NAME
from context.noticed import notice
from context.state import CANT_READ_APPROVALS, StateResolver, StateResult
from context.wording import count_words, join_spoken, quoted
from memory import approvals
from memory.db import NotFoundError, StoreError
from memory.provenance import claim as stated
from memory.rows import ApprovalRow, NoteRow, TaskRow
from memory.store import Store
from models.base import ToolCall

# Runs an approved call with its stored parameters; the event stops it (a barge-in).
RunApproved = Callable[[ApprovalRow, asyncio.Event | None], Awaitable[ToolOutput]]
# The stages before the model, in the order they are tried.
STAGES = ("reminder", "approval", "state", "done", "fact", "forget")
# How many fitting tasks a "which one?" names (and a pick can choose among).
CHOICES = 5
# How long a reminder's "which one?" stands (a task's stands as long as an approval).
CHOICE_TTL_S = 300.0


@dataclass
class Answered:
    """Answered without the model: `path` is the stage ("reminder", "approval", "state")."""

    path: str
    result: StateResult


@dataclass
class Resume:
    """An approval the user answered: its call and what came of it, for the model to use."""

    approval: ApprovalRow
    call: ToolCall
    output: ToolOutput
    # The user allowed the tool for the rest of the session ("yes, and don't ask again").
    standing: bool = False
    latency_ms: float = 0.0


@dataclass(frozen=True)
class ToModel:
    """No stage answered: the model does."""


TO_MODEL = ToModel()
Decision = Answered | Resume | ToModel


def declined(approval: ApprovalRow) -> ToolOutput:
    """What the model reads when the user said no."""
    return ToolOutput(
        f"The user declined: {approval.tool} was not run and nothing was sent. Say briefly "
        "what you will do instead, without it.",
        ok=False,
    )


@dataclass(frozen=True)
class Placed:
    """Which stage would answer a text, and why, as `python -m bot route` shows it: read only,
    no model run, nothing changed. `confidence` is the classifier's probability where it
    decided, None where a rule did."""

    text: str
    stage: str  # a stage's name (STAGES) or "model"
    intent: str | None = None
    slots: dict[str, object] = field(default_factory=dict)
    confidence: float | None = None
    why: str = ""

    def to_json(self) -> str:
        out = {k: v for k, v in asdict(self).items() if k != "why"}
        return json.dumps(out | {"why": self.why}, ensure_ascii=False)


class Answerer(Protocol):
    """One stage of the chain: answers a text without the model, or passes (None)."""

    name: str

    def acts(self, text: str) -> bool:
        """Whether answering `text` may change the store (nothing is prepared ahead for it)."""
        ...

    async def answer(
        self, text: str, session_id: str, cancel: asyncio.Event | None, now: datetime | None
    ) -> Decision | None: ...

    def place(self, text: str, session_id: str, now: datetime | None) -> Placed | None:
        """Whether this stage would answer `text`, read only."""
        ...


@dataclass
class ReminderCommands:
    """Reminder commands acting on the reminder just said ("snooze it", "done", timers)."""

    store: Store | None
    name: str = "reminder"
    # "Which one?" after a cancel that fits several: the reply picks one ("the second one").
    choices: Choices = field(default_factory=lambda: Choices(CHOICE_TTL_S))

    def acts(self, text: str) -> bool:
        return may_be_command(text) or self.choices.waiting()

    async def answer(
        self, text: str, session_id: str, cancel: asyncio.Event | None, now: datetime | None
    ) -> Decision | None:
        if self.store is None:
            return None
        picked = self.choices.picked(session_id, text)
        self.choices.close(session_id)  # answered, or the user moved on
        if picked is not None:
            return Answered(self.name, reminder_phrases.cancel_one(self.store, picked[0]))
        result = reminder_command(text, self.store, session_id)
        if result is None:
            return None
        if result.intent == reminder_phrases.CHOOSE:
            rows = [self.store.reminders.get(i) for i in result.sources]
            named = [r for r in rows if r is not None]
            self.choices.ask(session_id, [r.id for r in named], [r.text for r in named])
        return Answered(self.name, result)

    def place(self, text: str, session_id: str, now: datetime | None) -> Placed | None:
        if self.store is None:
            return None
        found = reminder_phrases.place(text, self.store, session_id)
        if found is None:
            return None
        kind, slots = found
        return Placed(text, self.name, kind, slots, why="reminder command")


@dataclass
class Approvals:
    """A yes or no to the tool call this conversation is waiting on."""

    store: Store | None
    run_approved: RunApproved
    name: str = "approval"

    def acts(self, text: str) -> bool:
        return approvals.confirmation(text) is not None

    def place(self, text: str, session_id: str, now: datetime | None) -> Placed | None:
        decision = approvals.confirmation(text)
        if decision is None:
            return None
        if self.store is not None:
            at = (now or datetime.now()).astimezone()
            try:
                waiting = bool(
                    self.store.approvals.latest_open(session_id) or self.store.approvals.pending(at)
                )
            except (StoreError, sqlite3.Error):
                waiting = True  # answered "I can't read the approvals" by this stage
            if not waiting:
                return None
        return Placed(text, self.name, decision, why="a reply to a waiting approval")

    async def answer(
        self, text: str, session_id: str, cancel: asyncio.Event | None, now: datetime | None
    ) -> Decision | None:
        decision = approvals.confirmation(text)
        if decision is None:
            return None
        started = time.perf_counter()
        if self.store is None:
            # Without the ledger there is nothing to confirm; saying "done" would be a lie.
            return Answered(self.name, StateResult(CANT_READ_APPROVALS, "approval"))
        at = (now or datetime.now()).astimezone()
        try:
            taken = approvals.take(self.store.approvals, decision, session_id, at)
        except (StoreError, sqlite3.Error):
            return Answered(self.name, StateResult(CANT_READ_APPROVALS, "approval"))
        if taken is None:
            return None  # nothing is waiting anywhere: an ordinary reply, for the model
        if isinstance(taken, approvals.Outcome):
            result = StateResult(taken.text, "approval", taken.sources)
            result.latency_ms = (time.perf_counter() - started) * 1000.0
            return Answered(self.name, result)
        call = ToolCall(taken.tool, dict(taken.params), id=f"call_{taken.id}")
        if taken.status == "declined":
            output = declined(taken)
        else:
            output = await self.run_approved(taken, cancel)
            status = "executed" if output.ok else "failed"
            with contextlib.suppress(StoreError, sqlite3.Error, ValueError):
                self.store.approvals.resolve(taken.id, status, output.content[:2000])
        return Resume(
            taken,
            call,
            output,
            standing=decision == "yes" and approvals.standing(text),
            latency_ms=(time.perf_counter() - started) * 1000.0,
        )


@dataclass
class StatePath:
    """Status questions answered from typed state (`context.state`)."""

    resolver: StateResolver
    name: str = "state"

    def acts(self, text: str) -> bool:
        return False

    async def answer(
        self, text: str, session_id: str, cancel: asyncio.Event | None, now: datetime | None
    ) -> Decision | None:
        # In a worker thread: an embedded question costs milliseconds of encoder time, and
        # other sessions' audio and turns go on meanwhile. The store is shared under its lock.
        result = await asyncio.to_thread(self.resolver.resolve, text, now, session_id=session_id)
        return Answered(self.name, result) if result is not None else None

    def place(self, text: str, session_id: str, now: datetime | None) -> Placed | None:
        result, routed = self.resolver.resolve_routed(text, now, session_id=session_id)
        verdict = routed.verdict
        confidence = None if verdict is None else round(verdict.probability, 4)
        if result is None or routed.match is None:
            why = routed.why or (routed.how if verdict is None or not verdict.why else verdict.why)
            if routed.match is not None:
                why = "nothing in the records answers it"
            return Placed(text, "model", None, {}, confidence, why)
        match = routed.match
        # How it was placed, and what its intent answers (the intent's spec says).
        why = f"{routed.how}: {BY_NAME[match.intent].answers}"
        return Placed(
            text,
            self.name,
            result.intent,
            match.slots(),
            confidence if routed.how == "classifier" else None,
            why,
        )


def placed_choice(
    stage: str,
    text: str,
    picked: tuple[str, str] | None,
    fitting: Callable[[], Sequence[TaskRow | NoteRow]],
    why: str,
) -> Placed | None:
    """Where a stage that names records and asks "which one?" would place `text`: a pick from
    its open question, or the records the words fit (read only)."""
    if picked is not None:
        return Placed(text, stage, stage, {"picked": picked[0]}, why="picks from 'which one?'")
    try:
        found = fitting()
    except (StoreError, sqlite3.Error):
        return None
    if not found:
        return None
    return Placed(text, stage, stage, {"records": [r.id for r in found]}, why=why)


@dataclass
class DoneClaims:
    """The user saying an open task is done: both sides said, and a yes asked for; when
    several fit, they are named and the user's pick ("the second one", "the one for mum")
    marks that one done."""

    store: Store | None
    ttl_s: float
    name: str = "done"
    choices: Choices = field(init=False)

    def __post_init__(self) -> None:
        self.choices = Choices(self.ttl_s)

    def acts(self, text: str) -> bool:
        # It may ask (storing an approval) or act on a pick.
        return claim(text) is not None or self.choices.waiting()

    def _fitting(self, text: str) -> list[TaskRow]:
        said = claim(text)
        if said is None or self.store is None:
            return []
        return fitting(said, self.store.tasks.find(status=("open", "blocked")))

    async def answer(
        self, text: str, session_id: str, cancel: asyncio.Event | None, now: datetime | None
    ) -> Decision | None:
        if self.store is None or not session_id:
            return None
        picked = self.choices.picked(session_id, text)
        self.choices.close(session_id)  # answered, or the user moved on
        try:
            if picked is not None:
                return self._marked(*picked)
            tasks = self._fitting(text)
        except (StoreError, sqlite3.Error, NotFoundError):
            return None  # the model hears the words; nothing is changed either way
        if not tasks:
            return None
        if len(tasks) > 1:
            named = tasks[:CHOICES]
            self.choices.ask(session_id, [t.id for t in named], [t.title for t in named])
            names = join_spoken([quoted(t.title) for t in named], len(tasks))
            fit = f"{count_words(len(tasks), 'open task').capitalize()} fit that: {names}."
            return Answered(
                self.name, StateResult(f"{fit} Which one is done?", "done", [t.id for t in named])
            )
        task = tasks[0]
        told = claim(text)
        if told is not None and told.command:
            # Told to mark the one task that fits: done, with nothing to ask.
            try:
                return self._marked(task.id, task.title)
            except (StoreError, sqlite3.Error, NotFoundError):
                return None
        approval = self.store.approvals.request(
            "complete_task",
            {"task_id": task.id},
            session_id,
            ttl_s=self.ttl_s,
            target=f"mark the task {quoted(task.title)} done",
        )
        text = f"Your task {quoted(task.title)} is still open. Shall I mark it done?"
        return Answered(self.name, StateResult(text, "done", [task.id, approval]))

    def _marked(self, task_id: str, title: str) -> Answered:
        """Mark the task done and say so by its words."""
        assert self.store is not None
        done = self.store.tasks.complete(task_id)
        return Answered(self.name, StateResult(f"Marked {quoted(title)} done.", "done", [done.id]))

    def place(self, text: str, session_id: str, now: datetime | None) -> Placed | None:
        picked = self.choices.picked(session_id, text)
        why = "the user says an open task is done, or names one to mark"
        return placed_choice(self.name, text, picked, lambda: self._fitting(text), why)


@dataclass
class StatedFacts:
    """The user stating a value that a current note states otherwise ("my sister lives in
    Porto" against "My sister lives in Lisbon"): both said, and a yes asked for before the
    note is replaced (`memory.provenance`'s subject-and-value rule)."""

    store: Store | None
    ttl_s: float
    name: str = "fact"

    def acts(self, text: str) -> bool:
        return bool(_claims(text, None))  # it may ask, which stores an approval

    def _contradicted(self, text: str, now: datetime | None) -> tuple[NoteRow, str] | None:
        """The current note the words contradict, and the words as a note would hold them."""
        if self.store is None or "?" in text:
            return None
        for said in _claims(text, now):
            hits = self.store.notes.search_fts(said, limit=10, written_only=True)
            rows = [row for h in hits if (row := self.store.notes.get(h.id)) is not None]
            live = [r for r in rows if not r.expired()]
            old = self.store.provenance.contradicted(said, live)
            if old is not None:
                return old, said
        return None

    async def answer(
        self, text: str, session_id: str, cancel: asyncio.Event | None, now: datetime | None
    ) -> Decision | None:
        if self.store is None or not session_id:
            return None
        try:
            found = self._contradicted(text, now)
            if found is None:
                return None
            old, said = found
            approval = self.store.approvals.request(
                "save_note",
                {"text": said, "replaces": old.id},
                session_id,
                ttl_s=self.ttl_s,
                target=f"note {quoted(said)} in place of {quoted(old.text)}",
            )
        except (StoreError, sqlite3.Error):
            return None  # the model hears the words; nothing is changed either way
        answer = f"Your notes say {quoted(old.text)}. Shall I note {quoted(said)} instead?"
        return Answered(self.name, StateResult(answer, "fact", [old.id, approval]))

    def place(self, text: str, session_id: str, now: datetime | None) -> Placed | None:
        try:
            contradicted = self._contradicted(text, now)
        except (StoreError, sqlite3.Error):
            return None
        if contradicted is None:
            return None
        found: dict[str, object] = {"note": contradicted[0].id}
        return Placed(text, self.name, "fact", found, why="the words contradict a current note")


def _claims(text: str, now: datetime | None) -> list[str]:
    """The user's words as the notes that would hold them, where they state a subject's value:
    the notes the rules notice (`context.noticed`, which the turn then writes), and the words
    themselves, as said."""
    noticed = [n.text for n in notice(text, now or datetime.now().astimezone())]
    said = " ".join(text.split())
    said = said[:1].upper() + said[1:]
    return [c.rstrip(".!") for c in (*noticed, said) if stated(c) is not None]


@dataclass
class ForgetNote:
    """ "Delete the note about the gate code" when several notes fit: they are named, and the
    user's pick says which is deleted (the pick is the yes). With one that fits, the model
    deletes it by id through its own approval, which names the note's words."""

    store: Store | None
    ttl_s: float
    name: str = "forget"
    choices: Choices = field(init=False)

    def __post_init__(self) -> None:
        self.choices = Choices(self.ttl_s)

    def acts(self, text: str) -> bool:
        return forget.named(text) is not None or self.choices.waiting()

    def _fitting(self, text: str) -> list[NoteRow]:
        words = forget.named(text)
        if words is None or self.store is None:
            return []
        hits = self.store.notes.search_fts(" ".join(words), limit=20, written_only=True)
        rows = [row for h in hits if (row := self.store.notes.get(h.id)) is not None]
        return forget.fitting(words, rows)

    async def answer(
        self, text: str, session_id: str, cancel: asyncio.Event | None, now: datetime | None
    ) -> Decision | None:
        if self.store is None or not session_id:
            return None
        picked = self.choices.picked(session_id, text)
        self.choices.close(session_id)
        try:
            if picked is not None:
                # Asked which one to delete, the user named it: that answer is the yes.
                self.store.notes.delete(picked[0])
                said = f"Deleted the note {quoted(picked[1])}."
                return Answered(self.name, StateResult(said, "forget", [picked[0]]))
            notes = self._fitting(text)
            if len(notes) < 2:
                # None or one: the model's, which deletes by id through its approval.
                return None
            shown = notes[:CHOICES]
            self.choices.ask(session_id, [n.id for n in shown], [n.text for n in shown])
        except (StoreError, sqlite3.Error, NotFoundError):
            return None
        names = join_spoken([quoted(n.text) for n in shown], len(notes))
        fit = f"{count_words(len(notes), 'note').capitalize()} fit that: {names}."
        asked = f"{fit} Which one shall I delete?"
        return Answered(self.name, StateResult(asked, "forget", [n.id for n in shown]))

    def place(self, text: str, session_id: str, now: datetime | None) -> Placed | None:
        picked = self.choices.picked(session_id, text)
        why = "asks to delete a note by its words, and several fit"
        several = lambda: notes if len(notes := self._fitting(text)) > 1 else []  # noqa: E731
        return placed_choice(self.name, text, picked, several, why)


@dataclass
class AnswerChain:
    """The answerers before the model, in order; `decide` returns the first that answers."""

    answerers: list[Answerer]

    @classmethod
    def standard(
        cls,
        store: Store | None,
        resolver: StateResolver | None,
        run_approved: RunApproved,
        stages: Sequence[str] = STAGES,
    ) -> AnswerChain:
        """The chain with the named stages, in the fixed order of `STAGES`."""
        made: dict[str, Answerer] = {
            "reminder": ReminderCommands(store),
            "approval": Approvals(store, run_approved),
        }
        if resolver is not None:
            made["state"] = StatePath(resolver)
            ttl = resolver.settings.tools.approval_ttl_s
            made["done"] = DoneClaims(store, ttl)
            made["fact"] = StatedFacts(store, ttl)
            made["forget"] = ForgetNote(store, ttl)
        return cls([made[name] for name in STAGES if name in stages and name in made])

    @property
    def resolver(self) -> StateResolver | None:
        for answerer in self.answerers:
            if isinstance(answerer, StatePath):
                return answerer.resolver
        return None

    async def decide(
        self,
        text: str,
        session_id: str,
        *,
        cancel: asyncio.Event | None = None,
        now: datetime | None = None,
    ) -> Decision:
        for answerer in self.answerers:
            found = await answerer.answer(text, session_id, cancel, now)
            if found is not None:
                return found
        return TO_MODEL

    def place(self, text: str, session_id: str = "", *, now: datetime | None = None) -> Placed:
        """Which stage would answer `text`, and why; read only (`python -m bot route`)."""
        last: Placed | None = None
        for answerer in self.answerers:
            found = answerer.place(text, session_id, now)
            if found is not None and found.stage != "model":
                return found
            last = found or last
        return last or Placed(text, "model", why="no stage answers it")

    def may_act(self, text: str) -> bool:
        """`text` may be a reminder command or a yes or no to an approval: stages that change
        the store, so nothing is ever prepared for them ahead of the turn."""
        return any(answerer.acts(text) for answerer in self.answerers)

    async def preview(
        self, text: str, session_id: str, *, now: datetime | None = None
    ) -> StateResult | None:
        """The state path's answer to `text`, read only, for an answer prepared while the
        user pauses; None where it does not answer or an earlier stage may act (`may_act`)."""
        state = next((a for a in self.answerers if isinstance(a, StatePath)), None)
        if state is None or self.may_act(text):
            return None
        found = await state.answer(text, session_id, None, now)
        return found.result if isinstance(found, Answered) else None
