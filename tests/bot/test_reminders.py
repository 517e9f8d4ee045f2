"""Reminders that fire, on the session loop: the scheduler reads the table (so a restart loses
nothing), a session says what fell due, and the spoken commands, the tools and the command
line act on the table."""

from __future__ import annotations

import asyncio
import io
import json
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest

from bot.cli import main
from bot.commands.chat import chat
from bot.reminders.phrases import parse_duration
from bot.reminders.scheduler import ReminderScheduler
from bot.runtime import Runtime
from bot.tools.base import ToolEnv
from bot.tools.registry import default_registry
from bot.turn.events import (
    AnswerClosed,
    Event,
    ReminderEvent,
    RemindersDue,
    StateAnswer,
    TurnDone,
)
from bot.turn.inbox import SayReminders, UserMessage
from bot.turn.session import Session
from config import load_settings
from memory.rows import from_iso, utc_now
from memory.store import Store
from models.base import Tokenizer
from models.fakes import ScriptedLLM
from tests.bot.conftest import collect, make_runtime


def said(events: list[Event]) -> str:
    return " ".join(e.text for e in events if isinstance(e, StateAnswer))


async def test_the_scheduler_fires_from_the_table_after_a_restart(
    tmp_path: Path, tokenizer: Tokenizer
) -> None:
    path = tmp_path / "annie.db"
    # One process writes the reminders and goes away.
    with Store(path) as before:
        missed = before.reminders.add("feed the cat", utc_now() - timedelta(minutes=5))
        # Far enough ahead that starting the next process (a second or more on a busy
        # machine) does not make it missed too.
        soon = before.reminders.add("call the dentist", utc_now() + timedelta(seconds=4))

    # The next one starts: what fell due while it was down is said first, as missed...
    llm = ScriptedLLM(tokenizer, [])
    runtime = make_runtime(llm, tmp_path)
    runtime.reminders.poll_s = 30.0  # the wake-up comes from the due time, not from polling
    runtime.reminders.start()
    session = runtime.open_session()
    seen = Seen(session)
    try:
        opening = await session.announce("open")
        first = opening[0]
        assert isinstance(first, ReminderEvent) and first.away
        assert first.text.startswith("While you were away: feed the cat (due at ")
        assert [r["id"] for r in first.reminders] == [missed]

        # ...and the one still ahead fires on time, from the table.
        await wait_until(lambda: seen.told)
        row = runtime.store.reminders.get(soon)
        assert row is not None and row.status == "fired" and row.fired_at is not None
        late = (from_iso(row.fired_at) - from_iso(row.due)).total_seconds()
        assert 0 <= late < 0.5, late
        live = await session.announce("live")
        assert isinstance(live[0], ReminderEvent) and not live[0].away
        assert live[0].text == "Reminder: call the dentist."
        # Annie's words are in the conversation, so "snooze it" has something to refer to.
        assert session.conv.items[-1].content == "Reminder: call the dentist."
        assert runtime.store.reminders.last_announced(session.id) == runtime.store.reminders.get(
            soon
        )
        assert await session.announce("again") == []  # said once
        assert llm.prompts == []  # none of this needed the model
    finally:
        await runtime.close()
    assert not runtime.reminders.running


