"""What the reliability bench checks in the database file, with the server's own code.

Read-only SQL for the figures (integrity, completed turns present, half-written events,
checkpoint times), and the briefing built by `compaction.briefing.build_briefing`, the function
the runtime calls when a session opens, at the budget and with the tokenizer the server uses.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from memory.episodes import SPEAKERS
from memory.rows import make_id, parse_id

# Event kinds that make a turn complete: the answer the client was told about is stored.
ANSWER_KINDS = ("assistant", "state_answer", "error")
# Kinds whose content the runtime writes as JSON (a cut write would not parse).
JSON_KINDS = ("tool_call", "manifest")


def _connect(db: Path) -> sqlite3.Connection:
    # A plain connection: on a WAL file left by a kill it recovers the log exactly as the
    # server's next open does. Short timeout: the bench must not hang on a lock it holds.
    conn = sqlite3.connect(db, timeout=10.0)
    conn.row_factory = sqlite3.Row
    return conn


def integrity(db: Path) -> str:
    """`PRAGMA integrity_check`: "ok", or the first problems it names."""
    with _connect(db) as conn:
        rows = [r[0] for r in conn.execute("PRAGMA integrity_check")]
    return "ok" if rows == ["ok"] else "; ".join(rows[:5])


def missing_turns(db: Path, turn_ids: Iterable[str]) -> list[str]:
    """Turns the client saw completed (assistant_done) that have no stored answer event."""
    wanted = [t for t in turn_ids if t]
    if not wanted:
        return []
    marks = ",".join("?" * len(wanted))
    kinds = ",".join("?" * len(ANSWER_KINDS))
    with _connect(db) as conn:
        found = {
            r[0]
            for r in conn.execute(
                f"SELECT DISTINCT turn_id FROM events WHERE turn_id IN ({marks})"
                f" AND kind IN ({kinds})",
                [*wanted, *ANSWER_KINDS],
            )
        }
    return [t for t in wanted if t not in found]


def unremembered(db: Path) -> list[str]:
    """Words said (the user's turns and Annie's answers) with no episode beside them
    (`memory.episodes`): each event id. The two are written in one transaction, so a kill can
    lose both, never one."""
    kinds = tuple(SPEAKERS)
    marks = ",".join("?" * len(kinds))
    with _connect(db) as conn:
        said = {
            make_id("events", r[0])
            for r in conn.execute(
                f"SELECT n FROM events WHERE kind IN ({marks}) AND trim(content) != ''", kinds
            )
        }
        kept = {r[0] for r in conn.execute("SELECT source_event FROM notes WHERE kind = 'episode'")}
    return sorted(said - kept)


def half_written(db: Path) -> list[str]:
    """Events that were not written whole: bad meta JSON, JSON content that does not parse,
    an answer without its user message, or required fields empty. Each as 'id: why'."""
    bad: list[str] = []
    with _connect(db) as conn:
        users = {r[0] for r in conn.execute("SELECT turn_id FROM events WHERE kind = 'user'")}
        for row in conn.execute("SELECT n, turn_id, kind, content, meta, created_at FROM events"):
            eid = make_id("events", row["n"])
            why = _broken(dict(row), users)
            if why:
                bad.append(f"{eid}: {why}")
    return bad


def _broken(row: dict[str, Any], users: set[str]) -> str:
    try:
        json.loads(row["meta"])
    except (TypeError, ValueError):
        return "meta is not JSON"
    if not row["kind"] or not row["created_at"]:
        return "kind or time missing"
    if row["kind"] in JSON_KINDS:
        try:
            json.loads(row["content"])
        except (TypeError, ValueError):
            return f"{row['kind']} content is not JSON"
    turn = row["turn_id"]
    # Reminders and compactions belong to a turn id the session made, without a user message.
    if row["kind"] in ("assistant", "state_answer", "tool_call") and turn and turn not in users:
        return f"{row['kind']} for turn {turn} with no user message"
    return ""


@dataclass
class Checkpoint:
    tier: int
    created_at: datetime
    summary: str


def checkpoints(db: Path, session_id: str) -> list[Checkpoint]:
    with _connect(db) as conn:
        rows = conn.execute(
            "SELECT tier, created_at, summary FROM checkpoints WHERE session_n = ? ORDER BY n",
            [parse_id("sessions", session_id)],
        ).fetchall()
    return [Checkpoint(r[0], datetime.fromisoformat(r[1]), r[2]) for r in rows]


def session_events(db: Path, session_id: str, kinds: tuple[str, ...] = ("user",)) -> list[str]:
    """The contents of one session's events of `kinds`, in order."""
    marks = ",".join("?" * len(kinds))
    with _connect(db) as conn:
        rows = conn.execute(
            f"SELECT content FROM events WHERE session_n = ? AND kind IN ({marks}) ORDER BY n",
            [parse_id("sessions", session_id), *kinds],
        ).fetchall()
    return [str(r[0]) for r in rows]


def turn_event_ids(db: Path, turn_id: str) -> list[str]:
    """The ids of one turn's user message and answer."""
    with _connect(db) as conn:
        rows = conn.execute(
            "SELECT n FROM events WHERE turn_id = ?"
            " AND kind IN ('user', 'assistant', 'state_answer')",
            [turn_id],
        ).fetchall()
    return [make_id("events", r[0]) for r in rows]


@dataclass
class BriefingCheck:
    """Whether the briefing a new session gets carries the killed session's last turn."""

    session_id: str  # the newest session it drew on
    carries: bool
    text: str
    source_ids: list[str] = field(default_factory=list)


class Briefer:
    """`build_briefing` over the bench's ANNIE_HOME, as the server builds it for a new session."""

    def __init__(self, home: Path, window: int) -> None:
        from config import load_settings
        from models import load_tokenizer

        env = {"ANNIE_HOME": str(home), "ANNIE_CONTEXT__WINDOW": str(window)}
        self.settings = load_settings(environ=env)
        self.count = load_tokenizer(self.settings).count

    def check(self, current: str, killed: str, turn_id: str, text: str) -> BriefingCheck:
        """The briefing for session `current`; it must draw on `killed` and carry the turn
        `turn_id` (one of its events among the sources, or the answer's opening words)."""
        from bot.tools.registry import default_registry
        from compaction.briefing import build_briefing
        from memory.store import Store

        with Store.open(self.settings) as store:
            briefing = build_briefing(
                store,
                budget=self.settings.context.budget("briefing"),
                count=self.count,
                current_session_id=current,
                protects=default_registry().protects(),
            )
        ids = turn_event_ids(self.settings.db_path, turn_id)
        opening = " ".join(text.split())[:40]
        carries = briefing.session_id == killed and (
            any(i in briefing.source_ids for i in ids) or bool(opening and opening in briefing.text)
        )
        return BriefingCheck(briefing.session_id, carries, briefing.text, briefing.source_ids)
