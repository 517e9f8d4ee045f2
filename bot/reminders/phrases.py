"""Spoken reminder commands answered without the model: timers, reminders in so many minutes,
snooze, done, cancel.

"Set a timer for five minutes", "remind me in ten minutes to call Ana", "snooze it ten
minutes", "done" and "cancel the reminder about the dentist" are short, frequent and easy
for a small model to get wrong, so they are matched here, exactly, and act on the table.
"It" and a bare "done" mean the reminder Annie last said in this session; with none
waiting, a bare "done" is not taken as a command (it goes on to the model). Anything that
does not match returns None.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from datetime import timedelta

from bot.reminders.announcement import clock_time
from context.state import StateResult
from context.wording import count_words
from memory.db import NotFoundError, StoreError
from memory.rows import ReminderRow, utc_now
from memory.store import Store

INTENT = "reminder"
# A cancel that fits several reminders: they are named and the user asked which one.
CHOOSE = "reminder_choice"
DEFAULT_SNOOZE_MIN = 10.0

_SMALL = "zero one two three four five six seven eight nine ten eleven twelve thirteen"
_SMALL += " fourteen fifteen sixteen seventeen eighteen nineteen"
_NUMBERS = {w: i for i, w in enumerate(_SMALL.split())}
_NUMBERS.update({"a": 1, "an": 1, "a couple of": 2, "couple of": 2, "a few": 3})
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "ninety": 90}
_UNITS = {"second": 1, "sec": 1, "minute": 60, "min": 60, "hour": 3600, "hr": 3600}
_NUMBER = (
    r"(?:\d+(?:\.\d+)?|a couple of|couple of|a few|(?:"
    + "|".join(_TENS)
    + r")(?:[ -](?:"
    + "|".join(k for k in _NUMBERS if " " not in k)
    + r"))?|"
    + "|".join(k for k in _NUMBERS if " " not in k)
    + r")"
)
_PART = re.compile(rf"({_NUMBER})\s*(seconds?|secs?|minutes?|mins?|hours?|hrs?)\b")
_HALF_HOUR = re.compile(r"\bhalf an hour\b")
_LEAD = re.compile(r"^(?:(?:hey |ok |okay )?annie[, ]+|ok(?:ay)?[, ]+|please[, ]+)+", re.IGNORECASE)

_TIMER = re.compile(
    r"^(?:set|start|make)(?: me)? (?:a |an |the )?timer (?:for |of )?(?P<rest>.+)$", re.IGNORECASE
)
_TIMER_SHORT = re.compile(r"^(?:set |start )?(?:a |an )?(?P<rest>.+?) timer$", re.IGNORECASE)
_SNOOZE = re.compile(
    r"^(?:snooze|remind me again|remind me later)"
    r"(?: (?:it|that|this|the reminder|the timer))?(?:(?: for| by| in)? (?P<rest>.+))?$",
    re.IGNORECASE,
)
_REMIND_IN = re.compile(r"^remind me in (?P<dur>.+?) to (?P<what>.+)$", re.IGNORECASE)
_REMIND_TO = re.compile(r"^remind me to (?P<what>.+) in (?P<dur>.+)$", re.IGNORECASE)
_DONE = re.compile(
    r"^(?:(?:it'?s |i'?m |i am |all )?done|(?:mark )?(?:it|that) (?:as )?done|got it|"
    r"dismiss(?: it)?|thanks,? (?:i'?m )?done|i did it|stop the timer)$",
    re.IGNORECASE,
)
_CANCEL = re.compile(
    r"^(?:cancel|delete|remove|forget)(?: the| my| that)? (?:reminder|timer)"
    r"(?: (?:about|for|to|called|on) (?P<what>.+))?$",
    re.IGNORECASE,
)
_CANCEL_NAMED = re.compile(
    r"^(?:cancel|delete|remove)(?: the| my)? (?P<what>.+?) (?:reminder|timer)$", re.IGNORECASE
)


def _number(word: str) -> float:
    word = word.strip()
    if word in _NUMBERS:
        return float(_NUMBERS[word])
    for tens, value in _TENS.items():
        if word.startswith(tens):
            rest = word[len(tens) :].strip(" -")
            return float(value + (_NUMBERS.get(rest, 0) if rest else 0))
    return float(word)


def parse_duration(text: str) -> float | None:
    """Seconds in "ten minutes", "1 hour 20 minutes", "half an hour", "90 seconds"; None if
    the whole phrase is not a duration."""
    phrase = re.sub(r"\b(?:and|from now|now)\b", " ", text.lower()).strip(" .!?")
    seconds = 0.0
    if _HALF_HOUR.search(phrase):
        seconds += 1800
        phrase = _HALF_HOUR.sub(" ", phrase)
    matched = list(_PART.finditer(phrase))
    for m in matched:
        seconds += _number(m.group(1)) * _UNITS[m.group(2).rstrip("s")]
    leftover = _PART.sub(" ", phrase).strip(" ,")
    if leftover or seconds <= 0:
        return None
    return seconds


def spoken_duration(seconds: float) -> str:
    whole = round(seconds)
    parts = []
    for size, name in ((3600, "hour"), (60, "minute"), (1, "second")):
        count, whole = divmod(whole, size)
        if count:
            parts.append(f"{count} {name}{'' if count == 1 else 's'}")
    return " and ".join(parts) or "0 seconds"


def normalize(text: str) -> str:
    # Recognizers punctuate freely ("Snooze it, ten minutes."): commas carry no meaning here.
    # Case is kept for what the user asked to be reminded of; the patterns ignore it.
    flat = re.sub(r"[\s,]+", " ", text).strip(" .!?")
    return _LEAD.sub("", flat).strip(" .!?,")


def _answer(text: str, *ids: str) -> StateResult:
    return StateResult(text, INTENT, list(ids))


def _names(rows: list[ReminderRow]) -> str:
    """The reminders by their words and times, as they are said (never by id)."""
    return "; ".join(f"{r.text}, at {clock_time(r.due)}" for r in rows)


_COMMANDS = (_TIMER, _TIMER_SHORT, _SNOOZE, _REMIND_IN, _REMIND_TO, _DONE, _CANCEL, _CANCEL_NAMED)


def may_be_command(text: str) -> bool:
    """`text` has the shape of a reminder command (which `resolve` would act on); nothing is
    read or changed. Work prepared ahead of a turn leaves these alone."""
    said = normalize(text)
    return any(pattern.match(said) for pattern in _COMMANDS)


def resolve(text: str, store: Store, session_id: str) -> StateResult | None:
    """The command's answer (it has acted already), or None: not a reminder command."""
    started = time.perf_counter()
    try:
        result = _resolve(normalize(text), store, session_id)
    except StoreError as exc:
        # Only a matched command touches the store: say it failed, never pretend it worked.
        result = _answer(f"I could not change the reminders, so nothing was changed: {exc}")
    except (NotFoundError, ValueError) as exc:
        result = _answer(f"Nothing was changed: {exc}")
    if result is not None:
        result.latency_ms = (time.perf_counter() - started) * 1000
    return result


