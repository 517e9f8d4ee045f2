"""Numbered schema migrations, applied in order whenever a store is opened.

Each function takes the sqlite-utils `Database` and moves the schema forward one step; the
applied ones are recorded by `sqlite_utils.Migrations` in `_sqlite_migrations`, so opening a
file written by any earlier version upgrades it in place. Never edit a released migration:
add the next number.
"""

from __future__ import annotations

import sqlite3

from sqlite_utils import Database, Migrations

MIGRATION_SET = "annie"

migrations = Migrations(MIGRATION_SET)


def _script(db: Database, sql: str) -> None:
    """Run several statements inside the caller's transaction.

    `executescript` would commit first, so a failed migration could leave half a schema;
    statements are split with `sqlite3.complete_statement` (trigger bodies hold semicolons).
    """
    buffer = ""
    for line in sql.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            db.execute(buffer.strip())
            buffer = ""
    if buffer.strip():
        raise ValueError(f"incomplete SQL statement in migration: {buffer.strip()[:80]}")


@migrations()
def m001_create_tables(db: Database) -> None:
    # Raw DDL: AUTOINCREMENT keys (ids never reused after a delete) and CHECK constraints
    # (a bad pending value is refused by the file itself, not only by the code).
    _script(
        db,
        """
        CREATE TABLE sessions (
            n INTEGER PRIMARY KEY AUTOINCREMENT,
            started_at TEXT NOT NULL,
            ended_at TEXT,
            meta TEXT NOT NULL DEFAULT '{}'
        );
        CREATE TABLE events (
            n INTEGER PRIMARY KEY AUTOINCREMENT,
            session_n INTEGER NOT NULL REFERENCES sessions(n),
            turn_id TEXT NOT NULL DEFAULT '',
            kind TEXT NOT NULL,
            role TEXT NOT NULL DEFAULT '',
            name TEXT NOT NULL DEFAULT '',
            call_id TEXT NOT NULL DEFAULT '',
            content TEXT NOT NULL,
            tokens INTEGER,
            created_at TEXT NOT NULL,
            meta TEXT NOT NULL DEFAULT '{}'
        );
        CREATE INDEX events_session ON events(session_n, n);
        CREATE INDEX events_turn ON events(turn_id);
        CREATE TABLE notes (
            n INTEGER PRIMARY KEY AUTOINCREMENT,
            kind TEXT NOT NULL DEFAULT 'note',
            source TEXT NOT NULL DEFAULT '',
            text TEXT NOT NULL,
            embedding BLOB,
            created_at TEXT NOT NULL
        );
        CREATE INDEX notes_kind ON notes(kind, created_at);
        CREATE TABLE tasks (
            n INTEGER PRIMARY KEY AUTOINCREMENT,
            title TEXT NOT NULL,
            status TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'blocked', 'done')),
            pending TEXT NOT NULL DEFAULT 'none'
                CHECK (pending IN ('none', 'user', 'assistant', 'external')),
            due TEXT,
            source TEXT NOT NULL DEFAULT 'user',
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        );
        CREATE INDEX tasks_pending ON tasks(pending, status);
        CREATE INDEX tasks_status ON tasks(status, due);
        CREATE TABLE reminders (
            n INTEGER PRIMARY KEY AUTOINCREMENT,
            text TEXT NOT NULL,
            due TEXT NOT NULL,
            status TEXT NOT NULL DEFAULT 'scheduled',
            created_at TEXT NOT NULL
        );
        CREATE INDEX reminders_due ON reminders(due);
        CREATE TABLE approvals (
            n INTEGER PRIMARY KEY AUTOINCREMENT,
            tool TEXT NOT NULL,
            params TEXT NOT NULL,
            requester TEXT NOT NULL DEFAULT '',
            status TEXT NOT NULL DEFAULT 'pending',
            created_at TEXT NOT NULL,
            expires_at TEXT NOT NULL,
            resolved_at TEXT,
            result TEXT NOT NULL DEFAULT ''
        );
        CREATE INDEX approvals_status ON approvals(status, n);
        CREATE TABLE checkpoints (
            n INTEGER PRIMARY KEY AUTOINCREMENT,
            session_n INTEGER,
            tier INTEGER NOT NULL,
            data TEXT NOT NULL,
            summary TEXT NOT NULL DEFAULT '',
            tail_event_ids TEXT NOT NULL DEFAULT '[]',
            created_at TEXT NOT NULL
        );
        CREATE INDEX checkpoints_session ON checkpoints(session_n, n);
        """,
    )