async def test_a_reminder_due_during_an_answer_is_said_after_it(
    tmp_path: Path, tokenizer: Tokenizer
) -> None:
    # The answer stalls after a few tokens until the reminder has fallen due: it is due
    # during the answer however slow the machine.
    llm = ScriptedLLM(
        tokenizer, ["Here is a rather long answer that keeps going " * 4], stall_after_tokens=5
    )
    runtime = make_runtime(llm, tmp_path)
    runtime.reminders.start()
    session = runtime.open_session()
    order: list[str] = []

    async def front_end() -> None:
        # What a front end does on the session's inbox: a reminder that falls due is said as
        # a turn of its own, which waits for the answer in progress.
        while True:
            event = await session.outbox.get()
            if isinstance(event, RemindersDue):
                order.append("due")
                llm.release.set()
                session.send(SayReminders("the reminder"))
            elif isinstance(event, TurnDone):
                order.append("answer done")
            elif isinstance(event, ReminderEvent):
                order.append("reminder")
            elif isinstance(event, AnswerClosed) and event.turn_id == "the reminder":
                return

    try:
        runtime.store.reminders.add("take the bread out", utc_now() + timedelta(seconds=0.3))
        session.send(UserMessage("Tell me a story.", "the story"))
        await asyncio.wait_for(front_end(), 60)
        # Due during the answer, said after it.
        assert order == ["due", "answer done", "reminder"]
        # The announcement came after the answer in the conversation too.
        kinds = [i.kind for i in session.conv.items]
        assert kinds[-1] == "assistant" and session.conv.items[-1].content.startswith("Reminder")
    finally:
        await runtime.close()


async def test_spoken_commands_set_a_timer_snooze_done_and_cancel(
    tmp_path: Path, tokenizer: Tokenizer
) -> None:
    llm = ScriptedLLM(tokenizer, [])
    runtime = make_runtime(llm, tmp_path)
    session = runtime.open_session()
    store = runtime.store
    try:
        start = utc_now()
        answer = said(await collect(session, "Set a timer for five minutes."))
        assert answer == "Timer set for 5 minutes."
        timer = store.reminders.open()[0]
        assert timer.kind == "timer" and timer.duration_s == 300
        assert 299 <= (from_iso(timer.due) - start).total_seconds() <= 301

        # "Done" with nothing just said is not a command: nothing changes.
        assert not said(await collect(session, "done")).startswith("Marked done")

        dentist = store.reminders.add("call the dentist", utc_now())
        spoken = await session.announce()
        assert isinstance(spoken[0], ReminderEvent)
        assert spoken[0].text == "Reminder: call the dentist."
        before = utc_now()
        answer = said(await collect(session, "Snooze it, ten minutes."))
        assert answer.startswith("Snoozed for 10 minutes: call the dentist.")
        row = store.reminders.get(dentist)
        assert row is not None and row.status == "scheduled"
        assert 599 <= (from_iso(row.due) - before).total_seconds() <= 601

        store.reminders.fire_due(from_iso(row.due))
        await session.announce()
        assert said(await collect(session, "Done.")) == "Marked done: call the dentist."
        assert store.reminders.get(dentist).status == "done"  # type: ignore[union-attr]

        store.reminders.add("dentist appointment at nine", utc_now() + timedelta(days=1))
        answer = said(await collect(session, "Cancel the reminder about the dentist"))
        assert answer == "Cancelled the reminder: dentist appointment at nine."
        answer = said(await collect(session, "cancel the reminder about the plumber"))
        assert answer == "There's no open reminder about the plumber."
        assert [r.kind for r in store.reminders.open()] == ["timer"]
        answer = said(await collect(session, "Remind me in 20 minutes to call Ana."))
        assert answer == "I'll remind you in 20 minutes: call Ana."
        assert [r.text for r in store.reminders.open()] == ["5 minute timer", "call Ana"]

        # Two fit: both named by their words and times, never by id, and the reply picks one.
        store.reminders.add("call Ana about the party", utc_now() + timedelta(hours=2))
        answer = said(await collect(session, "Cancel the reminder about Ana"))
        assert answer.startswith("Two reminders about Ana are open: call Ana, at ")
        assert answer.endswith("Which one?") and "rem-" not in answer
        answer = said(await collect(session, "the one about the party"))
        assert answer == "Cancelled the reminder: call Ana about the party."
        assert [r.text for r in store.reminders.open()] == ["5 minute timer", "call Ana"]
        # Only the bare "done" with nothing said went on to the model.
        assert len(llm.prompts) == 1 and "<|im_start|>user\ndone<|im_end|>" in llm.prompts[0]
    finally:
        await runtime.close()


