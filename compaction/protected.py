"""Protected items, found by rules in the event log: corrections, stated facts, commitments (with
when they were made and fall due), the user's plan and blockers, tool attempts and failures, ids.

These are the entries a summary must never lose. They are extracted deterministically from what
the user and the assistant actually said (and from tool calls, their arguments and whether their
results were errors), verbatim, so an exact string can later be checked against the finished
context. Model prose is never the source.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from compaction.attempts import Attempt, arguments_json, error_text, record
from compaction.checkpoint import Checkpoint, is_time_fragment

# A user turn that corrects something earlier. Matched per sentence, case-insensitively.
_CORRECTION = re.compile(
    r"\b(actually|correction|i meant|i mean,|that's wrong|that is wrong|that's not right|"
    r"not quite|i said .+ not|no, it'?s|no, my|rather than|instead of)\b|,\s*not\s+\w+",
    re.IGNORECASE,
)
# A user sentence stating something about themselves worth keeping across a summary.
_FACT = re.compile(
    r"\b(my [\w' -]{2,40}? (is|are|was|were)\b|i (like|love|prefer|hate|dislike|am allergic"
    r"|live|work|was born)\b|remember that\b|don't forget\b)",
    re.IGNORECASE,
)
# Assistant promises that outlive the turn.
_COMMITMENT = re.compile(
    r"\b(i'll remind|i will remind|remind you|i'll follow up|i will follow up|i'll get back|"
    r"i will get back|i promise|i'll make sure|i will make sure|i've added a task|"
    r"i'll check back|i will check back)\b",
    re.IGNORECASE,
)
# Identifiers a user may come back to: booking codes, order numbers, ticket refs, URLs.
_IDS = re.compile(
    r"https?://[^\s\"'<>)\]]+"
    r"|#\d{3,}"
    r"|\b(?=[A-Za-z0-9-]*\d)(?=[A-Za-z0-9-]*[A-Z])[A-Za-z0-9]+(?:-[A-Za-z0-9]+)+\b"
)
# The user setting out steps: "first X, then Y", "step one ...", "the plan is ...". A sentence
# that opens a sequence counts only with a next step in it or in the sentence after it.
_PLAN_START = re.compile(r"\b(first|to start|to begin|step (one|1))\b", re.IGNORECASE)
_PLAN_NEXT = re.compile(
    r"\b(then|after that|afterwards|next|finally|step (two|2)|second(ly)?)\b", re.IGNORECASE
)
_PLAN_STATED = re.compile(r"\b(the|my|our) plan is\b|\bplan:", re.IGNORECASE)
# The user saying what holds the work up.
_BLOCKER = re.compile(
    r"\b(blocked (on|by)|stuck (on|until)|held up by|(is|are) on hold|"
    r"(i'?m|i am|we'?re|we are|still) waiting (for|on|until)|can'?t [\w' ]{1,40}? until)\b",
    re.IGNORECASE,
)
# Argument names that carry when a task or reminder falls due.
_DUE_KEYS = ("due", "due_at", "when", "at", "time", "remind_at")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
# Abbreviations that end in a period without ending the sentence ("Dr. Okafor").
_ABBREVIATIONS = ("dr.", "mr.", "mrs.", "ms.", "st.", "prof.", "e.g.", "i.e.", "vs.", "ave.")

# What a tool call can record that a checkpoint must keep: each tool says which in its own
# metadata (`bot.tools.base.Tool.protects`), and the hooks get the mapping tool name -> kind.
ProtectedKind = Literal["task", "reminder", "note", "approval"]


@dataclass(frozen=True)
class LogEntry:
    """One model-visible event, reduced to what the rules read."""

    id: str
    kind: str  # user | assistant | tool_call | tool_result | summary | ...
    text: str = ""
    name: str = ""
    arguments: dict[str, Any] = field(default_factory=dict)
    # Pairs a tool call with its result; `ok` is false for a result that is an error.
    call_id: str = ""
    ok: bool = True
    # When it happened (ISO 8601), where known.
    at: str = ""


def sentences(text: str) -> list[str]:
    out: list[str] = []
    for piece in _SENTENCE.split(text.strip()):
        piece = piece.strip()
        if not piece:
            continue
        if out and out[-1].lower().endswith(_ABBREVIATIONS):
            out[-1] = f"{out[-1]} {piece}"
        else:
            out.append(piece)
    return out


def _user_sentence_matches(text: str, pattern: re.Pattern[str]) -> list[str]:
    return [s for s in sentences(text) if pattern.search(s)]


def is_correction(text: str) -> bool:
    return any(_CORRECTION.search(s) for s in sentences(text))


def find_ids(text: str) -> list[str]:
    """Codes, references and URLs in `text`; a date-time is not one (a due time is kept with
    its commitment, and "2026-09-01T23" of "2026-09-01T23:00" would read as a code)."""
    out: list[str] = []
    for match in _IDS.finditer(text):
        value = match.group(0).rstrip(".,;:")
        if value not in out and not is_time_fragment(value):
            out.append(value)
    return out


def _argument_text(arguments: dict[str, Any]) -> str:
    for key in ("text", "content", "note", "title", "task", "description"):
        value = arguments.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return json.dumps(arguments, sort_keys=True, ensure_ascii=False)


def extract(entries: Iterable[LogEntry], protects: Mapping[str, str] | None = None) -> Checkpoint:
    """The protected fields of a checkpoint, from the event log alone.

    `protects` maps a tool name to the `ProtectedKind` its calls record; a note's text goes
    to the notes, a task's or reminder's to the commitments. Approvals are not read from
    calls: they are protected from their live table (`compaction.tables`).
    """
    kinds = protects or {}
    cp = Checkpoint()
    calls: list[LogEntry] = []  # calls still waiting for their result
    for entry in entries:
        if entry.kind == "user":
            for s in _user_sentence_matches(entry.text, _CORRECTION):
                if s not in cp.corrections:
                    cp.corrections.append(s)
            for s in _user_sentence_matches(entry.text, _FACT):
                if s not in cp.facts and s not in cp.corrections:
                    cp.facts.append(s)
            _add_all(cp.plan, plan_sentences(entry.text))
            _add_all(cp.blockers, _user_sentence_matches(entry.text, _BLOCKER))
            _add_ids(cp, entry.text)
        elif entry.kind == "assistant":
            for s in _user_sentence_matches(entry.text, _COMMITMENT):
                _commit(cp, s, entry.at)
            _add_ids(cp, entry.text)
        elif entry.kind == "tool_result":
            call = _answered(calls, entry)
            if call is not None:
                outcome = "ok" if entry.ok else "failed"
                error = "" if entry.ok else error_text(entry.text)
                args = arguments_json(call.arguments)
                attempt = Attempt(call.name, args, outcome, entry.id, error, entry.at)
                record(cp.attempts, cp.failures, attempt)
        elif entry.kind == "tool_call":
            calls.append(entry)
            kind = kinds.get(entry.name)
            if kind == "note":
                note = _argument_text(entry.arguments)
                if note not in cp.notes:
                    cp.notes.append(note)
            elif kind in ("task", "reminder"):
                _commit(cp, _argument_text(entry.arguments), entry.at, _due(entry.arguments))
            for value in entry.arguments.values():
                if isinstance(value, str):
                    # URLs a tool fetched stay in the log by call id; only the user's own
                    # references (codes, order numbers) are worth carrying forward.
                    _add_ids(cp, value, urls=False)
    return cp


def _answered(calls: list[LogEntry], result: LogEntry) -> LogEntry | None:
    """The call `result` answers (by call id; else the latest of its tool), taken off `calls`."""
    found = [c for c in calls if result.call_id and c.call_id == result.call_id]
    found = found or [c for c in calls if c.name == result.name]
    if not found:
        return None
    calls.remove(found[-1])
    return found[-1]


def plan_sentences(text: str) -> list[str]:
    """The user's stated steps, verbatim: a sentence that opens a sequence together with the
    next step (in it or the sentence after), or one that says what the plan is."""
    said = sentences(text)
    out: list[str] = []
    for i, s in enumerate(said):
        start = _PLAN_START.search(s)
        if _PLAN_STATED.search(s) or (start is not None and _PLAN_NEXT.search(s, start.end())):
            out.append(s)
        elif start is not None and i + 1 < len(said) and _PLAN_NEXT.search(said[i + 1]):
            out.append(f"{s} {said[i + 1]}")
    return out


def _add_all(into: list[str], found: list[str]) -> None:
    for s in found:
        if s not in into:
            into.append(s)


def _due(arguments: dict[str, Any]) -> str:
    for key in _DUE_KEYS:
        value = arguments.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return ""


def _commit(cp: Checkpoint, text: str, said: str, due: str = "") -> None:
    """A commitment and its times: when it was first made, and the latest due time given."""
    if text not in cp.commitments:
        cp.commitments.append(text)
    when = cp.commitment_times.setdefault(text, {})
    if said and not when.get("said"):
        when["said"] = said
    if due:
        when["due"] = due
    if not when:
        del cp.commitment_times[text]


def _add_ids(cp: Checkpoint, text: str, *, urls: bool = True) -> None:
    for value in find_ids(text):
        if not urls and value.startswith(("http://", "https://")):
            continue
        if value not in cp.ids:
            cp.ids.append(value)


def first_request(entries: Iterable[LogEntry]) -> str:
    """A fallback goal: the first substantive thing the user asked for."""
    for entry in entries:
        if entry.kind == "user" and len(entry.text.split()) >= 3:
            return entry.text.strip()[:200]
    return ""


def open_questions(entries: list[LogEntry]) -> list[str]:
    """Questions the assistant put to the user that the user's next turn did not settle."""
    out: list[str] = []
    for i, entry in enumerate(entries):
        if entry.kind != "assistant" or not entry.text.rstrip().endswith("?"):
            continue
        replied = any(e.kind == "user" for e in entries[i + 1 :])
        if not replied:
            out.append(sentences(entry.text)[-1])
    return out


def entry_from_event(
    event_id: str,
    kind: str,
    content: str,
    name: str = "",
    *,
    call_id: str = "",
    ok: bool = True,
    at: str = "",
) -> LogEntry:
    """A stored event as a LogEntry; tool-call content may be JSON arguments or a call object."""
    arguments: dict[str, Any] = {}
    if kind == "state_answer":
        kind = "assistant"
    if kind == "tool_call":
        try:
            data = json.loads(content)
        except (json.JSONDecodeError, TypeError):
            data = None
        if isinstance(data, dict):
            inner = data.get("arguments")
            arguments = inner if isinstance(inner, dict) else data
            name = name or str(data.get("name", ""))
    return LogEntry(event_id, kind, content, name, arguments, call_id, ok, at)


def entry_from_row(event: Any) -> LogEntry:
    """An `EventRow` from the store as a LogEntry, with its call id, outcome and time."""
    ok = bool(event.meta.get("ok", True)) if isinstance(event.meta, dict) else True
    return entry_from_event(
        event.id,
        event.kind,
        event.content,
        event.name,
        call_id=event.call_id,
        ok=ok,
        at=event.created_at,
    )
