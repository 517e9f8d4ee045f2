"""Approvals, in one place: which tools need the user's yes, the ledger, its one written
form, and how a yes or no resolves a pending approval.

A tool the policy table marks never acts when the model calls it: its exact parameters are
stored (`store.approvals.request`) and the model is told to ask. The user's yes (spoken,
typed, or the page's Approve button, which sends the same yes) runs those stored parameters,
never freshly generated ones, once, before the approval expires, and only in the
conversation that asked: a yes in another conversation does nothing and says so.

Running the action needs the tools, which sit above this layer: `take` only resolves the
approval, and the turn above runs its stored call and hands the result to the model as that
call's tool result. `render` is the only way a pending approval is written into a prompt:
the state snapshot, the next-session briefing and compaction's protected-item check all use
it, so the check finds exactly what was written.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal

from memory.db import NotFoundError, Records, guarded
from memory.rows import APPROVAL_STATUSES, ApprovalRow, make_id, parse_id, to_iso, utc_now

# --- the policy -----------------------------------------------------------------------


@dataclass(frozen=True)
class Rule:
    """What a tool does, in words, and whether the user must say yes first."""

    action: str
    needs_approval: bool


# Every tool Annie has, decided one by one (a test checks that none is missing). A tool
# needs the user's yes when it deletes or overwrites something the user had, or sends
# something off this machine:
# - delete_note removes a saved note for good.
# - web_search sends the query, which may quote the user's own words or notes, to a search
#   service; fetch_webpage makes a request to an outside web server, and the URL itself can
#   carry data. Annie otherwise never talks to the network, so both ask.
# No yes is needed where nothing is lost and nothing leaves: save_note, create_task and
# set_reminder only add records; complete_task marks a task done, and the task, its title
# and history stay in the table (it is listed under done); search_memory, list_tasks,
# get_context and get_time only read; load_tool_group, think and render_table change what
# the model or the page sees, nothing stored.
POLICY: dict[str, Rule] = {
    "delete_note": Rule("delete a saved note", needs_approval=True),
    "web_search": Rule("search the web", needs_approval=True),
    "fetch_webpage": Rule("fetch a web page", needs_approval=True),
    "save_note": Rule("save a note", needs_approval=False),
    "create_task": Rule("add a task", needs_approval=False),
    "set_reminder": Rule("set a reminder", needs_approval=False),
    "complete_task": Rule("mark a task done", needs_approval=False),
    "search_memory": Rule("search saved notes", needs_approval=False),
    "list_tasks": Rule("list tasks", needs_approval=False),
    "get_context": Rule("bring back earlier context", needs_approval=False),
    "load_tool_group": Rule("load more tools", needs_approval=False),
    "think": Rule("think step by step", needs_approval=False),
    "get_time": Rule("tell the time", needs_approval=False),
    "render_table": Rule("show a table on the page", needs_approval=False),
    # Timers and reminder changes keep every row (done and cancelled stay in the table).
    "set_timer": Rule("start a timer", needs_approval=False),
    "snooze_reminder": Rule("snooze a reminder", needs_approval=False),
    "complete_reminder": Rule("mark a reminder done", needs_approval=False),
    "cancel_reminder": Rule("cancel a reminder", needs_approval=False),
}


# The tools that reach the network: a user who allows one for the session allows both.
WEB_TOOLS = ("web_search", "fetch_webpage")


def needs_approval(tool: str) -> bool:
    """True for a tool that may only run after the user's yes (unknown tools: no)."""
    rule = POLICY.get(tool)
    return rule is not None and rule.needs_approval


def policy_sentence() -> str:
    """The system prompt's line about approvals, written from the table."""
    actions = [r.action for r in POLICY.values() if r.needs_approval]
    listed = ", ".join(actions[:-1]) + " or " + actions[-1] if len(actions) > 1 else actions[0]
    return (
        f"Before you {listed}, the user must say yes: calling that tool only asks. "
        "Describe exactly what will happen and wait for the answer."
    )


# --- the ledger -------------------------------------------------------------------------


def _row(row: Any) -> ApprovalRow:
    return ApprovalRow(
        id=make_id("approvals", row["n"]),
        tool=row["tool"],
        params=json.loads(row["params"]),
        requester=row["requester"],
        status=row["status"],
        created_at=row["created_at"],
        expires_at=row["expires_at"],
        resolved_at=row["resolved_at"],
        result=row["result"],
        target=row["target"],
    )