@pytest.mark.parametrize(
    ("phrase", "seconds"),
    [
        ("five minutes", 300),
        ("10 min", 600),
        ("an hour and 20 minutes", 4800),
        ("half an hour", 1800),
        ("twenty-five seconds", 25),
        ("the dentist", None),
    ],
)
def test_durations(phrase: str, seconds: float | None) -> None:
    assert parse_duration(phrase) == seconds


async def test_the_tools_snooze_complete_and_cancel() -> None:
    registry = default_registry()
    store = Store()
    ctx = ToolEnv(settings=load_settings(), store=store, session_id="sess-1")
    out = await registry.get("set_timer").run({"minutes": 1, "seconds": 30}, ctx)  # type: ignore[union-attr]
    assert out.ok and out.content.startswith("Timer rem-1 set for 1 minute and 30 seconds")
    rid = store.reminders.add("stretch", utc_now())
    store.reminders.fire_due()
    store.reminders.mark_announced([rid], "sess-1")
    out = await registry.get("snooze_reminder").run({"minutes": 5}, ctx)  # type: ignore[union-attr]
    assert out.ok and store.reminders.get(rid).status == "scheduled"  # type: ignore[union-attr]
    out = await registry.get("complete_reminder").run({"reminder_id": rid}, ctx)  # type: ignore[union-attr]
    assert out.ok and store.reminders.get(rid).status == "done"  # type: ignore[union-attr]
    out = await registry.get("cancel_reminder").run({"about": "timer"}, ctx)  # type: ignore[union-attr]
    assert not out.ok  # "timer" alone names nothing: the model must give an id
    out = await registry.get("cancel_reminder").run({"reminder_id": "rem-1"}, ctx)  # type: ignore[union-attr]
    assert out.ok and store.reminders.get("rem-1").status == "cancelled"  # type: ignore[union-attr]
    out = await registry.get("complete_reminder").run({}, ctx)  # type: ignore[union-attr]
    assert not out.ok and "no reminder was said" in out.content


