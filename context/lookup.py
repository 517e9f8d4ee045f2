"""Looking one item up in the user's records: "is laundry on my list", "when is my meeting with
Ann", "how long is left on the pasta timer".

An item is matched against task titles, reminders and calendar events by its words, compared
by a light stem ("meetings" is "meeting"): every content word of the item in a record's words
is a match, said with the record's own wording. Where no record holds every word, a record
that holds most of them, or (with an embedding model) one whose meaning lies close, is said as
close ("not as written; the closest is ..."), never as a yes. A "no" is said only when the
user named where to look ("on my list") and that record could be read; a "when is my X" that
nothing matches goes to the model, which may know it from the conversation. Each answer names
the records it read in `sources`.
"""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import cast

import numpy as np
import numpy.typing as npt

from context.normalize import fold
from context.state_answers import SPOKEN_ITEMS, StateResult, date_window, day_window
from context.state_vocab import Day, forms
from context.wording import count_words, join_spoken, spoken_when
from memory.fts import STOPWORDS
from memory.rows import ReminderRow, TaskRow, from_iso

# Embeds texts into unit vectors (the notes' model); None where none is loaded.
Embed = Callable[[list[str]], npt.NDArray[np.float32]]
# Cosine at which a record's meaning is close to the item asked about (all-MiniLM-L6-v2:
# "laundry" and "wash the clothes" lie about 0.6 apart, "laundry" and "call the dentist" 0.1).
CLOSE = 0.55
# Share of the item's words a record must hold to be said as close without embeddings.
CLOSE_SHARE = 0.5
# Words that say what kind of record an item is, not which one ("the laundry task").
_GENERIC = frozenset([
    "task", "tasks", "item", "items", "thing", "things", "todo", "todos", "entry",
    "reminder", "reminders", "note", "list", "something", "one", "appointment", "appointments",
    "appt", "event", "events",
])  # fmt: skip
_WORD = re.compile(r"[a-z0-9]+")
# What is left of "Jamie's", "what've" and "we'll" once the apostrophe splits them.
_CLITICS = frozenset(["s", "ve", "ll", "re", "d", "t", "m"])


@dataclass(frozen=True)
class Record:
    """One thing an item can be found in: a task, a reminder or a calendar event."""

    id: str
    title: str
    kind: str  # "task" | "reminder" | "timer" | "event"
    when: str | None = None  # ISO time it is due or starts
    done: bool = False


# Words said one way and written another: "when do I fly", "Dr. Haddad", "bday drinks".
_SAME = {"dr": "doctor", "doc": "doctor", "appt": "appointment", "fly": "flight",
         "flying": "flight", "bday": "birthday", "mum": "mom", "mam": "mom", "ring": "call",
         "phone": "call", "mtg": "meeting", "mtgs": "meeting", "telly": "tv",
         "footie": "football", "footy": "football", "soccer": "football", "hosp": "hospital",
         "bros": "brother", "bro": "brother", "sis": "sister", "grandad": "grandpa",
         "granddad": "grandpa", "nan": "grandma", "nana": "grandma", "gran": "grandma",
         "granny": "grandma"}  # fmt: skip


# Past forms a stem does not reach ("did I send", "have I sent"), said as the base verb.
_IRREGULAR = {
    "sent": "send", "took": "take", "taken": "take", "paid": "pay", "bought": "buy",
    "made": "make", "rang": "ring", "rung": "ring", "got": "get", "gotten": "get",
    "gave": "give", "given": "give", "left": "leave", "brought": "bring", "went": "go",
    "gone": "go", "told": "tell", "wrote": "write", "written": "write", "sold": "sell",
    "built": "build", "fed": "feed", "hung": "hang", "lent": "lend", "spent": "spend",
    "swept": "sweep", "sorted": "sort", "dug": "dig", "fixed": "fix", "mown": "mow",
    "sewn": "sew", "drew": "draw", "drawn": "draw", "chose": "choose", "chosen": "choose",
}  # fmt: skip
# British and American spellings folded to one ("organiser", "organizer"; "colour", "color"),
# the same way on both sides of a comparison.
_SPELLING = [(re.compile(r"(?<=\w{3})is(e|ed|es|er|ers|ing|ation)$"), r"iz\1"),
             (re.compile(r"(?<=\w{3})our$"), "or")]  # fmt: skip


