"""Episodes (`store.episodes`): every turn of every conversation, remembered and searchable.

What the user said and what Annie answered is kept twice, on purpose: whole in the event log
(`memory.log`), which nothing searches, and as an episode, a row of the notes table of kind
'episode' that keeps its session and who spoke. So the one hybrid search, name index and
recall that find notes find what was said too. An episode is written in the same transaction
as its event, so a kill between the two cannot lose one; its embedding is made afterwards, off
the voice path (`embed_missing`), and an episode left without one is embedded at the next
start. A session's summary (compaction tiers 2 and 3) is an episode of kind 'summary', so a
search can find the session first and the turn in it second.

An imported conversation (`import_turns`) goes through the same rows: a session per imported
session, an event and an episode per turn, all in one transaction.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np

from memory.db import Records, StoreBase, guarded, where_in
from memory.provenance import asks_private
from memory.rows import EPISODE_KINDS, from_iso, make_id, parse_id, to_iso
from memory.search import EmbedderLike, Notes
from memory.vectors import to_blob

# The event kinds that are words said, and who said them. Tool calls and results are not:
# an episode is what was shown or said, never a payload.
SPEAKERS = {"user": "user", "assistant": "annie", "state_answer": "annie"}
# Speakers that are roles, not names: their words are stored as said. A named speaker (an
# imported conversation's "Caroline") is written into the text, since questions ask by name
# ("what did Caroline say about ...") and the name index reads names from the text.
ROLES = frozenset(["user", "annie"])


@dataclass(frozen=True)
class Said:
    """One turn to import: its session's label, when, who spoke, and the words."""

    session: str
    at: datetime
    speaker: str
    text: str
    # The episode's id, once stored ("" for a turn still to import).
    id: str = ""


@dataclass(frozen=True)
class EpisodeInfo:
    """Where an episode comes from: its session, who spoke, its event and when."""

    id: str
    kind: str
    session_id: str
    speaker: str
    event_id: str
    at: str


class AlreadyImported(ValueError):
    """The same turns were imported before: a second import would remember them twice."""


def _digest(turns: Sequence[Said]) -> str:
    """What identifies an import: every turn's session, time, speaker and words."""
    h = hashlib.sha256()
    for t in turns:
        h.update(json.dumps([t.session, to_iso(t.at), t.speaker, t.text]).encode("utf-8"))
    return h.hexdigest()


def episode_text(speaker: str, text: str) -> str:
    """The text an episode stores and is searched by: a name's words carry the name."""
    text = text.strip()
    return text if speaker.lower() in ROLES else f"{speaker}: {text}"