class Approvals(Records):
    """The approval ledger (`store.approvals`): proposed actions with their exact parameters."""

    table_name = "approvals"

    @guarded
    def request(
        self,
        tool: str,
        params: dict[str, Any],
        requester: str,
        ttl_s: float,
        now: datetime | None = None,
        target: str = "",
    ) -> str:
        """Record a proposed action for the conversation `requester`; returns its id.
        `target` is the action in words, naming what it touches ("delete the note 'Leo is
        allergic to peanuts'"), as the user is asked about it."""
        if ttl_s <= 0:
            raise ValueError("an approval needs a positive time to live")
        if not requester:
            raise ValueError("an approval belongs to the conversation that asked for it")
        start = now or utc_now()
        n = self.insert(
            {
                "tool": tool,
                "params": json.dumps(params, ensure_ascii=False),
                "requester": requester,
                "created_at": to_iso(start),
                "expires_at": to_iso(start + timedelta(seconds=ttl_s)),
                "target": target,
            }
        )
        return make_id("approvals", n)

    @guarded
    def get(self, approval_id: str) -> ApprovalRow | None:
        row = self.row(parse_id("approvals", approval_id))
        return _row(row) if row is not None else None

    @guarded
    def pending(self, now: datetime | None = None) -> list[ApprovalRow]:
        """Approvals of every conversation still waiting and not yet expired, newest first."""
        rows = self.table.rows_where(
            "status = 'pending' AND expires_at > ?", [to_iso(now or utc_now())], order_by="n DESC"
        )
        return [_row(r) for r in rows]

    @guarded
    def latest_open(self, requester: str) -> ApprovalRow | None:
        """`requester`'s newest approval still marked pending, expired or not (so a late yes
        is refused with the reason)."""
        rows = self.table.rows_where(
            "status = 'pending' AND requester = ?", [requester], order_by="n DESC", limit=1
        )
        row = next(iter(rows), None)
        return _row(row) if row is not None else None

    @guarded
    def resolve(
        self, approval_id: str, status: str, result: str = "", now: datetime | None = None
    ) -> ApprovalRow:
        """Move an approval out of `pending` (or record the outcome of an approved one).

        Only pending approvals can be approved, declined or expired; only approved ones can be
        marked executed or failed. Anything else raises ValueError, so an approval runs once.
        """
        if status not in APPROVAL_STATUSES or status == "pending":
            raise ValueError(
                f"status must be one of {', '.join(APPROVAL_STATUSES[1:])}, not '{status}'"
            )
        required = "approved" if status in ("executed", "failed") else "pending"
        n = parse_id("approvals", approval_id)
        with self.store.write() as c:
            cur = c.execute(
                "UPDATE approvals SET status = ?, resolved_at = ?, result = ?"
                " WHERE n = ? AND status = ?",
                (status, to_iso(now or utc_now()), result, n, required),
            )
        row = self.get(approval_id)
        if row is None:
            raise NotFoundError(f"no approval {make_id('approvals', n)}")
        if cur.rowcount == 0:
            raise ValueError(
                f"approval {row.id} is {row.status}; it cannot become {status} "
                f"(only a {required} approval can)"
            )
        return row


# --- how an approval is written ---------------------------------------------------------


def params_text(params: dict[str, Any]) -> str:
    """An approval's parameters exactly, in one canonical JSON spelling."""
    return json.dumps(params, ensure_ascii=False, sort_keys=True)


def render(approval: ApprovalRow) -> str:
    """A pending approval as every prompt shows it: id, tool, exact parameters, expiry, and
    what it touches in words."""
    about = f" to {approval.target}" if approval.target else ""
    return (
        f"Awaiting approval{about}: {approval.id} {approval.tool} "
        f"{params_text(approval.params)} (expires {approval.expires_at[:16]} UTC)"
    )


def describe(approval: ApprovalRow) -> str:
    """The proposed action in words, as it is said aloud: what it touches, by its text or
    title, never by an id or a raw parameter ("delete the note 'Leo is allergic to
    peanuts'"). An approval stored before targets were kept says only the kind of action."""
    if approval.target:
        return approval.target
    rule = POLICY.get(approval.tool)
    return rule.action if rule is not None else approval.tool.replace("_", " ")


# --- yes or no --------------------------------------------------------------------------

Decision = Literal["yes", "no"]

