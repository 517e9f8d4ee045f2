"""Reading conversations written elsewhere, for import as episodes (`memory.episodes`).

Two forms are read:
- JSON Lines, one turn a line: `{"session": "...", "at": "ISO date-time", "speaker": "user" |
  "annie" | a name, "text": "..."}`. A time without a zone is local time.
- LoCoMo's per-conversation JSON (snap-research/locomo, `locomo10_v2/N.json`): `session_N`
  lists of `{"speaker", "dia_id", "text"}` with `session_N_date_time` ("1:56 pm on 8 May,
  2023"); both speakers are imported by name, and a shared photo's caption is kept with the
  words, as the turn showed it.

A malformed line or field is a `TranscriptError` naming where it is, raised before anything is
written. Each turn keeps a reference (`Said.ref`: its line, or LoCoMo's `dia_id`), so a
benchmark can tell which episode is which turn.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from memory.episodes import Said


class TranscriptError(ValueError):
    """A file that cannot be imported; the message names the line or field and why."""


@dataclass(frozen=True)
class Transcript:
    """The turns of a file, in order, and what kind of file it was."""

    turns: list[Said]
    refs: list[str]
    form: str  # "jsonl" or "locomo"


# LoCoMo's turns carry no time of their own: each is placed this long after the one before,
# from its session's start, so their order survives and they stay within the session's day.
TURN_GAP = timedelta(seconds=30)
_LOCOMO_TIME = re.compile(
    r"^\s*(\d{1,2}):(\d{2})\s*([ap]m)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})\s*$", re.I
)
_SESSION = re.compile(r"^session_(\d+)$")


def read(path: Path) -> Transcript:
    """The turns in `path` (JSON Lines, or LoCoMo's JSON); TranscriptError if malformed."""
    try:
        raw = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise TranscriptError(f"{path}: cannot read ({exc.strerror or exc})") from exc
    except UnicodeDecodeError as exc:
        raise TranscriptError(f"{path}: not UTF-8 text ({exc.reason})") from exc
    stripped = raw.lstrip()
    if stripped.startswith("{"):
        # One JSON object over the whole file is LoCoMo; else each line is a turn.
        try:
            whole = json.loads(raw)
        except (json.JSONDecodeError, RecursionError):
            whole = None
        if isinstance(whole, dict) and any(_SESSION.match(k) for k in whole):
            return locomo(whole, str(path))
    return jsonl(raw, str(path))


def jsonl(raw: str, name: str = "input") -> Transcript:
    """Turns from JSON Lines text; blank lines are skipped."""
    turns: list[Said] = []
    refs: list[str] = []
    for number, line in enumerate(raw.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{name}, line {number}"
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise TranscriptError(f"{where}: not JSON ({exc.msg})") from exc
        except RecursionError as exc:  # the parser recurses per bracket
            raise TranscriptError(f"{where}: not JSON (nested too deeply)") from exc
        if not isinstance(row, dict):
            raise TranscriptError(f"{where}: expected an object with session, at, speaker, text")
        missing = [k for k in ("session", "at", "speaker", "text") if k not in row]
        if missing:
            raise TranscriptError(f"{where}: missing {', '.join(missing)}")
        session, speaker, text = row["session"], row["speaker"], row["text"]
        for key, value in (("session", session), ("speaker", speaker), ("text", text)):
            if not isinstance(value, str) or not value.strip():
                raise TranscriptError(f"{where}: {key} must be a non-empty string")
        turns.append(Said(session.strip(), _when(row["at"], where), speaker.strip(), text))
        refs.append(f"line {number}")
    if not turns:
        raise TranscriptError(f"{name}: no turns (expected one JSON object a line)")
    return Transcript(turns, refs, "jsonl")


def _when(value: Any, where: str) -> datetime:
    if not isinstance(value, str):
        raise TranscriptError(f"{where}: at must be an ISO date-time string")
    try:
        at = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError as exc:
        raise TranscriptError(f"{where}: at {value!r} is not an ISO date-time") from exc
    return at if at.tzinfo is not None else at.astimezone()


def locomo_time(value: str) -> datetime | None:
    """LoCoMo's "1:56 pm on 8 May, 2023" as a local time; None if it does not read."""
    m = _LOCOMO_TIME.match(value or "")
    if m is None:
        return None
    hour, minute, half, day, month, year = m.groups()
    try:
        month_n = datetime.strptime(month[:3].title(), "%b").month
        h = int(hour) % 12 + (12 if half.lower() == "pm" else 0)
        return datetime(int(year), month_n, int(day), h, int(minute)).astimezone()
    except ValueError:
        return None


def locomo(data: dict[str, Any], name: str = "input") -> Transcript:
    """Turns from one LoCoMo conversation (sessions in number order)."""
    numbers = sorted(int(m.group(1)) for k in data if (m := _SESSION.match(k)))
    turns: list[Said] = []
    refs: list[str] = []
    for n in numbers:
        listed = data[f"session_{n}"]
        if not isinstance(listed, list):
            raise TranscriptError(f"{name}: session_{n} is not a list of turns")
        if not listed:
            continue
        stamp = data.get(f"session_{n}_date_time", "")
        start = locomo_time(stamp) if isinstance(stamp, str) else None
        if start is None:
            raise TranscriptError(
                f"{name}: session_{n}_date_time {stamp!r} is not like '1:56 pm on 8 May, 2023'"
            )
        for i, turn in enumerate(listed):
            where = f"{name}, session_{n} turn {i + 1}"
            if not isinstance(turn, dict):
                raise TranscriptError(f"{where}: expected an object with speaker and text")
            speaker, text = turn.get("speaker"), turn.get("text")
            if not isinstance(speaker, str) or not speaker.strip():
                raise TranscriptError(f"{where}: speaker must be a non-empty string")
            if not isinstance(text, str):
                raise TranscriptError(f"{where}: text must be a string")
            caption = turn.get("blip_caption")
            if isinstance(caption, str) and caption.strip():
                text = f"{text} [shares a photo: {caption.strip()}]".strip()
            if not text.strip():
                continue
            turns.append(Said(f"session {n}", start + i * TURN_GAP, speaker.strip(), text))
            refs.append(str(turn.get("dia_id", f"D{n}:{i + 1}")))
    if not turns:
        raise TranscriptError(f"{name}: no turns in any session_N list")
    return Transcript(turns, refs, "locomo")
