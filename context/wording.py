"""How the state path says numbers, lists, times and dates: short, and easy to hear."""

from __future__ import annotations

from datetime import datetime

from memory.rows import from_iso

_WORDS = ["no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"]


def count_words(n: int, singular: str, plural: str | None = None) -> str:
    word = _WORDS[n] if 0 <= n < len(_WORDS) else f"{n:,}"
    return f"{word} {singular if n == 1 else plural or singular + 's'}"


def join_spoken(items: list[str], total: int | None = None) -> str:
    """ "a", "a and b", "a, b and c", plus "and N more" when `total` exceeds what is named."""
    names = [i.strip().rstrip(".") for i in items]
    more = (total or len(names)) - len(names)
    if more > 0:
        return ", ".join(names) + f", and {more:,} more"
    if len(names) <= 1:
        return "".join(names)
    return ", ".join(names[:-1]) + " and " + names[-1]


def quoted(text: str, limit: int = 80) -> str:
    """`text` in single quotes, on one line, cut at a word with an ellipsis past `limit`
    characters: how a note's text or a task's title is named aloud."""
    said = " ".join(text.split())
    if len(said) > limit:
        said = said[:limit].rsplit(" ", 1)[0].rstrip(",;:") + "…"
    return f"'{said}'"


def spoken_time(moment: datetime) -> str:
    hour = moment.hour % 12 or 12
    suffix = "AM" if moment.hour < 12 else "PM"
    return f"{hour} {suffix}" if moment.minute == 0 else f"{hour}:{moment.minute:02d} {suffix}"


def spoken_date(moment: datetime) -> str:
    return f"{moment:%A}, {moment:%B} {moment.day}, {moment.year}"


def spoken_when(due_iso: str, now: datetime) -> str:
    due = from_iso(due_iso).astimezone(now.tzinfo)
    days = (due.date() - now.date()).days
    day = "today" if days == 0 else "tomorrow" if days == 1 else f"on {due:%A}, {due:%B} {due.day}"
    if days < 0:
        day = f"on {due:%B} {due.day}"
    return f"{day} at {spoken_time(due)}"