def _one_spelling(word: str) -> str:
    word = _IRREGULAR.get(word, word)
    word = _SAME.get(word, word)
    for pattern, repl in _SPELLING:
        word = pattern.sub(repl, word)
    return word


# Cached: a lookup reads the same record titles and the same item once for each record.
@functools.lru_cache(maxsize=4096)
def _content(text: str) -> tuple[str, ...]:
    """The words of `text` that carry its meaning, folded to one spelling."""
    found = (_one_spelling(w) for w in _WORD.findall(fold(text)))
    return tuple(w for w in found if w not in STOPWORDS and w not in _GENERIC and w not in _CLITICS)


@functools.lru_cache(maxsize=4096)
def words(text: str) -> frozenset[str]:
    """The content words of `text` with their stems."""
    return frozenset(f for w in _content(text) for f in forms(w))


def _share(item: str, record: Record) -> float:
    wanted = _content(item)
    if not wanted:
        return 0.0
    held = words(record.title)
    return sum(1 for w in wanted if forms(w) & held) / len(wanted)


@dataclass(frozen=True)
class Found:
    exact: list[Record]
    close: list[Record]


def find(item: str, records: list[Record], embed: Embed | None = None) -> Found:
    """The records holding every word of `item`, and failing those the close ones."""
    exact = [r for r in records if _share(item, r) >= 1.0]
    if exact or not records:
        return Found(exact, [])
    shares = [(s, r) for r in records if (s := _share(item, r)) >= CLOSE_SHARE]
    close = [r for _, r in sorted(shares, key=lambda p: -p[0])]
    if not close and embed is not None:
        close = [r for s, r in _by_meaning(item, records, embed) if s >= CLOSE][:SPOKEN_ITEMS]
    return Found([], close)


# How many distinct texts a `Remembered` keeps vectors for before it starts afresh: far more
# than the titles of a store's open records, a few MB of vectors at most.
REMEMBERED_TEXTS = 4096


class Remembered:
    """Vectors of texts already embedded, kept across questions for one model: every lookup
    compares the item with the same record titles, and embedding them afresh for each question
    cost 80 ms of a 109 ms answer on a 2-core CPU with 67 records (15 ms with them kept)."""

    def __init__(self, limit: int = REMEMBERED_TEXTS) -> None:
        self.limit = limit
        self._model: object | None = None
        self._known: dict[str, npt.NDArray[np.float32]] = {}
        self._lock = threading.Lock()

    def over(self, model: object, embed: Embed) -> Embed:
        """`embed` (which runs `model`), embedding only the texts not seen with `model`."""

        def embedded(texts: list[str]) -> npt.NDArray[np.float32]:
            if not texts:
                return np.zeros((0, 0), np.float32)
            # One question at a time: the model itself runs one call at a time anyway.
            with self._lock:
                if self._model is not model:
                    self._model, self._known = model, {}
                missing = [t for t in dict.fromkeys(texts) if t not in self._known]
                if len(self._known) + len(missing) > self.limit:
                    self._known.clear()
                    missing = list(dict.fromkeys(texts))
                if missing:
                    vectors = np.asarray(embed(missing), dtype=np.float32)
                    self._known.update(zip(missing, vectors, strict=True))
                return np.stack([self._known[t] for t in texts])

        return embedded


