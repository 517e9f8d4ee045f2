"""Barge-in on the conversation: keep only what the user heard of an answer, marked interrupted.

A barge-in can land while the answer is still being generated (the turn ends with what was
delivered) or after it was complete but still being spoken (the latest answer is amended).
Either way the full text stays in the event log; the conversation keeps what was heard.
"""

from __future__ import annotations

from bot.turn.events import TurnDone
from bot.turn.record import Recorder
from models.toolcalls import final_visible


def _heard_part(heard: str, prior: str) -> str:
    """What was heard of this round: the heard text minus the rounds before it."""
    return heard[len(prior) :] if heard.startswith(prior) else heard


def interrupted_answer(
    record: Recorder,
    turn_id: str,
    *,
    spoken: list[str],
    shown: str,
    raw: str,
    delivered: str | None,
) -> TurnDone:
    """End a turn cut off mid-generation: `delivered` is what the user heard (None: all of
    `spoken` and `shown`)."""
    prior = "".join(spoken)
    heard = delivered if delivered is not None else prior + shown
    this_round = _heard_part(heard, prior)
    record.say(
        "assistant",
        this_round,
        turn_id,
        meta={"interrupted": True, "raw": raw, "heard": heard},
        interrupted=True,
        reason="the assistant's answer, cut off by the user",
    )
    return TurnDone(turn_id, heard.strip(), "model", interrupted=True)


def amend_interrupted(record: Recorder, turn_id: str, delivered_text: str) -> bool:
    """A complete answer cut off while spoken: keep what was heard of the latest answer.
    Returns False when there is nothing to amend."""
    conv = record.conv
    item = conv.last("assistant")
    if item is None or item.turn != conv.turn or item.interrupted:
        return False
    prior = "".join(
        final_visible(i.content) for i in conv.turn_items(item.turn) if i.kind == "tool_call"
    )
    heard = _heard_part(delivered_text, prior)
    item.content = heard
    item.interrupted = True
    conv.edited(item)
    # The item stays (it is the one the model saw); the log records the amendment.
    record.log(
        "assistant",
        heard,
        turn_id,
        role="assistant",
        meta={"interrupted": True, "heard": delivered_text, "amends": item.id},
    )
    return True
