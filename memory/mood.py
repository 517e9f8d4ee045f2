"""How the user said they feel (`store.moods`), read by rules from their own words only.

A mood is recorded only when the user states one about themselves in plain words: "I'm
exhausted", "I feel great today", "I've been stressed about the move". Nothing is inferred
from tone, from what others feel ("my sister is exhausted"), from questions ("am I tired?")
or from idioms that only borrow a feeling word ("I'm happy to help", "I'm sick of waiting",
"I'm good at chess"). Each statement is kept with the session, the event it came from, the
time and the sentence as said, so it can be read back with when it was said. The state path
reads it back when asked; the next session's briefing carries it for the model, marked as
something to mention only when the user asks; nothing says it unprompted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from memory.db import Records, guarded, where_in
from memory.log import session_key, to_session_id
from memory.rows import MoodRow, make_id, parse_id, to_iso, utc_now

# fmt: off
FEELINGS = (
    "exhausted", "tired", "knackered", "drained", "worn out", "burnt out", "burned out",
    "sleepy", "fine", "good", "great", "fantastic", "wonderful", "amazing", "happy", "glad",
    "excited", "relieved", "calm", "relaxed", "okay", "ok", "alright", "better", "worse",
    "awful", "terrible", "bad", "sad", "down", "low", "lonely", "depressed", "anxious",
    "nervous", "worried", "stressed", "stressed out", "overwhelmed", "frustrated", "angry",
    "annoyed", "upset", "sick", "ill", "unwell", "poorly", "rough", "grumpy", "energetic",
    "rested", "motivated", "content", "proud", "hopeful", "scared", "afraid", "bored",
    "miserable", "fed up", "under the weather", "on top of the world",
)
_INTENSIFIER = (
    r"(?:so|really|very|pretty|quite|a bit|a little|a little bit|kind of|kinda|sort of|super"
    r"|totally|completely|absolutely|incredibly|extremely|rather|too|just|still|very very)"
)
# fmt: on
_FEELING = "|".join(re.escape(f) for f in sorted(FEELINGS, key=len, reverse=True))
_LEAD = r"(?P<lead>i am|i m|im|i have been|i ve been|ive been|i was|i feel|i felt|^feeling)"
_MOOD = re.compile(
    rf"(?:^|\b){_LEAD}\s+(?P<pred>(?:not\s+)?(?:feeling\s+)?(?:{_INTENSIFIER}\s+)*"
    rf"(?:not\s+)?(?:{_INTENSIFIER}\s+)*(?:{_FEELING}))\b"
    # Idioms that borrow a feeling word: "happy to help", "sick of it", "good at chess".
    r"(?!\s+(?:at|of|to|for|that|enough|with you|news|idea|one|thing|point|question)\b)"
    r"(?P<about>\s+(?:about|because of|after|over|from)\s+[^.!?,;]{1,60})?"
)
# A sentence that asks, or only supposes, says nothing about how the user feels.
_NOT_A_STATEMENT = re.compile(
    r"^(?:am|are|do|does|did|how|what|why|will|would|should|could|can|is|if|when|whenever"
    r"|unless|maybe if)\b"
)
# Clauses with their ending: "I'm exhausted, what's on today?" states a mood, then asks.
_CLAUSES = re.compile(r"[^.!?,;\n]+[.!?,;]?")


@dataclass(frozen=True)
class Feeling:
    """One statement of mood: the predicate as said, how it was said, and the sentence."""

    feeling: str
    verb: str
    words: str


def _plain(text: str) -> str:
    text = text.lower().replace("\u2019", "'").replace("i'm", "i m").replace("i've", "i ve")
    return " ".join(re.sub(r"[^a-z' ]+", " ", text).replace("'", " ").split())


def feeling_in(text: str) -> Feeling | None:
    """The last mood the user states about themselves in `text`, or None."""
    found: Feeling | None = None
    for sentence in _CLAUSES.findall(text):
        said = sentence.strip().rstrip(",;").strip()
        if not said or said.endswith("?"):
            continue
        plain = _plain(said)
        if _NOT_A_STATEMENT.match(plain):
            continue
        for m in _MOOD.finditer(plain):
            lead = m.group("lead")
            pred = m.group("pred") + (m.group("about") or "")
            verb = "feel" if lead in ("i feel", "i felt") else "be"
            if lead == "feeling":
                pred = "feeling " + pred
            found = Feeling(" ".join(pred.split()), verb, said[:240])
    return found


def _mood(row: Any) -> MoodRow:
    return MoodRow(
        id=make_id("moods", row["n"]),
        session_id=to_session_id(row["session_n"]),
        event_id=row["event_id"],
        feeling=row["feeling"],
        verb=row["verb"],
        words=row["words"],
        said_at=row["said_at"],
    )


class Moods(Records):
    """What the user said about how they feel, newest last."""

    table_name = "moods"

    @guarded
    def record(
        self, session_id: str, event_id: str, feeling: Feeling, now: datetime | None = None
    ) -> str:
        n = self.insert(
            {
                "session_n": session_key(session_id),
                "event_id": event_id,
                "feeling": feeling.feeling,
                "verb": feeling.verb,
                "words": feeling.words,
                "said_at": to_iso(now or utc_now()),
            }
        )
        return make_id("moods", n)

    def observe(
        self, session_id: str, event_id: str, text: str, now: datetime | None = None
    ) -> MoodRow | None:
        """Record the mood the user's words `text` state, if they state one."""
        found = feeling_in(text)
        if found is None:
            return None
        mood_id = self.record(session_id, event_id, found, now)
        return self.get(mood_id)

    @guarded
    def get(self, mood_id: str) -> MoodRow | None:
        row = self.row(parse_id("moods", mood_id))
        return _mood(row) if row is not None else None

    @guarded
    def latest(self, limit: int = 1) -> list[MoodRow]:
        """The newest statements, newest first, at most one per session."""
        rows = self.store.all(
            "SELECT * FROM moods WHERE n IN (SELECT max(n) FROM moods GROUP BY session_n)"
            " ORDER BY n DESC LIMIT ?",
            [int(limit)],
        )
        return [_mood(r) for r in rows]

    @guarded
    def of_sessions(self, session_ids: list[str]) -> dict[str, MoodRow]:
        """Each named session's last statement of mood (sessions without one are left out)."""
        keys = [session_key(s) for s in session_ids if s]
        if not keys:
            return {}
        rows = self.store.all(
            "SELECT * FROM moods WHERE n IN (SELECT max(n) FROM moods WHERE "
            f"{where_in('session_n', keys)} GROUP BY session_n)",
            keys,
        )
        return {m.session_id: m for m in map(_mood, rows)}