def _by_meaning(item: str, records: list[Record], embed: Embed) -> list[tuple[float, Record]]:
    """Every record with its cosine to `item`, nearest first."""
    vectors = np.asarray(embed([item] + [r.title for r in records]), dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1)
    norms[norms == 0] = 1.0
    sims = (vectors[1:] @ vectors[0]) / (norms[1:] * norms[0])
    return sorted(zip(sims.tolist(), records, strict=True), key=lambda p: -p[0])


# A loosely named item that no record holds in words may still name one by meaning
# ("cancelling the music streaming subscription": "Cancel Spotify family plan"): the nearest
# record must be close (`CLOSE`) and this far ahead of the next, or the words may be about the
# world ("did I leave the oven on") and are the model's.
MEANT_LEAD = 0.1


# The gist of a question no rule read ("did I put down writing up the vibration readings"),
# answered only as the nearest record (`gist_answer`), never as a yes: a record a little less
# close, but as far ahead of the next. On the read lookup rounds, 0.45 and 0.08 took 41 right
# records for 2 wrong ones and 10 where no record was meant (said as the nearest, not as a yes).
GIST_CLOSE = 0.45
GIST_LEAD = 0.08


def meant(
    item: str, records: list[Record], embed: Embed | None, *, gist: bool = False
) -> Record | None:
    """The one record `item` names by meaning alone, or None. `gist`: `item` is the gist of
    a whole question, and the answer says the record as the nearest."""
    if embed is None or not records:
        return None
    ranked = _by_meaning(item, records, embed)
    best, record = ranked[0]
    second = ranked[1][0] if len(ranked) > 1 else 0.0
    close, lead = (GIST_CLOSE, GIST_LEAD) if gist else (CLOSE, MEANT_LEAD)
    return record if best >= close and best - second >= lead else None


def gist_answer(record: Record, day: str, now: datetime) -> StateResult:
    """The record nearest in meaning to a question no rule read, said as the nearest in its
    own words: done or open for a task, when for a timed one, and whether that is the `day`
    asked about where one was."""
    if record.kind == "task" and (record.done or not record.when):
        said = _stated(record, ", still open")
    else:
        said = _said(record, now)
    if day and record.when:
        start, end, label = _asked_day(day, now)
        if not start <= from_iso(record.when) < end:
            return StateResult(
                f"Nothing {label} in those words; the nearest I have: {said}.", "find", [record.id]
            )
    return StateResult(f"Not in those words; the nearest I have: {said}.", "find", [record.id])


# A "no" is said only where nothing the user keeps lies near the item in meaning: an item said
# in other words than its record ("dog food" for "Kibble – Orijen 11kg x2", "snow tires" for
# "Winter tires – Canadian Tire appt") would otherwise get a confident wrong no. The records at
# least this near, and within `NEAR_SPAN` of the nearest, are said instead as the nearest, never
# as a yes. On the read lookup rounds the cosine of such a record to the item ran 0.34–0.66, and
# of the nearest record to an item that nothing holds 0.16–0.78: meaning alone cannot tell the
# two apart, so both are said as a "not as such" with what lies nearest.
NEAR = 0.33
NEAR_SPAN = 0.25


def nearest(item: str, records: list[Record], embed: Embed | None) -> list[Record]:
    """The records nearest `item` in meaning (at most three, nearest first), or none where no
    record is near it."""
    if embed is None or not records:
        return []
    ranked = _by_meaning(item, records, embed)
    floor = max(NEAR, ranked[0][0] - NEAR_SPAN)
    return [r for s, r in ranked if s >= floor][:SPOKEN_ITEMS]


# How much of a loosely named item one record must hold to answer for it: most of its words,
# two at least, and no other record as much.
STRONG_SHARE = 2 / 3


