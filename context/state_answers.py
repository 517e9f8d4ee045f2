"""The state path's answers about records: tasks, approvals, the schedule, and notes.

Each renderer reads the store's typed tables and returns one short spoken answer with the
ids of the records it named. The state path's rules are applied literally: pending means
`pending != "none"` (and not done), an empty pending set is "Nothing needs you right now.",
completed work is never used as padding. These functions let a store failure propagate;
the resolver turns it into "I can't read ..." so absence of data never becomes "nothing".
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING

from context.certainty import sure
from context.recall import Asked, named
from context.state_vocab import Day
from context.user_name import PHRASES, name_in
from context.wording import count_words, join_spoken, spoken_time, spoken_when
from memory import approvals
from memory.fts import STOPWORDS
from memory.rows import ApprovalRow, Hit, TaskRow, from_iso

if TYPE_CHECKING:
    from memory.store import Store

NOTHING_TO_APPROVE = "Nothing is waiting for your approval."
NOTHING_PENDING = "Nothing needs you right now."
# How many items an answer names before "and N more": enough to act on, short enough to hear.
SPOKEN_ITEMS = 3


@dataclass
class StateResult:
    text: str
    intent: str
    sources: list[str] = field(default_factory=list)
    latency_ms: float = 0.0
    spoken: str = ""  # what the voice says instead of `text`, when set


def approvals_answer(store: Store, now: datetime, session_id: str | None) -> StateResult:
    waiting = store.approvals.pending(now)
    if not waiting:
        return StateResult(NOTHING_TO_APPROVE, "approvals")
    text = approval_sentence(waiting, session_id)
    return StateResult(text, "approvals", [a.id for a in waiting[:SPOKEN_ITEMS]])


def pending_answer(store: Store, now: datetime, session_id: str | None) -> StateResult:
    summary = store.tasks.pending_summary(limit=SPOKEN_ITEMS)
    waiting = store.approvals.pending(now)
    total = sum(count for count, _ in summary.values())
    if total == 0 and not waiting:
        return StateResult(NOTHING_PENDING, "pending")
    sources: list[str] = [a.id for a in waiting[:SPOKEN_ITEMS]]
    # An approval is the most urgent thing on the user: it expires if left unanswered.
    parts: list[str] = [approval_sentence(waiting, session_id)] if waiting else []
    for party, plural_verb, singular_verb in _LANES:
        count, rows = summary[party]
        if count == 0:
            if party == "user" and not waiting:
                parts.append("Nothing is waiting on you.")
            continue
        parts.append(_lane_sentence(count, rows, plural_verb, singular_verb))
        sources.extend(r.id for r in rows)
    return StateResult(" ".join(parts), "pending", sources)


_LANES = (
    ("user", "need you", "needs you"),
    ("assistant", "are waiting on me", "is waiting on me"),
    ("external", "are waiting on someone else", "is waiting on someone else"),
)


def _lane_sentence(count: int, rows: list[TaskRow], plural_verb: str, singular_verb: str) -> str:
    verb = singular_verb if count == 1 else plural_verb
    return f"{count_words(count, 'thing').capitalize()} {verb}: {_titles(rows, count)}."


def list_answer(store: Store) -> StateResult:
    index = store.projections.work_index(limit=SPOKEN_ITEMS)
    if index.active_count == 0 and index.blocked_count == 0:
        return StateResult("Your list is empty.", "list")
    parts: list[str] = []
    if index.active_count:
        parts.append(
            f"You have {count_words(index.active_count, 'open task')}: "
            f"{_titles(index.active, index.active_count)}."
        )
    else:
        parts.append("You have no open tasks.")
    if index.blocked_count:
        parts.append(_blocked_sentence(index.blocked, index.blocked_count))
    sources = [r.id for r in index.active] + [r.id for r in index.blocked]
    return StateResult(" ".join(parts), "list", sources)


def blocked_answer(store: Store) -> StateResult:
    """Blocked tasks, then what waits on someone else, then what waits on Annie."""
    index = store.projections.work_index(limit=SPOKEN_ITEMS)
    summary = store.tasks.pending_summary(limit=SPOKEN_ITEMS)
    parts: list[str] = []
    sources: list[str] = []
    if index.blocked_count:
        parts.append(_blocked_sentence(index.blocked, index.blocked_count))
        sources.extend(r.id for r in index.blocked)
    for party, plural_verb, singular_verb in _LANES[::-1][:2]:
        count, rows = summary[party]
        fresh = [r for r in rows if r.id not in sources]
        # A blocked task that also waits on someone was named already: say it once.
        count -= len(rows) - len(fresh)
        if count > 0:
            parts.append(_lane_sentence(count, fresh, plural_verb, singular_verb))
            sources.extend(r.id for r in fresh)
    if not parts:
        return StateResult("Nothing is blocked, and nothing is waiting on anyone.", "blocked")
    return StateResult(" ".join(parts), "blocked", sources)


def _blocked_sentence(rows: list[TaskRow], count: int) -> str:
    verb = "is" if count == 1 else "are"
    return f"{count_words(count, 'task').capitalize()} {verb} blocked: {_titles(rows, count)}."


def day_window(day: Day, now: datetime) -> tuple[datetime, datetime, str]:
    """[start, end) of the day asked about, and how to say it."""
    start = now.replace(hour=0, minute=0, second=0, microsecond=0)
    # Days are stepped at noon, then cut back to midnight, so a daylight-saving change
    # never shifts the window by an hour.
    if day == "tomorrow":
        start = (start + timedelta(days=1, hours=12)).replace(hour=0)
    days = 7 - now.weekday() if day == "week" else 1  # "this week": through Sunday
    end = (start + timedelta(days=days, hours=12)).replace(hour=0)
    return start, end, "this week" if day == "week" else day


def midnight(day: date, now: datetime) -> datetime:
    """The start of `day` in `now`'s zone."""
    return now.replace(year=day.year, month=day.month, day=day.day, hour=0, minute=0,
                       second=0, microsecond=0)  # fmt: skip