def test_the_command_line_adds_lists_and_completes(
    annie_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    start = time.time()
    assert main(["reminders", "add", "call the dentist", "--at", "+00:20"]) == 0
    assert capsys.readouterr().out.startswith("rem-1  [scheduled]  ")
    assert main(["reminders", "add", "renew passport", "--at", "2026-09-01T15:30"]) == 0
    capsys.readouterr()
    assert main(["reminders", "list", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["text"] for r in rows] == ["renew passport", "call the dentist"]
    assert 19 <= from_iso(rows[1]["due"]).timestamp() - start <= 22
    assert main(["reminders", "done", "rem-1"]) == 0
    assert capsys.readouterr().out.startswith("rem-1  [done]")
    assert main(["reminders", "list"]) == 0
    assert "call the dentist" not in capsys.readouterr().out
    assert main(["reminders", "add", "x", "--at", "soon"]) == 2
    assert "is not a time" in capsys.readouterr().err
    assert main(["reminders", "done", "rem-9"]) == 2
    assert "no reminder rem-9" in capsys.readouterr().err


def test_a_runtime_without_a_loop_does_not_schedule(tmp_path: Path, tokenizer: Tokenizer) -> None:
    runtime = Runtime(load_settings(), llm=ScriptedLLM(tokenizer, []), store=Store())
    assert not runtime.reminders.running
    with pytest.raises(RuntimeError):
        runtime.reminders.start()  # needs the running loop it will live on


async def test_the_terminal_chat_opens_with_what_fell_due_and_prints_timers(
    tmp_path: Path, tokenizer: Tokenizer
) -> None:
    runtime = make_runtime(ScriptedLLM(tokenizer, []), tmp_path)
    runtime.store.reminders.add("feed the cat", utc_now() - timedelta(minutes=1))
    # The second line waits a moment, so the one-second timer falls due between turns.
    lines = ["set a timer for 1 second\n", "/quit\n"]

    class SlowInput(io.StringIO):
        def readline(self, size: int | None = -1) -> str:
            if len(lines) == 1:
                time.sleep(2.0)
            return lines.pop(0) if lines else ""

    out = io.StringIO()
    assert await chat(inp=SlowInput(), out=out, runtime=runtime) == 0
    text = out.getvalue()
    away = text.index("annie> [reminder] While you were away: feed the cat")
    assert away < text.index("you>")  # before anything else
    assert "Timer set for 1 second." in text
    assert "annie> [reminder] Time's up: your 1 second timer." in text
    assert not runtime.reminders.running


async def test_a_reminder_written_by_another_process_is_picked_up(tmp_path: Path) -> None:
    path = tmp_path / "annie.db"
    with Store(path) as serving, Store(path) as command_line:
        fired: list[str] = []
        scheduler = ReminderScheduler(
            lambda: serving, lambda rows: fired.extend(r.id for r in rows), poll_s=0.2
        )
        scheduler.start()
        try:
            await asyncio.sleep(0.1)  # asleep with nothing scheduled
            # Another connection writes it (as `reminders add` would): no wake-up call comes.
            rid = command_line.reminders.add("stand up", utc_now() + timedelta(seconds=0.5))
            # Waited for, not timed: a busy machine fires it later, never not at all. How soon
            # after its time a reminder fires is a figure for the benches, not a test.
            for _ in range(600):
                if fired:
                    break
                await asyncio.sleep(0.05)
            assert fired == [rid]
            row = serving.reminders.get(rid)
            assert row is not None and row.fired_at is not None
            assert from_iso(row.fired_at) >= from_iso(row.due)  # never before its time
        finally:
            await scheduler.stop()


class Seen:
    """What a session said to its front end (its outbox), read as it is asked for."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.events: list[Event] = []

    @property
    def told(self) -> int:
        """How often the front end was told that reminders fell due."""
        while not self.session.outbox.empty():
            self.events.append(self.session.outbox.get_nowait())
        return sum(isinstance(e, RemindersDue) for e in self.events)


async def test_a_reminder_is_said_where_the_user_last_spoke_and_shown_on_the_others(
    tmp_path: Path, tokenizer: Tokenizer
) -> None:
    runtime = make_runtime(ScriptedLLM(tokenizer, lambda prompt: "Okay."), tmp_path)
    on_phone = runtime.open_session()
    on_laptop = runtime.open_session()
    phone, laptop = Seen(on_phone), Seen(on_laptop)

    # Before anyone speaks, both are told; the first gap says it once (announce takes only
    # the unannounced ones).
    runtime.reminders.start()
    try:
        runtime.store.reminders.add("stretch", utc_now() + timedelta(seconds=1))
        await wait_until(lambda: phone.told and laptop.told)
        first = await on_laptop.announce()
        again = await on_phone.announce()
        await collect(on_laptop, "Hello.")
        await collect(on_phone, "What's new?")  # the phone is where the user spoke last
        runtime.store.reminders.add("water the plants", utc_now() + timedelta(seconds=1))
        await wait_until(lambda: phone.told == 2)
    finally:
        await asyncio.wait_for(runtime.reminders.stop(), 10)

    assert [e.text for e in first if isinstance(e, ReminderEvent)] == ["Reminder: stretch."]
    assert again == []
    assert laptop.told == 1  # not told to say it
    elsewhere = [e for e in laptop.events if isinstance(e, ReminderEvent)]
    assert [(e.text, e.elsewhere) for e in elsewhere] == [("Reminder: water the plants.", True)]
    assert not [e for e in phone.events if isinstance(e, ReminderEvent)]
    said = await on_phone.announce()
    assert [e.text for e in said if isinstance(e, ReminderEvent)] == ["Reminder: water the plants."]
    await on_phone.close()
    await on_laptop.close()


async def wait_until(check: Callable[[], object], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.05)