@migrations()
def m002_notes_fts(db: Database) -> None:
    # External-content FTS5 index kept in step with `notes` by triggers, so a note written by
    # any connection is searchable at once. Porter stemming lets "invoices" find "invoice".
    _script(
        db,
        """
        CREATE VIRTUAL TABLE notes_fts USING fts5(
            text, content='notes', content_rowid='n', tokenize='porter unicode61'
        );
        CREATE TRIGGER notes_ai AFTER INSERT ON notes BEGIN
            INSERT INTO notes_fts(rowid, text) VALUES (new.n, new.text);
        END;
        CREATE TRIGGER notes_ad AFTER DELETE ON notes BEGIN
            INSERT INTO notes_fts(notes_fts, rowid, text) VALUES ('delete', old.n, old.text);
        END;
        CREATE TRIGGER notes_au AFTER UPDATE OF text ON notes BEGIN
            INSERT INTO notes_fts(notes_fts, rowid, text) VALUES ('delete', old.n, old.text);
            INSERT INTO notes_fts(rowid, text) VALUES (new.n, new.text);
        END;
        INSERT INTO notes_fts(notes_fts) VALUES ('rebuild');
        """,
    )


@migrations()
def m003_turn_metrics(db: Database) -> None:
    _script(
        db,
        """
        CREATE TABLE turn_metrics (
            n INTEGER PRIMARY KEY AUTOINCREMENT,
            session_n INTEGER,
            turn_id TEXT NOT NULL,
            path TEXT NOT NULL,
            stages TEXT NOT NULL,
            total_ms REAL NOT NULL,
            created_at TEXT NOT NULL
        );
        CREATE INDEX turn_metrics_session ON turn_metrics(session_n, n);
        """,
    )


@migrations()
def m004_state_path_indexes(db: Database) -> None:
    # Partial indexes whose WHERE matches the state path's queries word for word, so the
    # pending and due lookups stay index-only at tens of thousands of tasks.
    _script(
        db,
        """
        DROP INDEX IF EXISTS tasks_pending;
        DROP INDEX IF EXISTS tasks_status;
        CREATE INDEX tasks_pending_open ON tasks(pending, n)
            WHERE pending != 'none' AND status != 'done';
        CREATE INDEX tasks_due_open ON tasks(due) WHERE status != 'done';
        CREATE INDEX tasks_status_n ON tasks(status, n);
        CREATE INDEX tasks_updated ON tasks(updated_at);
        CREATE INDEX reminders_open_due ON reminders(status, due);
        """,
    )


@migrations()
def m005_reminder_firing(db: Database) -> None:
    # Reminders that fire: when one fell due (`fired_at`), when and in which session it was
    # said (`announced_at`, `announced_in`), and timers as reminders with a duration. The
    # status is CHECKed from here on (a rebuilt table), so a typo cannot strand a reminder
    # in a state the scheduler never reads.
    _script(
        db,
        """
        CREATE TABLE reminders_new (
            n INTEGER PRIMARY KEY AUTOINCREMENT,
            text TEXT NOT NULL,
            due TEXT NOT NULL,
            status TEXT NOT NULL DEFAULT 'scheduled'
                CHECK (status IN ('scheduled', 'fired', 'announced', 'done', 'cancelled')),
            created_at TEXT NOT NULL,
            kind TEXT NOT NULL DEFAULT 'reminder' CHECK (kind IN ('reminder', 'timer')),
            duration_s REAL,
            fired_at TEXT,
            announced_at TEXT,
            announced_in TEXT NOT NULL DEFAULT '',
            updated_at TEXT
        );
        INSERT INTO reminders_new (n, text, due, status, created_at, updated_at)
            SELECT n, text, due,
                CASE WHEN status IN ('scheduled', 'fired', 'announced', 'done', 'cancelled')
                    THEN status ELSE 'scheduled' END,
                created_at, created_at
            FROM reminders;
        DROP TABLE reminders;
        ALTER TABLE reminders_new RENAME TO reminders;
        CREATE INDEX reminders_due ON reminders(due);
        CREATE INDEX reminders_open_due ON reminders(status, due);
        """,
    )


@migrations()
def m006_note_supersession(db: Database) -> None:
    # A correction supersedes the note it corrects: the old note is kept (the record of what
    # was said) but points at its replacement, and search, recall and the briefing skip it.
    # The partial index keeps "which notes are superseded" cheap at any number of notes.
    _script(
        db,
        """
        ALTER TABLE notes ADD COLUMN superseded_by INTEGER;
        CREATE INDEX notes_superseded ON notes(n) WHERE superseded_by IS NOT NULL;
        """,
    )


