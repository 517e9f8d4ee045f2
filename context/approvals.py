"""Confirming or declining an open approval by saying "yes" or "no".

The approval ledger holds the exact tool and parameters Annie proposed. A "yes" runs those
stored parameters (never freshly generated ones) through the executor, a "no" declines, and
an expired approval is refused with the reason. Only a reply made of confirmation words alone
counts: "yes, and also add milk" carries a new request, so it goes to the model.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Literal

from memory.rows import ApprovalRow

if TYPE_CHECKING:
    from config import Settings
    from context.state import StateResult
    from memory.store import Store

Decision = Literal["yes", "no"]
# Runs an approved action: (approval, store, settings) -> (ok, what happened).
Executor = Callable[[ApprovalRow, "Store", "Settings"], tuple[bool, str]]

_YES_MARK = {
    "yes", "yeah", "yep", "yup", "sure", "ok", "okay", "confirm", "confirmed", "approve",
    "approved", "proceed", "affirmative", "absolutely", "correct", "go",
}  # fmt: skip
_YES_FILL = {
    "please", "do", "it", "ahead", "for", "that", "is", "fine", "right", "thanks", "thank",
    "you", "annie", "i", "go", "sounds", "good", "delete", "the", "go ahead", "yes", "of",
    "course", "just", "alright", "all", "note", "remove",
}  # fmt: skip
_NO_MARK = {"no", "nope", "nah", "cancel", "decline", "declined", "reject", "never", "not", "stop"}
_NO_FILL = {
    "please", "do", "it", "that", "thanks", "thank", "you", "annie", "mind", "don", "t",
    "keep", "leave", "dont", "way", "i", "changed", "my", "the", "note", "abort", "forget",
    "delete", "remove", "thats", "ok", "okay",
}  # fmt: skip


def confirmation(text: str) -> Decision | None:
    """ "yes" or "no" when the whole reply is a confirmation or a refusal, else None."""
    words = re.sub(r"[^a-z ]+", " ", text.lower().replace("'", "")).split()
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


def describe(approval: ApprovalRow) -> str:
    """The proposed action in words, with its exact parameters."""
    params = ", ".join(f"{k}={v}" for k, v in approval.params.items())
    return f"{approval.tool.replace('_', ' ')} ({params})" if params else approval.tool


def default_executor(approval: ApprovalRow, store: Store, settings: Settings) -> tuple[bool, str]:
    # Imported here: the memory tools live with the other tools, and only a confirmation
    # needs them.
    from bot.tools.memory_tools import run_stored

    return run_stored(approval, store, settings)


def answer(
    store: Store,
    settings: Settings,
    decision: Decision,
    now: datetime,
    executor: Executor | None = None,
    requester: str | None = None,
) -> StateResult | None:
    """Resolve the newest open approval (of `requester`, when given); None when there is none,
    so the model answers."""
    from context.state import StateResult

    approval = store.latest_open_approval(requester)
    if approval is None:
        return None
    sources = [approval.id]
    if approval.expired(now):
        store.resolve_approval(approval.id, "expired", "confirmation came after expiry", now=now)
        return StateResult(
            f"That request to {describe(approval)} expired, so I did nothing. "
            "Ask again if you still want it.",
            "approval",
            sources,
        )
    if decision == "no":
        store.resolve_approval(approval.id, "declined", now=now)
        return StateResult(f"Okay, I won't {describe(approval)}.", "approval", sources)
    try:
        store.resolve_approval(approval.id, "approved", now=now)
    except ValueError:
        # Answered meanwhile (another front end): it runs at most once.
        return StateResult(
            "That request was already answered, so I did nothing.", "approval", sources
        )
    ok, what = (executor or default_executor)(approval, store, settings)
    store.resolve_approval(approval.id, "executed" if ok else "failed", what, now=now)
    text = f"Done: {what}" if ok else f"I couldn't do it: {what}"
    return StateResult(text if text.endswith(".") else text + ".", "approval", sources)