def strongest(item: str, records: list[Record]) -> Record | None:
    """The one record that holds most of `item`'s words ("ring Papa about his supper" and "call
    Papa re: supper"), where exactly one does; None otherwise. An item named in words that may
    be about the world is answered from the records only with an exact or a strongest record."""
    wanted = len(_content(item))
    scored = sorted(((_share(item, r), r) for r in records), key=lambda p: -p[0])
    if wanted < 2 or not scored or scored[0][0] * wanted < 2 or scored[0][0] < STRONG_SHARE:
        return None
    if len(scored) > 1 and scored[1][0] == scored[0][0]:
        return None
    return scored[0][1]


# The words of a question about a record that are not the record's own: how it is asked
# ("did I already", "is that on my to-do", "what time does it start"), never which record.
_ASKING = frozenset(
    _content(
        "did do does done doing have has had yet already still ever remember remembered supposed "
        "meant going get got put write written wrote down sorted sort todo to-do list lists on "
        "anywhere somewhere time when what day date week weekend today tomorrow yesterday "
        "tonight morning afternoon evening night last next this start starts starting begin "
        "happen happening okay ok um uh so hey wait sure think wondering need needs supposed "
        # How a record's kind is asked about: "is that still a job", "how long is it", "will I
        # be reminded", "is it in the diary".
        "job jobs chore chores errand errands long remind reminded reminding goes am having "
        "going gonna there diary calendar schedule agenda planner right yeah yes correct until "
        # "How many days until": how long, asked in days.
        "till many days weeks hours"
    )
)
# Words that ask how ("what time does it finish", "when do we get back", "who am I meeting")
# and may also be a record's own ("Finish the report", "Team meeting"): they count where a
# record holds them, and are not held against one that does not.
_SOFT = frozenset(
    _content("finish finishes finished end ends over back set seeing meeting meetings")
)
# Said while thinking, before the question: "hang on, when was ...".
_HOLD_ON = re.compile(r"\b(?:hang on|hold on|oh yeah|you know)\b")
# Words that say when, not which record: "is the piano lesson on the 3rd", "Monday's yoga".
_DAY_WORD = re.compile(
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday|january|february|march|april"
    r"|may|june|july|august|september|october|november|december|\d{1,2}(?:st|nd|rd|th)"
)
# A clause that asks: it opens with a question word or an inverted verb, after any filler,
# wherever it stands in the sentence ("the envelope check, did I book that").
_ASKS = re.compile(
    r"^(?:(?:okay|ok|so|um|uh|hey|annie|and|but|quick question|just|wait|sorry|oh|right"
    r"|hang on|hold on|remind me)\s+)*"
    r"(?:did|do|does|have|has|had|is|are|was|were|am|will|when|when's|what|what's|where"
    r"|where's|which|who|any|anything|how long|how soon|how many|how much|whether)\b"
)
_CLAUSES = re.compile(r"[,;:.!?\u2013\u2014]+|\s-\s|\b(?:wondering|wonder)\b")
# Said without commas, the topic first and the question after it ("the council tax did I pay
# it", "the birdseed is that still on there"), or a statement turned into a question at its end
# ("the demo is on Friday isn't it", "choir is at seven right", "done or not").
_ASKS_AFTER = re.compile(
    r"\b(?:did|do|does|have|has|is|are|was|were|will|am)"
    r" (?:i|we|they|you|it|that|this|those|these|he|she)\b|\b(?:which|what) (?:day|time|date"
    r"|night)\b"
)
_TAG = re.compile(
    r"\b(?:right|yeah|yes|correct|or not|or what|is it|isn't it|is not it|aren't they|are not they"
    r"|wasn't it|was not it|didn't i|did not i|haven't i|have not i|don't i|do not i|what is it"
    r"|or not done|what time|what day|when|again)$"
)
# Orders, even with a question's tag: "remind me to ring Pete yeah", "add milk to my list
# right" (a clause that opens as a question still asks: "ring Pete, did I do that").
_ORDER = re.compile(
    r"^(?:(?:okay|ok|so|um|uh|hey|annie|and|but|just|please|oh|right|now)\s+)*"
    r"(?:add|put|remind me to|set|create|make|delete|remove|cancel|mark|tick|cross|book"
    r"|schedule|move|change|rename|call|ring|text|message|email|send|play|turn|start|stop"
    r"|write|note|save|take|get|buy|order)\b"
)