def date_window(day: date, now: datetime) -> tuple[datetime, datetime, str]:
    """[start, end) of a day named by date, and how to say it ("Friday, March 8")."""
    start = midnight(day, now)
    end = (start + timedelta(days=1, hours=12)).replace(hour=0)
    return start, end, "today" if day == now.date() else f"{day:%A}, {day:%B} {day.day}"


# A calendar event as the schedule answers say it: id, title, start, all day or not.
Event = tuple[str, str, datetime, bool]


def schedule_answer(
    store: Store, day: Day, now: datetime, events: Callable[[datetime, datetime], list[Event]]
) -> StateResult:
    if day == "overdue":
        return overdue_answer(store, now)
    if day == "upcoming":
        return next_answer(store, now)
    start, end, label = day_window(day, now)
    return window_answer(store, start, end, label, now, events(start, end), dated=day == "week")


def window_answer(
    store: Store,
    start: datetime,
    end: datetime,
    label: str,
    now: datetime,
    events: list[Event],
    *,
    dated: bool = False,
) -> StateResult:
    """What falls in [start, end): calendar events, reminders and tasks due, said for `label`
    ("today", "on Friday, December 11"); `dated` says each one's day too."""
    reminders = store.reminders.between(start, end, limit=50)
    due = store.tasks.due_between(start, end, limit=50)
    if not reminders and not due and not events:
        # "for Friday", "for next week"; a label with its own preposition ("in March", "from
        # Monday to Friday") takes none.
        when = label if label.startswith(("in ", "from ", "between ", "on ")) else f"for {label}"
        return StateResult(f"Nothing is scheduled {when}.", "schedule")

    def at(moment: datetime) -> str:
        return spoken_when(moment.isoformat(), now) if dated else f"at {spoken_time(moment)}"

    parts: list[str] = []
    if events:
        named = [
            f"{title} {'all day' if all_day else at(begins.astimezone(now.tzinfo))}"
            for _, title, begins, all_day in events[:SPOKEN_ITEMS]
        ]
        parts.append(
            f"{label[:1].upper() + label[1:]} on your calendar: {join_spoken(named, len(events))}."
        )
    if reminders:
        named = [f"{r.text} {at(from_iso(r.due).astimezone(now.tzinfo))}"
                 for r in reminders[:SPOKEN_ITEMS]]  # fmt: skip
        parts.append(
            f"{label[:1].upper() + label[1:]} you have {count_words(len(reminders), 'reminder')}: "
            f"{join_spoken(named, len(reminders))}."
        )
    if due:
        verb = "is" if len(due) == 1 else "are"
        parts.append(
            f"{count_words(len(due), 'task').capitalize()} {verb} due {label}: "
            f"{_titles(due[:SPOKEN_ITEMS], len(due))}."
        )
    sources = (
        [e[0] for e in events[:SPOKEN_ITEMS]]
        + [r.id for r in reminders[:SPOKEN_ITEMS]]
        + [t.id for t in due[:SPOKEN_ITEMS]]
    )
    return StateResult(" ".join(parts), "schedule", sources)