@dataclass(frozen=True)
class Command:
    """A reminder command read from the words, before anything acts on it."""

    kind: str  # "timer" | "snooze" | "remind" | "done" | "cancel"
    seconds: float = 0.0
    what: str = ""


def parse(said: str) -> Command | None:
    """The command normalized `said` gives, or None (not one, or a duration not understood)."""
    timer = _TIMER.match(said) or _TIMER_SHORT.match(said)
    if timer is not None:
        rest, _, label = timer.group("rest").partition(" called ")
        seconds = parse_duration(rest)
        return Command("timer", seconds, label) if seconds is not None else None
    snooze = _SNOOZE.match(said)
    if snooze is not None:
        rest = snooze.group("rest")
        seconds = parse_duration(rest) if rest else DEFAULT_SNOOZE_MIN * 60
        return Command("snooze", seconds) if seconds is not None else None
    remind = _REMIND_IN.match(said) or _REMIND_TO.match(said)
    if remind is not None:
        seconds = parse_duration(remind.group("dur"))
        # None: "remind me to ... in March" is a date, for the model.
        return Command("remind", seconds, remind.group("what").strip()) if seconds else None
    if _DONE.match(said):
        return Command("done")
    cancel = _CANCEL.match(said) or _CANCEL_NAMED.match(said)
    if cancel is not None:
        return Command("cancel", what=(cancel.group("what") or "").strip())
    return None


def place(text: str, store: Store, session_id: str) -> tuple[str, dict[str, object]] | None:
    """The command `resolve` would act on, and its slots, read only; None where it would not
    answer (not a command, or a bare "done" with no reminder just said)."""
    command = parse(normalize(text))
    if command is None:
        return None
    if command.kind == "done" and store.reminders.last_announced(session_id) is None:
        return None
    slots: dict[str, object] = {}
    if command.seconds:
        slots["seconds"] = command.seconds
    if command.what:
        slots["what"] = command.what
    return command.kind, slots


def _resolve(said: str, store: Store, session_id: str) -> StateResult | None:
    command = parse(said)
    if command is None:
        return None
    if command.kind == "timer":
        rid = store.reminders.add_timer(command.seconds, command.what)
        return _answer(f"Timer set for {spoken_duration(command.seconds)}.", rid)
    if command.kind == "snooze":
        target = store.reminders.last_announced(session_id)
        if target is None:
            return _answer("There's no reminder to snooze right now.")
        row = store.reminders.snooze(target.id, command.seconds / 60)
        return _answer(
            f"Snoozed for {spoken_duration(command.seconds)}: {row.text}. "
            f"I'll say it again at {clock_time(row.due)}.",
            row.id,
        )
    if command.kind == "remind":
        rid = store.reminders.add(command.what, utc_now() + timedelta(seconds=command.seconds))
        return _answer(
            f"I'll remind you in {spoken_duration(command.seconds)}: {command.what}.", rid
        )
    if command.kind == "done":
        target = store.reminders.last_announced(session_id)
        if target is None:
            return None  # "done" with nothing just said: not ours to guess
        row = store.reminders.done(target.id)
        return _answer(f"Marked done: {row.text}.", row.id)
    return _cancel(command.what, store, session_id)


def _cancel(what: str, store: Store, session_id: str) -> StateResult:
    if what.strip():
        rows = store.reminders.matching(what)
        about = f" about {what.strip()}"
    else:
        last = store.reminders.last_announced(session_id)
        rows = [last] if last is not None else store.reminders.open()
        about = ""
    if not rows:
        return _answer(f"There's no open reminder{about}.")
    if len(rows) > 1:
        named = f"{count_words(len(rows), 'reminder').capitalize()}{about} are open"
        return StateResult(
            f"{named}: {_names(rows[:3])}. Which one?", CHOOSE, [r.id for r in rows[:3]]
        )
    return cancel_one(store, rows[0].id, about)


def cancel_one(store: Store, reminder_id: str, about: str = "") -> StateResult:
    """Cancel one reminder and say which, by its words."""
    try:
        row = store.reminders.cancel(reminder_id)
    except NotFoundError:
        return _answer(f"There's no open reminder{about}.")
    return _answer(f"Cancelled the reminder: {row.text}.", row.id)