# Asking what was said or decided, what someone thinks, or for a judgement ("is it too late to
# ring Mum"): the conversation's, not a record's.
_TALK = re.compile(
    r"\b(?:decide|decided|agree|agreed|say|said|talk|talked|discuss|discussed|tell|told"
    r"|mention|mentioned|think|thought|feel|felt|reckon|suggest|suggested|advice|opinion"
    r"|should|could|would|can i|can we|too (?:late|early|soon)"
    r"|is it (?:ok|okay|worth|fine|safe|wise|possible|normal))\b"
)


def asks(text: str) -> bool:
    """Whether `text` (as said, punctuation kept) asks something: it ends with a question mark
    or one of its clauses opens as a question. "The insurance is due Thursday" does not."""
    said = fold(text).lower().replace("\u2019", "'").strip()
    if said.endswith("?"):
        return True
    if any(_ASKS.match(c.strip()) for c in _CLAUSES.split(said)):
        return True
    if _ORDER.match(said):
        return False
    plain = " ".join(re.sub(r"[^a-z0-9' ]+", " ", said).split())
    return bool(_ASKS_AFTER.search(plain) or _TAG.search(plain))


def asked_about(text: str, core: str) -> list[str]:
    """The words a question names things by (how it asks left out), or none where `text` is
    no question a record could answer: a statement, an order, talk or a judgement. Cheap: it
    reads no records. `core` is `text` normalized."""
    if not (asks(text) or asks(core)) or _TALK.search(core):
        return []
    core = _HOLD_ON.sub(" ", core)
    return [w for w in _content(core) if w not in _ASKING and not _DAY_WORD.fullmatch(w)]


@functools.lru_cache(maxsize=4096)
def _title_words(title: str) -> frozenset[str]:
    return frozenset(_content(title))


def named_record(
    named: list[str], records: list[Record], *, narrowed: bool = False
) -> Record | None:
    """The one record a question names in words of its own ("the envelope fabric check, did I
    book that" and "Book envelope fabric inspection – G-INES"), or None: at least two of the
    record's words said, one of them said of no other record, and no other record named by as
    many (a word said as written beats one matched by its stem: "the paint" is "Buy paint",
    not "Return painted sign"). `narrowed` says the caller kept only the kind of record the
    question asks about ("when", "remind", "done"): there the one record that holds all it
    names names it, one word included ("when was Lindqvist"). A word that may ask how as well
    as name (`_SOFT`: "finish", "meeting") counts only for a record that holds it. `named` is
    what `asked_about` read in the question."""
    said = frozenset(f for w in named for f in forms(w))
    if not said or not records or (len(named) < 2 and not narrowed):
        return None
    exact = frozenset(named)
    titles = [_title_words(r.title) for r in records]
    # How many records hold each word: a word only one holds tells which record is meant.
    df: dict[str, int] = {}
    for t in titles:
        for w in t:
            df[w] = df.get(w, 0) + 1
    scored: list[tuple[int, int, Record]] = []
    holders: list[tuple[int, int, Record]] = []
    for record, title in zip(records, titles, strict=True):
        held = [w for w in title if forms(w) & said]
        if not held:
            continue
        # Most of what the question names is the record's: "the weather for Kofi's flight to
        # Lagos" asks about the weather, whatever it shares with "Call Kofi's mum re: Lagos
        # flights".
        kept = frozenset(f for h in held for f in forms(h))
        counted = [w for w in named if w not in _SOFT or forms(w) & kept]
        if sum(1 for w in counted if forms(w) & kept) * 2 < len(counted):
            continue
        as_said = sum(1 for w in held if w in exact)
        holders.append((as_said, len(counted), record))
        if len(held) >= 2 and any(df[w] == 1 for w in held):
            scored.append((len(held), as_said, record))
    scored.sort(key=lambda p: (-p[0], -p[1]))
    if scored and (len(scored) == 1 or scored[1][:2] != scored[0][:2]):
        return scored[0][2]
    if scored or not narrowed:
        return None
    whole = [(n, r) for n, wanted, r in holders if n == wanted or wanted == 1]
    if len(whole) == 1:
        return whole[0][1]
    as_written = [r for n, r in whole if n]
    return as_written[0] if len(as_written) == 1 else None