def next_answer(store: Store, now: datetime) -> StateResult:
    """The next scheduled thing first, then the ones after it; with nothing scheduled, the
    first task on the list, since "what's next?" still has an answer."""
    index = store.projections.work_index(now=now, limit=SPOKEN_ITEMS)
    items = index.next_scheduled
    if not items:
        if index.active:
            task = index.active[0]
            return StateResult(
                f"Nothing is scheduled. First on your list: {task.title}.", "schedule", [task.id]
            )
        return StateResult("Nothing is scheduled.", "schedule")
    first, later = items[0], items[1:]
    text = f"Next: {first.text}, {spoken_when(first.due, now)}."
    if later:
        text += " After that: " + "; ".join(f"{s.text}, {spoken_when(s.due, now)}" for s in later)
        text += "."
    return StateResult(text, "schedule", [s.id for s in items])


def overdue_answer(store: Store, now: datetime) -> StateResult:
    """Unfinished tasks past their due time and reminders that went off and are not done,
    counted, the longest overdue first."""
    tasks = store.tasks.due_between(now - timedelta(days=3650), now)
    fired = store.reminders.find("fired") + store.reminders.find("announced")
    reminders = sorted((r for r in fired if from_iso(r.due) < now), key=lambda r: r.due)
    named = [(t.due, t.title, t.id) for t in tasks if t.due] + [
        (r.due, r.text, r.id) for r in reminders
    ]
    named.sort()
    if not named:
        return StateResult("Nothing is overdue.", "schedule")
    verb = "is" if len(named) == 1 else "are"
    said = [f"{title}, due {spoken_when(due, now)}" for due, title, _ in named[:SPOKEN_ITEMS]]
    text = f"{count_words(len(named), 'thing').capitalize()} {verb} overdue: "
    return StateResult(
        text + "; ".join(said) + _more(len(named)) + ".",
        "schedule",
        [i for _, _, i in named[:SPOKEN_ITEMS]],
    )


def _more(total: int) -> str:
    return f"; and {total - SPOKEN_ITEMS:,} more" if total > SPOKEN_ITEMS else ""


_YOURS = {"my": "your", "i": "you", "me": "you", "mine": "yours", "our": "your"}


def remember_answer(
    store: Store,
    subject: str,
    needs_notes: bool,
    min_similarity: float,
    session_id: str | None = None,
) -> StateResult | None:
    """What the notes say about `subject` (their ids are the sources); None when no note is
    about it and
    the question may be general knowledge (`needs_notes`), which is then the model's.

    Only notes: what was said (`memory.episodes`) holds the user's own questions too, and "what
    do you know about black holes", asked once before, is no answer to itself. Episodes reach
    the model through the evidence lane, where it weighs them."""
    if subject.split()[-1:] in (["me"], ["myself"]):
        return about_the_user(store)
    hits, certain = notes_about(store, subject, min_similarity, gate=needs_notes)
    said = spoken_subject(store, subject)
    if not hits or not certain:
        if needs_notes:
            return None  # the model's, with the notes in its evidence lane marked as related
        if not hits:
            return StateResult(f"I have nothing noted about {said}.", "remember")
    # Said by their words; the ids go with the answer's sources, for the page.
    named = [h.text.rstrip(".") for h in hits]
    if not certain:
        # Notes near the subject are not notes about it: "Maya lives in Bristol" says nothing
        # of her allergies, and listing it "about Maya's allergies" would be a wrong answer.
        text = f"I have nothing noted about {said}. The nearest notes say: "
        return StateResult(text + "; ".join(named) + ".", "remember", [h.id for h in hits])
    text = f"About {said}, I have {count_words(len(hits), 'note')}: " + "; ".join(named) + "."
    return StateResult(text, "remember", [h.id for h in hits])


def spoken_subject(store: Store, subject: str) -> str:
    """The subject as said back: "my" becomes "your", "maya s" (as normalized) "Maya's", and a
    name the notes capitalize is capitalized."""
    said = " ".join(_YOURS.get(w, w) for w in subject.split())
    said = re.sub(r"\b(\w+) s\b", r"\1's", said)
    for name in named(store, said):
        said = re.sub(rf"\b{re.escape(name.lower())}\b", name, said)
    return said


def about_the_user(store: Store) -> StateResult:
    """ "What do you remember about me?": the notes are what Annie keeps about the user, so the
    newest of them are the answer, and none is a true "nothing yet" (the table was read)."""
    notes = store.notes.recent(SPOKEN_ITEMS)
    if not notes:
        return StateResult("I haven't noted anything about you yet.", "remember")
    named = [n.text.rstrip(".") for n in notes]
    text = "About you, my newest notes say: " + "; ".join(named) + "."
    return StateResult(text, "remember", [n.id for n in notes])