@migrations()
def m007_note_provenance_and_mood(db: Database) -> None:
    # Notes gain their provenance: a version (corrections behind it), a confidence, a
    # sensitivity ("private" keeps a note out of any prompt a tool can send off the machine),
    # an expiry, the record's own time (a note's freshness), the event whose words it came
    # from, and the current note it contradicts until the user says which stands. Existing
    # notes become version 1, fully trusted, normal, never expiring, as fresh as written.
    # `moods` keeps what the user said about how they feel, in their own words, per session.
    _script(
        db,
        """
        ALTER TABLE notes ADD COLUMN version INTEGER NOT NULL DEFAULT 1;
        ALTER TABLE notes ADD COLUMN confidence REAL NOT NULL DEFAULT 1.0;
        ALTER TABLE notes ADD COLUMN sensitivity TEXT NOT NULL DEFAULT 'normal'
            CHECK (sensitivity IN ('normal', 'private'));
        ALTER TABLE notes ADD COLUMN expires_at TEXT;
        ALTER TABLE notes ADD COLUMN updated_at TEXT;
        ALTER TABLE notes ADD COLUMN source_event TEXT NOT NULL DEFAULT '';
        ALTER TABLE notes ADD COLUMN contradicts INTEGER;
        UPDATE notes SET updated_at = created_at;
        CREATE INDEX notes_private ON notes(n) WHERE sensitivity = 'private';
        CREATE INDEX notes_contradicting ON notes(n) WHERE contradicts IS NOT NULL;
        CREATE TABLE moods (
            n INTEGER PRIMARY KEY AUTOINCREMENT,
            session_n INTEGER,
            event_id TEXT NOT NULL DEFAULT '',
            feeling TEXT NOT NULL,
            verb TEXT NOT NULL DEFAULT 'be' CHECK (verb IN ('be', 'feel')),
            words TEXT NOT NULL,
            said_at TEXT NOT NULL
        );
        CREATE INDEX moods_session ON moods(session_n, n);
        """,
    )


@migrations()
def m008_devices(db: Database) -> None:
    # Paired devices (a phone, a laptop): each has its own long-lived token, of which only the
    # SHA-256 is kept, so the file never holds a credential. A revoked device stays listed
    # (when it was revoked is the answer to its next request); an active name is unique, so
    # "revoke Kitchen phone" names one device.
    _script(
        db,
        """
        CREATE TABLE devices (
            n INTEGER PRIMARY KEY AUTOINCREMENT,
            name TEXT NOT NULL,
            token_hash TEXT NOT NULL UNIQUE CHECK (length(token_hash) = 64),
            created_at TEXT NOT NULL,
            last_seen_at TEXT,
            revoked_at TEXT
        );
        CREATE UNIQUE INDEX devices_active_name ON devices(name COLLATE NOCASE)
            WHERE revoked_at IS NULL;
        """,
    )


@migrations()
def m009_episodes(db: Database) -> None:
    # What was said is remembered beside what was written down: each user turn and each
    # answer is a row of the notes table (kind 'episode'; a session summary, 'summary'), so
    # one search, one name index and one recall serve both. An episode keeps its session and
    # who spoke; it is written with its event, before its embedding exists, so the partial
    # index finds the rows still to embed at any size.
    _script(
        db,
        """
        ALTER TABLE notes ADD COLUMN session_n INTEGER;
        ALTER TABLE notes ADD COLUMN speaker TEXT NOT NULL DEFAULT '';
        CREATE INDEX notes_session ON notes(session_n, n) WHERE session_n IS NOT NULL;
        CREATE INDEX notes_unembedded ON notes(n) WHERE embedding IS NULL;
        """,
    )


@migrations()
def m010_private_version(db: Database) -> None:
    # Every outgoing request is checked against the private items (context/egress.py), which
    # first asks whether they changed since its index was built. A counter the database
    # moves on every change to a private row answers in one row read; counting the rows
    # took milliseconds at ten thousand of them, on every request.
    _script(
        db,
        """
        CREATE TABLE private_version (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            version INTEGER NOT NULL
        );
        INSERT INTO private_version (id, version) VALUES (1, 0);
        CREATE TRIGGER private_insert AFTER INSERT ON notes WHEN NEW.sensitivity = 'private'
        BEGIN UPDATE private_version SET version = version + 1 WHERE id = 1; END;
        CREATE TRIGGER private_update AFTER UPDATE OF sensitivity, text ON notes
        WHEN OLD.sensitivity = 'private' OR NEW.sensitivity = 'private'
        BEGIN UPDATE private_version SET version = version + 1 WHERE id = 1; END;
        CREATE TRIGGER private_delete AFTER DELETE ON notes WHEN OLD.sensitivity = 'private'
        BEGIN UPDATE private_version SET version = version + 1 WHERE id = 1; END;
        """,
    )


@migrations()
def m011_approval_target(db: Database) -> None:
    # An approval keeps what it touches in words, taken when it was asked ("delete the note
    # 'Leo is allergic to peanuts'"): the state path, the page and an expiry notice say that,
    # never a raw parameter or an id, and it stays true if the note changes meanwhile.
    _script(db, "ALTER TABLE approvals ADD COLUMN target TEXT NOT NULL DEFAULT '';")


def migration_names() -> list[str]:
    """Every migration in order (the last one is the current schema version)."""
    return [m.name for m in migrations._migrations]