_YES_MARK = {
    "yes", "yeah", "yep", "yup", "sure", "ok", "okay", "confirm", "confirmed", "approve",
    "approved", "proceed", "affirmative", "absolutely", "correct", "go",
}  # fmt: skip
_YES_FILL = {
    "please", "do", "it", "ahead", "for", "that", "is", "fine", "right", "thanks", "thank",
    "you", "annie", "i", "go", "sounds", "good", "delete", "the", "go ahead", "yes", "of",
    "course", "just", "alright", "all", "note", "remove", "search", "fetch",
}  # fmt: skip
_NO_MARK = {
    "no", "nope", "nah", "cancel", "decline", "declined", "deny", "denied", "reject", "never",
    "not", "stop",
}  # fmt: skip
_NO_FILL = {
    "please", "do", "it", "that", "thanks", "thank", "you", "annie", "mind", "don", "t",
    "keep", "leave", "dont", "way", "i", "changed", "my", "the", "note", "abort", "forget",
    "delete", "remove", "thats", "ok", "okay", "search", "fetch",
}  # fmt: skip


# "Yes, and don't ask again": a yes that also allows the tool for the rest of the session.
_STANDING = re.compile(
    r"\b(?:and\s+)?(?:(?:you\s+)?dont\s+(?:need\s+to\s+|have\s+to\s+)?ask(?:\s+me)?\s+again"
    r"|no\s+need\s+to\s+ask(?:\s+me)?\s+again|stop\s+asking(?:\s+me)?"
    r"|(?:for\s+)?the\s+rest\s+of\s+(?:the|this)\s+(?:session|conversation)"
    r"|from\s+now\s+on|always)\b"
)


def _words(text: str) -> str:
    return " ".join(re.sub(r"[^a-z ]+", " ", text.lower().replace("'", "")).split())


def standing(text: str) -> bool:
    """Whether a yes also allows the tool for the rest of the session ("yes, and don't ask
    again", "yes, always", "go ahead from now on")."""
    return confirmation(text) == "yes" and _STANDING.search(_words(text)) is not None


def confirmation(text: str) -> Decision | None:
    """ "yes" or "no" when the whole reply is a confirmation or a refusal, else None.

    Only a reply made of confirmation words alone counts: "yes, and also add milk" carries a
    new request, so it goes to the model. A standing yes ("yes, don't ask again") is a yes."""
    plain = _words(text)
    rest = _STANDING.sub(" ", plain).split()
    if rest != plain.split() and (not rest or all(w in _YES_MARK or w in _YES_FILL for w in rest)):
        return "yes"
    words = plain.split()
    if not words or len(words) > 8:
        return None
    if any(w in _NO_MARK for w in words) and all(w in _NO_MARK or w in _NO_FILL for w in words):
        return "no"
    if words[0] == "dont" or words[:2] == ["do", "not"]:
        return "no" if all(w in _NO_MARK or w in _NO_FILL for w in words) else None
    if any(w in _YES_MARK for w in words) and all(w in _YES_MARK or w in _YES_FILL for w in words):
        return "yes"
    if words in (["do", "it"], ["please", "do"], ["please", "do", "it"]):
        return "yes"
    return None


@dataclass
class Outcome:
    """What a yes or no said when nothing may run (expired, another conversation's, answered
    already), and the approval it was about."""

    text: str
    sources: list[str] = field(default_factory=list)


def not_here(decision: Decision) -> str:
    return (
        f"Nothing is waiting for your {decision} in this conversation. The open request "
        "belongs to another conversation; answer it there."
    )


def take(
    approvals: Approvals, decision: Decision, session_id: str | None, now: datetime
) -> Outcome | ApprovalRow | None:
    """Resolve the newest open approval of the conversation `session_id` by the user's reply.

    None when no approval is open anywhere (the reply is ordinary conversation for the
    model). An `Outcome` when nothing may run: only another conversation has one (a yes must
    never run an action the user did not see proposed here), it expired, or it was answered
    meanwhile. Otherwise the approval itself, now `approved` (its stored call runs once, and
    its result goes back to the model) or `declined`."""
    own = approvals.latest_open(session_id) if session_id else None
    if own is None:
        return Outcome(not_here(decision)) if approvals.pending(now) else None
    if own.expired(now):
        approvals.resolve(own.id, "expired", "confirmation came after expiry", now=now)
        return Outcome(
            f"That request to {describe(own)} expired, so I did nothing. "
            "Ask again if you still want it.",
            [own.id],
        )
    try:
        return approvals.resolve(own.id, "approved" if decision == "yes" else "declined", now=now)
    except ValueError:
        # Answered meanwhile (another front end): it runs at most once.
        return Outcome("That request was already answered, so I did nothing.", [own.id])