def notes_about(
    store: Store, subject: str, min_similarity: float, gate: bool
) -> tuple[list[Hit], bool]:
    """The notes about `subject`, best first, and whether they are about all of it: notes
    that only share its name or lie near it by meaning are judged as recall's are
    (`context.certainty`). Lexical hits come first and are cheap: with
    `gate`, none means the question is not about the notes, and a turn that goes on to the
    model has not paid for an embedding here (recall embeds it there). Notes holding every
    word of the name are the answer; otherwise, when the store embeds, hybrid search behind
    the similarity floor picks (fused ranks alone always return something, and lexical
    OR-matching drags in notes that share one stem); a bare name ("my sister") can embed far
    from every sentence that mentions it, so the lexical hits stand in when the floor leaves
    none."""
    lexical = store.notes.search_fts(subject, limit=10, written_only=True)
    if gate and not lexical:
        return [], False
    # Notes that hold every word of the name ("booking" and "reference") are about it.
    terms = [w for w in subject.lower().split() if w not in STOPWORDS]
    whole = [h for h in lexical if terms and all(t in h.text.lower() for t in terms)]
    if whole:
        return whole[:SPOKEN_ITEMS], True
    model = store.notes.embedder
    if model is not None:
        asked = Asked.of(store, subject, datetime.now().astimezone())
        # Ranked as recall ranks: by what is asked of a name, not by the name.
        vector, focus = asked.embed(model)
        hits = asked.search(
            store, vector, focus, limit=SPOKEN_ITEMS, floor=min_similarity, written_only=True
        )
        if hits:
            vectors = store.notes.embeddings([h.id for h in hits], vector.size)
            return hits, sure(hits, vectors, vector, asked.directions(model), None)
    # Lexical hits that are not `whole` share only some of the subject's words.
    return lexical[:SPOKEN_ITEMS], False


NO_NAME = "You haven't told me your name yet. Say \"call me\" and the name, and I'll use it."
NO_MOOD = "You haven't told me how you're feeling, so I have nothing recorded."
_YOUR = {
    "my": "your",
    "i": "you",
    "me": "you",
    "myself": "yourself",
    "our": "your",
    "mine": "yours",
}


def _part_of_day(moment: datetime) -> str:
    hour = moment.hour
    return (
        "morning"
        if 5 <= hour < 12
        else "afternoon"
        if hour < 17
        else "evening"
        if hour < 22
        else "night"
    )


def said_when(said_at: str, now: datetime) -> str:
    """When something was said, as a person would put it: "this morning", "yesterday evening",
    "on Tuesday evening", "on March 3"."""
    moment = from_iso(said_at).astimezone(now.tzinfo)
    days = (now.date() - moment.date()).days
    part = _part_of_day(moment)
    if days <= 0:
        return "last night" if part == "night" and moment.hour < 5 else f"this {part}"
    if days == 1:
        return "last night" if part == "night" else f"yesterday {part}"
    if days < 7:
        return f"on {moment:%A} {part}"
    return f"on {moment:%B} {moment.day}"


def name_answer(store: Store, now: datetime) -> StateResult:
    """What Annie calls the user: the newest saying that names them (`context.user_name`)."""
    for row in store.notes.newest_saying(PHRASES):
        name = name_in(row.text)
        if name is not None:
            when = said_when(row.created_at, now)
            return StateResult(f"I call you {name}: you told me {when}.", "remember", [row.id])
    return StateResult(NO_NAME, "remember")


def mood_answer(store: Store, now: datetime) -> StateResult:
    """ "How am I feeling lately?": what the user last said about how they feel, in their own
    words and with when they said it; nothing recorded is said as such, never guessed."""
    moods = store.moods.latest(limit=2)
    if not moods:
        return StateResult(NO_MOOD, "remember")
    parts = []
    for i, mood in enumerate(moods):
        feeling = " ".join(_YOUR.get(w, w) for w in mood.feeling.split())
        verb = "felt" if mood.verb == "feel" else "were"
        when = said_when(mood.said_at, now)
        if i == 0:
            parts.append(f"{when[0].upper()}{when[1:]} you said you {verb} {feeling}.")
        else:
            parts.append(f"Before that, {when}, you said you {verb} {feeling}.")
    return StateResult(" ".join(parts), "remember", [m.id for m in moods])


def approval_sentence(waiting: list[ApprovalRow], session_id: str | None) -> str:
    """ "One thing waits for your approval: delete note (note_id=note-3). Say yes or no." """
    named = []
    for a in waiting[:SPOKEN_ITEMS]:
        where = (
            "" if session_id and a.requester == session_id else ", asked in another conversation"
        )
        named.append(approvals.describe(a) + where)
    verb = "waits" if len(waiting) == 1 else "wait"
    text = f"{count_words(len(waiting), 'thing').capitalize()} {verb} for your approval: "
    text += join_spoken(named, len(waiting)) + "."
    if session_id and any(a.requester == session_id for a in waiting):
        text += " Say yes or no."
    return text


def _titles(rows: list[TaskRow], total: int) -> str:
    return join_spoken([r.title for r in rows[:SPOKEN_ITEMS]], total)