def firm(named: list[str]) -> list[str]:
    """The words of `named` that say which record, not how it is asked (`_SOFT`)."""
    return [w for w in named if w not in _SOFT]


def task_records(tasks: list[TaskRow]) -> list[Record]:
    return [Record(t.id, t.title, "task", t.due, t.status == "done") for t in tasks]


def reminder_records(reminders: list[ReminderRow]) -> list[Record]:
    return [Record(r.id, r.text, r.kind if r.kind == "timer" else "reminder", r.due)
            for r in reminders]  # fmt: skip


_WHERE_SAID = {"list": "on your list", "reminders": "in your reminders",
               "schedule": "on your schedule"}  # fmt: skip


def membership_answer(
    item: str,
    within: str,
    places: dict[str, list[Record]],
    now: datetime,
    embed: Embed | None = None,
) -> StateResult:
    """Whether `item` is in the records `within` names ("list", "reminders", "schedule"; ""
    for all), with the record's own wording; `places` holds each place's records."""
    asked = [within] if within else list(places)
    here = [r for name in asked for r in places.get(name, [])]
    found = find(item, [r for r in here if not r.done], embed)
    where = _WHERE_SAID.get(within, "in your records")
    if found.exact:
        return _yes(found.exact, where, now)
    finished = find(item, [r for r in here if r.done]).exact
    if finished:
        first = finished[0]
        return StateResult(f'"{first.title}" was {where}, and it is done.', "find", [first.id])
    # Not where the user looked: another of the records may hold it.
    elsewhere = [r for name, rows in places.items() if name not in asked for r in rows]
    other = find(item, [r for r in elsewhere if not r.done]).exact
    if found.close:
        names = join_spoken([f'"{r.title}"' for r in found.close[:SPOKEN_ITEMS]])
        return StateResult(
            f"Not as {item}, but close: {names}.", "find", [r.id for r in found.close[:3]]
        )
    if other:
        first = other[0]
        return StateResult(
            f"Not {where}, but you have {_a(first)}: {_said(first, now)}.", "find", [first.id]
        )
    return _not_as_such(item, where, here + elsewhere, embed)


def _not_as_such(
    item: str, where: str, records: list[Record], embed: Embed | None, *, states: bool = False
) -> StateResult:
    """No record holds `item`: a "no", or, where records lie near it in meaning, those, a done
    one said as done (and an open one as open, for `states`)."""
    near = nearest(item, records, embed)
    if not near:
        return StateResult(f"No, {item} isn't {where}.", "find")
    names = join_spoken([_stated(r, ", still open" if states else "") for r in near])
    return StateResult(
        f"Not {where} as {item}; the nearest I have: {names}.", "find", [r.id for r in near]
    )


def _stated(record: Record, open_said: str) -> str:
    """A record's title as written, then ", done" or `open_said`."""
    return f'"{record.title}"' + (", done" if record.done else open_said)


