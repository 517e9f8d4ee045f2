"""The model calls of sessions, read back from the event log: manifests and engine figures.

Every model call logs its manifest (kind "manifest", meta round) and what it cost the engine
(kind "model_call"). `read_calls` reads them back; `report` gives, over the first call of
each turn (the one the user waits for), input tokens p50/p95 in all, by component (the
manifest's admitted entries by kind, the template's framing as "template") and by lane; the
tokens each turn's calls evaluated (prefix reuse counted); the omissions (items left out, by
lane and reason); and the calls the assembler had to trim (overflows).
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

from bench.state_routing import pct
from memory.store import Store


@dataclass
class Call:
    """One model call as its manifest and engine figures recorded it."""

    session_id: str
    turn_id: str
    round: int
    used: int
    limit: int
    by_lane: dict[str, int]
    by_component: dict[str, int]
    omissions: list[dict[str, Any]]
    overflow: bool
    evaluated: int | None = None


@dataclass
class Turns:
    """The calls of the sessions read, with each turn's evaluated tokens (None: not reported)."""

    sessions: list[str] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)
    evaluated: dict[str, int | None] = field(default_factory=dict)

    @property
    def first_calls(self) -> list[Call]:
        return [c for c in self.calls if c.round == 0]


def components(manifest: dict[str, Any]) -> dict[str, int]:
    """Tokens by component: the manifest's own split when it has one, else its admitted
    entries by kind, with the chat template's framing as "template"."""
    given = manifest.get("by_component")
    if isinstance(given, dict):
        return {str(k): int(v) for k, v in given.items()}
    out: dict[str, int] = defaultdict(int)
    for entry in manifest.get("admitted") or []:
        out[str(entry.get("kind") or entry.get("source_id"))] += int(entry.get("tokens", 0))
    framing = int(manifest.get("used", 0)) - sum(out.values())
    if framing > 0:
        out["template"] = framing
    return dict(out)


def read_calls(store: Store, session_ids: list[str]) -> Turns:
    """The manifests and engine figures of these sessions' model calls, in log order."""
    turns = Turns(sessions=list(session_ids))
    for sid in session_ids:
        for ev in store.events.find(sid, kinds=["manifest"]):
            m = json.loads(ev.content)
            turns.calls.append(
                Call(
                    session_id=sid,
                    turn_id=ev.turn_id,
                    round=int(ev.meta.get("round", 0)),
                    used=int(m.get("used", 0)),
                    limit=int(m.get("limit", 0)),
                    by_lane={k: int(v) for k, v in (m.get("by_lane") or {}).items()},
                    by_component=components(m),
                    omissions=list(m.get("omissions") or []),
                    overflow=bool(m.get("overflow", False)),
                )
            )
        for ev in store.events.find(sid, kinds=["model_call"]):
            evaluated = json.loads(ev.content).get("evaluated_tokens")
            key = f"{sid}/{ev.turn_id}"
            before = turns.evaluated.get(key, 0)
            # One call the engine gave no figures for makes the turn's sum unknown.
            unknown = evaluated is None or before is None
            turns.evaluated[key] = None if unknown else int(before or 0) + int(evaluated)
    return turns


def sessions_of(store: Store, session: str | None, every: bool) -> list[str]:
    """The sessions to read: one, all with content (oldest first), or the latest with content."""
    if session:
        if store.sessions.get(session) is None:
            raise ValueError(f"no session {session}; python -m bot export --list shows the ids")
        return [session]
    found = store.sessions.with_content(["user"], limit=1_000_000 if every else 1)
    return [s.id for s in reversed(found)]


def _spread(values: list[int]) -> dict[str, int]:
    floats = [float(v) for v in values]
    return {"p50": int(pct(floats, 50)), "p95": int(pct(floats, 95)), "max": max(values, default=0)}


def report(turns: Turns) -> dict[str, Any]:
    """The figures `bench tokens` prints (and `--json` gives whole)."""
    first = turns.first_calls
    names = sorted({k for c in first for k in c.by_component})
    lanes = sorted({k for c in first for k in c.by_lane})
    reasons: Counter[str] = Counter()
    lane_omitted: Counter[str] = Counter()
    for c in first:
        for o in c.omissions:
            reasons[re.sub(r"\d+", "N", str(o.get("reason", "")))] += 1
            lane_omitted[str(o.get("lane", ""))] += 1
    evaluated = [v for v in turns.evaluated.values() if v is not None]
    return {
        "sessions": turns.sessions,
        "turns": len(first),
        "calls": len(turns.calls),
        "window": max((c.limit for c in first), default=0),
        "first_call": _spread([c.used for c in first]),
        "by_component": {n: _spread([c.by_component.get(n, 0) for c in first]) for n in names},
        "by_lane": {n: _spread([c.by_lane.get(n, 0) for c in first]) for n in lanes},
        "evaluated_per_turn": {
            **_spread(evaluated),
            "turns_reported": len(evaluated),
            "turns_unreported": len(turns.evaluated) - len(evaluated),
        },
        "omissions": {
            "per_first_call": _spread([len(c.omissions) for c in first]),
            "by_lane": dict(lane_omitted.most_common()),
            "reasons": reasons.most_common(8),
        },
        "overflows": sum(1 for c in turns.calls if c.overflow),
    }


def format_report(rep: dict[str, Any], title: str) -> str:
    def row(label: str, s: dict[str, int]) -> str:
        return f"  {label:<22} {s['p50']:>8,} {s['p95']:>8,} {s['max']:>8,}"

    out = [
        f"{title}: {rep['turns']:,} turns, {rep['calls']:,} model calls, "
        f"window {rep['window']:,}, sessions {', '.join(rep['sessions']) or '-'}",
        f"  {'first-call input':<22} {'p50':>8} {'p95':>8} {'max':>8}",
        row("all tokens", rep["first_call"]),
        "by component:",
        *(row(n, s) for n, s in rep["by_component"].items()),
        "by lane:",
        *(row(n, s) for n, s in rep["by_lane"].items()),
    ]
    ev = rep["evaluated_per_turn"]
    if ev["turns_reported"]:
        out.append(row("evaluated per turn", ev))
    if ev["turns_unreported"]:
        out.append(f"  evaluated per turn: the engine reported no cache figures for "
                   f"{ev['turns_unreported']} turns")  # fmt: skip
    om = rep["omissions"]
    out.append(row("omissions per call", om["per_first_call"]))
    if om["by_lane"]:
        out.append(
            "  left out, by lane: " + ", ".join(f"{k} {v:,}" for k, v in om["by_lane"].items())
        )
    for reason, n in om["reasons"]:
        out.append(f"    {n:>6,}  {reason}")
    out.append(f"overflows (calls the assembler trimmed): {rep['overflows']}")
    return "\n".join(out)
