"""Tool attempts and failures, by rules from the event log: what was tried and what failed.

A tool call is identified by its tool and its exact arguments (`call_key`): two calls with the
same key are the same attempt. An attempt records the tool, the arguments as the exact JSON the
model wrote (as the log stores them), the outcome and the id of the result event; a failure is
an attempt whose result was an error, with the error itself. A failure stands until the same
call succeeds. `earlier_failure` reads a session's log to tell the tool runner that a call it is
about to run already failed, unless the user asked since to try again.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, fields
from datetime import UTC, datetime
from typing import Any

from memory.rows import parse_id

# A failure's error is kept whole up to this length; longer ones keep their start, which says
# what went wrong (the rest is in the log under the result's id).
ERROR_CHARS = 300
# Tools that manage the context itself rather than do the user's work: not attempts.
PLUMBING = ("load_tool_group", "get_context")
# The user's words that ask for a failed call to run again.
_RETRY = re.compile(
    r"\b(again|retry|re-try|one more (time|try|go)|another (go|try|attempt))\b", re.IGNORECASE
)


@dataclass
class Attempt:
    """One tool call and how it ended: `outcome` is "ok" or "failed" (then `error` says why)."""

    tool: str
    arguments: str
    outcome: str = "ok"
    id: str = ""
    error: str = ""
    at: str = ""

    @property
    def key(self) -> str:
        return call_key(self.tool, _parsed(self.arguments))

    @property
    def failed(self) -> bool:
        return self.outcome != "ok"

    def failure_line(self) -> str:
        """The failure as the model reads it; exact, so the finished context can be checked."""
        return f"{self.tool} {self.arguments} failed ({self.id}): {self.error}"

    def attempt_line(self) -> str:
        return f"{self.tool} {self.arguments} -> {self.outcome} ({self.id})"

    def to_json(self) -> dict[str, str]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Any) -> Attempt | None:
        """An attempt from a stored checkpoint; None for an entry that is not one."""
        if not isinstance(data, dict) or not data.get("tool"):
            return None
        names = {f.name for f in fields(cls)}
        return cls(**{k: str(v) for k, v in data.items() if k in names})


def arguments_json(arguments: dict[str, Any]) -> str:
    """The arguments as the runtime logs a call: the model's order, non-ASCII kept."""
    return json.dumps(arguments, ensure_ascii=False)


def call_key(tool: str, arguments: Any) -> str:
    """What makes two calls the same: the tool and its arguments, key order aside."""
    return f"{tool} {json.dumps(arguments, ensure_ascii=False, sort_keys=True)}"


def _parsed(text: str) -> Any:
    try:
        return json.loads(text)
    except (json.JSONDecodeError, TypeError):
        return text


def error_text(content: str) -> str:
    text = " ".join(content.split())
    return text if len(text) <= ERROR_CHARS else text[: ERROR_CHARS - 1] + "…"


def iso_time(value: float | str) -> str:
    """A time as ISO 8601 UTC to the second ("" for none)."""
    if isinstance(value, str):
        return value
    if not value:
        return ""
    return datetime.fromtimestamp(value, UTC).isoformat(timespec="seconds")


def shown_time(value: str) -> str:
    """An ISO time as a person reads it: "2026-12-02 21:53 UTC" (a time without a zone as is)."""
    text = value.strip()
    if not text:
        return ""
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        return text
    if when.tzinfo is None:
        return when.isoformat(sep=" ", timespec="minutes") if "T" in text else text
    return when.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def record(attempts: list[Attempt], failures: list[Attempt], attempt: Attempt) -> None:
    """Add one finished call: the newest attempt of a key replaces an older one; a failure is
    kept once per key (its first error), and the same call succeeding settles it."""
    key = attempt.key
    if attempt.tool not in PLUMBING:
        attempts[:] = [a for a in attempts if a.key != key]
        attempts.append(attempt)
    if attempt.failed:
        if all(f.key != key for f in failures):
            failures.append(attempt)
    else:
        failures[:] = [f for f in failures if f.key != key]


def merge_attempts(earlier: list[Attempt], later: list[Attempt], cap: int) -> list[Attempt]:
    """Every attempt by key, the later one winning, newest last; the newest `cap` are kept."""
    out: list[Attempt] = []
    for a in [*earlier, *later]:
        out = [b for b in out if b.key != a.key]
        out.append(a)
    return out[-cap:]


def merge_failures(
    earlier: list[Attempt], later: list[Attempt], later_attempts: list[Attempt]
) -> list[Attempt]:
    """Every failure of both, once per key, except one the later span saw succeed."""
    settled = {a.key for a in later_attempts if not a.failed}
    out = [f for f in earlier if f.key not in settled]
    seen = {f.key for f in out}
    for f in later:
        if f.key not in seen:
            seen.add(f.key)
            out.append(f)
    return out


def asks_to_retry(text: str) -> bool:
    return bool(_RETRY.search(text))


def earlier_failure(
    store: Any, session_id: str, tool: str, arguments: dict[str, Any]
) -> Attempt | None:
    """The failure of this exact call earlier in the session, if it still stands.

    It stands when the latest error of the same tool with the same arguments (key order aside)
    was the tool's own (a result logged with `ok` false and no `not_run`: a call refused or
    interrupted before it ran says nothing about the call) and no user turn since asked to try
    again. With this guard in the runner, the same call cannot have run since without such a
    turn, so no later success needs looking for. Reads the event log; None without a store.
    A call with no failure of its tool behind it costs one indexed query."""
    if store is None or not session_id:
        return None
    key = call_key(tool, arguments)
    for result in store.events.failed_results(session_id, tool):
        if result.meta.get("not_run"):
            continue
        call = _call_of(store, session_id, result)
        if call is None or call_key(tool, _parsed(call.content)) != key:
            continue
        since = store.events.find(session_id, kinds=["user"], since=result.id)
        if any(asks_to_retry(e.content) for e in since):
            return None
        error = error_text(result.content)
        return Attempt(tool, call.content, "failed", result.id, error, result.created_at)
    return None


def _n(event_id: str) -> int:
    return parse_id("events", event_id)


def _call_of(store: Any, session_id: str, result: Any) -> Any:
    """The call a result answers: the last before it in its turn with its call id."""
    calls = store.events.find(session_id, kinds=["tool_call"], turn_id=result.turn_id)
    before = [c for c in calls if c.call_id == result.call_id and _n(c.id) < _n(result.id)]
    return before[-1] if before else None