def done_answer(
    item: str, tasks: list[Record], now: datetime, embed: Embed | None = None
) -> StateResult:
    """Whether the task `item` names is done ("did I already pay the gas bill"), by its words
    or, failing them, its meaning; an open one is said with when it is due."""
    found = find(item, tasks).exact
    if not found and (near := strongest(item, tasks) or meant(item, tasks, embed)) is not None:
        # Not the words of any task, but most of one's, or its meaning alone: said as that
        # task, in its words, as close.
        state = "done" if near.done else f"still open: {_said(near, now)}"
        return StateResult(f'Not in those words, but "{near.title}" is {state}.', "find", [near.id])
    if not found:
        return _not_as_such(item, "on your list", tasks, embed, states=True)
    done = [r for r in found if r.done]
    if done and len(done) == len(found):
        return StateResult(f'Yes, "{done[0].title}" is done.', "find", [done[0].id])
    first = next(r for r in found if not r.done)
    return StateResult(f"No, it's still open: {_said(first, now)}.", "find", [first.id])


def when_answer(
    item: str,
    day: str,
    records: list[Record],
    now: datetime,
    embed: Embed | None = None,
    *,
    until: bool = False,
) -> StateResult:
    """When the event or errand `item` is, checked against `day` where one was asked; where no
    record holds it, that none does, naming the records read. `until`: asked how long until
    it is, said first ("In three days: ...")."""
    timed = [r for r in records if r.when and not r.done]
    found = find(item, timed, embed)
    hits = found.exact or found.close
    if not hits:
        # Said with where it looked, so it is never a bare "no": the records are the schedule.
        _, _, label = _asked_day(day, now) if day else ("", "", "")
        when = f" {label}" if label else ""
        return StateResult(
            f"I don't see {_the(item)}{when} in your schedule, reminders or tasks.", "find"
        )
    if not found.exact:
        # The closest by words (or meaning), not the soonest of the close ones.
        first = strongest(item, timed) or hits[0]
        said = _said(first, now)
        return StateResult(f"Nothing is called {item}; the closest: {said}.", "find", [first.id])
    hits = sorted(hits, key=lambda r: (from_iso(r.when or "") < now, r.when or ""))
    first = hits[0]
    said = _said(first, now)
    if day:
        start, end, label = _asked_day(day, now)
        inside = [r for r in hits if start <= from_iso(r.when or "") < end]
        if inside:
            # Every one of them that day ("is choir on tomorrow": the lift to choir and the
            # practice itself), so the one meant is among them.
            inside = inside[:SPOKEN_ITEMS]
            said_all = "; also ".join(_said(r, now) for r in inside)
            return StateResult(f"Yes: {said_all}.", "find", [r.id for r in inside])
        return StateResult(f"Not {label}: {said}.", "find", [first.id])
    if until and (start := from_iso(first.when or "")) > now:
        said = f"in {_until(start - now)}: {said}"
    if len(hits) > 1:
        more = "; ".join(_said(r, now) for r in hits[1:SPOKEN_ITEMS])
        return StateResult(f"{_cap(said)}. Also: {more}.", "find", [r.id for r in hits[:3]])
    return StateResult(f"{_cap(said)}.", "find", [first.id])


def _until(left: timedelta) -> str:
    """How long until a moment, as said: whole days from two days on, a day and hours from
    one, else hours and minutes as a timer's time left is said."""
    minutes = max(1, round(left.total_seconds() / 60))
    hours = minutes // 60
    if hours >= 48:
        return count_words(round(hours / 24), "day")
    if hours >= 24:
        return "a day" + (f" and {count_words(hours - 24, 'hour')}" if hours > 24 else "")
    return _left(timedelta(minutes=minutes))


def _asked_day(day: str, now: datetime) -> tuple[datetime, datetime, str]:
    """[start, end) of the day a lookup asked about and how to say it: a word of the
    schedule's own ("today", "this week") or an ISO date ("is my haircut on Friday")."""
    if not day[:1].isdigit():
        return day_window(cast(Day, day), now)
    start, end, label = date_window(date.fromisoformat(day), now)
    return start, end, label if label == "today" else f"on {label}"