class Episodes(Records):
    """What was said, as rows of the notes table (kind 'episode' or 'summary')."""

    table_name = "notes"

    def __init__(self, store: StoreBase, notes: Notes) -> None:
        super().__init__(store)
        self.notes = notes

    # --- writing (inside the caller's transaction) ---------------------------------------

    def said(
        self,
        event_n: int,
        session_n: int | None,
        kind: str,
        content: str,
        created_at: str,
        *,
        private: bool = False,
    ) -> int | None:
        """The episode of event `event_n`, if its kind is words said; its key, or None.
        Called by `Events.append` inside the event's own write transaction. `private`: the
        words read something private aloud (a state answer from a private note)."""
        speaker = SPEAKERS.get(kind)
        if speaker is None or not content.strip():
            return None
        # Words the user asked to keep between them and Annie are private, and so is the
        # answer to them (it may repeat them): never in a prompt a tool can send out.
        private = private or (
            asks_private(content) if speaker == "user" else self._answering_private(session_n)
        )
        return self._write(
            "episode",
            speaker,
            content.strip(),
            session_n,
            make_id("events", event_n),
            created_at,
            sensitivity="private" if private else "normal",
        )

    def _answering_private(self, session_n: int | None) -> bool:
        """Whether the user's last words in this session were private (Annie answers them)."""
        if session_n is None:
            return False
        row = self.store.one(
            "SELECT sensitivity FROM notes WHERE session_n = ? AND kind = 'episode'"
            " AND speaker = 'user' ORDER BY n DESC LIMIT 1",
            (session_n,),
        )
        return row is not None and row["sensitivity"] == "private"

    def summary(self, session_n: int | None, text: str, source: str, created_at: str) -> int | None:
        """A session's summary as an episode (called inside the checkpoint's transaction)."""
        if not text.strip():
            return None
        return self._write("summary", "annie", text.strip(), session_n, source, created_at)

    def _write(
        self,
        kind: str,
        speaker: str,
        text: str,
        session_n: int | None,
        source_event: str,
        created_at: str,
        embedding: bytes | None = None,
        sensitivity: str = "normal",
    ) -> int:
        with self.store.write():
            n = self.table.insert(
                {
                    "sensitivity": sensitivity,
                    "kind": kind,
                    "source": speaker,
                    "speaker": speaker,
                    "text": text,
                    "embedding": embedding,
                    "created_at": created_at,
                    "updated_at": created_at,
                    "session_n": session_n,
                    "source_event": source_event,
                }
            ).last_pk
        assert isinstance(n, int)
        if embedding is None:
            self.notes.vectors.written([n], None, [kind], [created_at])
        return n

    # --- embedding, off the voice path ---------------------------------------------------

    def missing(self, outside: str | None = None) -> int:
        """How many episodes and notes still have no embedding (`outside`: not counting those
        of that session)."""
        sql = "SELECT count(*) AS c FROM notes WHERE embedding IS NULL"
        params: list[Any] = []
        if outside:
            sql += " AND (session_n IS NULL OR session_n != ?)"
            params.append(parse_id("sessions", outside))
        with self.guard():
            row = self.store.one(sql, params)
        return int(row["c"]) if row is not None else 0

    @guarded
    def any_outside(self, session_id: str | None) -> bool:
        """Whether any note or episode exists besides that session's own episodes: recall has
        something to search (cheap: lets a turn skip loading an embedder)."""
        if not session_id:
            return self.notes.any()
        rows = self.store.all(
            "SELECT 1 FROM notes WHERE session_n IS NULL OR session_n != ? LIMIT 1",
            (parse_id("sessions", session_id),),
        )
        return bool(rows)

    def embed_missing(self, embedder: EmbedderLike, limit: int = 64) -> int:
        """Embed up to `limit` rows written without an embedding, oldest first; how many.
        The model runs outside the store lock, so a turn's reads never wait on it."""
        with self.guard():
            rows = self.store.all(
                "SELECT n, kind, created_at, text FROM notes WHERE embedding IS NULL"
                " ORDER BY n LIMIT ?",
                (int(limit),),
            )
        if not rows:
            return 0
        matrix = np.asarray(embedder.embed([r["text"] for r in rows]), np.float32)
        keep: list[int] = []
        with self.guard(), self.store.write() as conn:
            for i, (r, vector) in enumerate(zip(rows, matrix, strict=True)):
                cur = conn.execute(
                    "UPDATE notes SET embedding = ? WHERE n = ? AND embedding IS NULL",
                    (to_blob(vector), r["n"]),
                )
                if cur.rowcount:  # not deleted, nor embedded by another connection meanwhile
                    keep.append(i)
            self.notes.vectors.embedded(
                [int(rows[i]["n"]) for i in keep],
                matrix[keep],
                [rows[i]["kind"] for i in keep],
                [rows[i]["created_at"] for i in keep],
            )
        return len(keep)

    # --- reading --------------------------------------------------------------------------

    @guarded
    def in_session(self, session_id: str) -> set[str]:
        """The ids of a session's episodes (recall leaves out the conversation in view)."""
        rows = self.store.all(
            "SELECT n FROM notes WHERE session_n = ?", (parse_id("sessions", session_id),)
        )
        return {make_id("notes", int(r["n"])) for r in rows}

    @guarded
    def info(self, ids: Sequence[str]) -> dict[str, EpisodeInfo]:
        """Where each of these rows comes from (notes too: no session, speaker "")."""
        ns = [parse_id("notes", i) for i in ids]
        if not ns:
            return {}
        rows = self.store.all(
            "SELECT n, kind, session_n, speaker, source_event, created_at FROM notes WHERE "
            + where_in("n", ns),
            ns,
        )
        return {
            make_id("notes", r["n"]): EpisodeInfo(
                make_id("notes", r["n"]),
                r["kind"],
                make_id("sessions", r["session_n"]) if r["session_n"] is not None else "",
                r["speaker"],
                r["source_event"],
                r["created_at"],
            )
            for r in rows
        }

    @guarded
    def around(self, episode_id: str, before: int, after: int) -> list[Said]:
        """The episode with up to `before` and `after` turns of its session on either side, in
        order (its session's label is the session id; notes and summaries are not turns). A
        private turn is never shown beside another: whether it may be shown at all is decided
        for it alone (`context.provenance`)."""
        n = parse_id("notes", episode_id)
        row = self.store.one("SELECT session_n FROM notes WHERE n = ?", (n,))
        if row is None or row["session_n"] is None:
            return []
        session_n = int(row["session_n"])
        sql = (
            "SELECT n, speaker, text, created_at FROM notes WHERE session_n = ? AND kind = ?"
            " AND (n = ? OR sensitivity != 'private') AND n {op} ? ORDER BY n {order} LIMIT ?"
        )
        earlier = self.store.all(
            sql.format(op="<", order="DESC"), (session_n, "episode", n, n, before)
        )
        later = self.store.all(
            sql.format(op=">=", order="ASC"), (session_n, "episode", n, n, after + 1)
        )
        session = make_id("sessions", session_n)
        return [
            Said(
                session,
                from_iso(r["created_at"]),
                r["speaker"],
                r["text"],
                make_id("notes", r["n"]),
            )
            for r in [*reversed(earlier), *later]
        ]

    @guarded
    def _imported(self, digest: str) -> bool:
        rows = self.store.all(
            "SELECT 1 FROM sessions WHERE json_extract(meta, '$.digest') = ? LIMIT 1", (digest,)
        )
        return bool(rows)

    @guarded
    def count(self) -> int:
        row = self.store.one(
            f"SELECT count(*) AS c FROM notes WHERE {where_in('kind', list(EPISODE_KINDS))}",
            list(EPISODE_KINDS),
        )
        return int(row["c"]) if row is not None else 0

    # --- importing ------------------------------------------------------------------------

    def import_turns(
        self, turns: Sequence[Said], source: str, embedder: EmbedderLike | None = None
    ) -> dict[str, Any]:
        """Write `turns` as conversations: a session per label (in order of first turn), an
        event and an episode per turn, all in one transaction, embedded first when an
        embedder is given (else at the next `embed_missing`). Returns how many sessions and
        episodes were written, and the episodes' ids in the order of `turns`. The same turns
        imported again are `AlreadyImported`, and nothing is written."""
        if not turns:
            return {"sessions": 0, "episodes": 0, "ids": []}
        texts = [episode_text(t.speaker, t.text) for t in turns]
        digest = _digest(turns)
        if self._imported(digest):
            raise AlreadyImported(f"{source}: these turns were imported already; nothing written")
        vectors = None if embedder is None else np.asarray(embedder.embed(texts), np.float32)
        labels: dict[str, list[int]] = {}
        for i, t in enumerate(turns):
            labels.setdefault(t.session, []).append(i)
        ids = [""] * len(turns)
        with self.guard(), self.store.write() as conn:
            for label, idx in labels.items():
                times = [to_iso(turns[i].at) for i in idx]
                cur = conn.execute(
                    "INSERT INTO sessions (started_at, ended_at, meta) VALUES (?, ?, ?)",
                    (
                        min(times),
                        max(times),
                        json.dumps({"imported": source, "label": label, "digest": digest}),
                    ),
                )
                session_n = int(cur.lastrowid or 0)
                for i, at in zip(idx, times, strict=True):
                    t = turns[i]
                    # The user's and Annie's turns are logged as a live session logs them;
                    # other people's (a conversation among others) as what a name said.
                    kind, role, name = {
                        "user": ("user", "user", ""),
                        "annie": ("assistant", "assistant", ""),
                    }.get(t.speaker, ("said", "", t.speaker))
                    ev = conn.execute(
                        "INSERT INTO events (session_n, turn_id, kind, role, name, call_id,"
                        " content, tokens, created_at, meta) VALUES (?, '', ?, ?, ?, '', ?,"
                        " NULL, ?, ?)",
                        (
                            session_n,
                            kind,
                            role,
                            name,
                            t.text,
                            at,
                            json.dumps({"imported": source, "speaker": t.speaker}),
                        ),
                    )
                    n = self._write(
                        "episode",
                        t.speaker,
                        texts[i],
                        session_n,
                        make_id("events", int(ev.lastrowid or 0)),
                        at,
                        None if vectors is None else to_blob(vectors[i]),
                    )
                    ids[i] = make_id("notes", n)
        # The in-memory matrix reads the new rows, with their embeddings, at the next search.
        self.notes.vectors.forget()
        return {"sessions": len(labels), "episodes": len(ids), "ids": ids}