def timers_answer(
    reminders: list[ReminderRow], item: str, alarms: bool, now: datetime
) -> StateResult:
    """Running timers and the time left on each (the one `item` names first); asked for as
    alarms, the reminders still to come, since an alarm set through Annie is one."""
    if alarms:
        coming = [r for r in reminders if from_iso(r.due) >= now]
        if not coming:
            return StateResult("You have no alarms or reminders set.", "timers")
        named = [f"{r.text}, {spoken_when(r.due, now)}" for r in coming[:SPOKEN_ITEMS]]
        head = count_words(len(coming), "reminder")
        return StateResult(
            f"No alarms as such; you have {head}: {join_spoken(named, len(coming))}.",
            "timers",
            [r.id for r in coming[:SPOKEN_ITEMS]],
        )
    running = [r for r in reminders if r.kind == "timer" and from_iso(r.due) > now]
    if item:
        matching = find(item, reminder_records(running)).exact
        if not matching and running:
            return StateResult(
                f"No {item} timer is running; {_timers(running, now)}",
                "timers",
                [r.id for r in running[:SPOKEN_ITEMS]],
            )
        ids = {m.id for m in matching}
        running = [r for r in running if r.id in ids]
    if not running:
        return StateResult("No timer is running.", "timers")
    return StateResult(_timers(running, now), "timers", [r.id for r in running[:SPOKEN_ITEMS]])


def _timers(running: list[ReminderRow], now: datetime) -> str:
    running = sorted(running, key=lambda r: r.due)
    said = [f"{_left(from_iso(r.due) - now)} left on the {r.text}" for r in running[:3]]
    return _cap(join_spoken(said, len(running))) + "."


def _left(left: timedelta) -> str:
    seconds = max(0, round(left.total_seconds()))
    minutes, secs = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    if hours:
        rest = f" and {count_words(minutes, 'minute')}" if minutes else ""
        return count_words(hours, "hour") + rest
    if minutes >= 5 or not secs:
        return count_words(minutes + (1 if secs >= 30 and minutes >= 5 else 0), "minute")
    if minutes:
        return f"{count_words(minutes, 'minute')} {count_words(secs, 'second')}"
    return count_words(secs, "second")


def _yes(rows: list[Record], where: str, now: datetime) -> StateResult:
    first = rows[0]
    text = f'Yes, "{first.title}" is {where}'
    if first.when:
        text += f", {'due ' if first.kind == 'task' else ''}{spoken_when(first.when, now)}"
    if len(rows) > 1:
        text += f", and {count_words(len(rows) - 1, 'more like it')}"
    return StateResult(text + ".", "find", [r.id for r in rows[:SPOKEN_ITEMS]])


def _a(record: Record) -> str:
    return {"task": "a task", "timer": "a timer", "event": "an event"}.get(
        record.kind, "a reminder"
    )


def _said(record: Record, now: datetime) -> str:
    if not record.when:
        return record.title
    if record.kind == "event":
        start = from_iso(record.when).astimezone(now.tzinfo)
        if start.hour == 0 and start.minute == 0:
            day = spoken_when(record.when, now).rsplit(" at ", 1)[0]
            return f"{record.title}, {day}"
    due = spoken_when(record.when, now)
    return f"{record.title}, {'due ' if record.kind == 'task' else ''}{due}"


def _the(item: str) -> str:
    # "my meeting with ann" is said back as "your meeting with ann".
    words = item.split()
    if words and words[0] in ("my", "our"):
        return " ".join(["your", *words[1:]])
    if words and (words[0] in ("the", "a", "an", "any") or words[0].endswith("'s")):
        return item
    return f"{'an' if item[:1] in 'aeiou' else 'a'} {item}"


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


__all__ = [
    "Found",
    "Record",
    "asked_about",
    "done_answer",
    "find",
    "membership_answer",
    "named_record",
    "nearest",
    "reminder_records",
    "strongest",
    "task_records",
    "timers_answer",
    "when_answer",
    "words",
]
