"""A short real session for the evaluation gate: lived once, logged, then exported and replayed.

`scripted_session` opens a `Session` on a `Runtime` over the given store, with the shipped
tools (they really run: the task and the note land in the store) and the scripted model
(`models.fakes.ScriptedLLM`: the real template and tokenizer, the replies below). One turn
is a status question the state path answers without the model, so the export carries a
state answer too. The session is closed, so tier 3 writes its checkpoint. The gate exports
it with `python -m bot export`'s own function and replays that trace.
"""

from __future__ import annotations

from collections import deque

from bot.runtime import Runtime
from bot.turn.session import Session
from compaction.summarize import INSTRUCTIONS
from config import Settings
from memory.store import Store
from models.base import Embedder, Tokenizer
from models.fakes import ScriptedLLM
from models.toolcalls import write_call
from testkit.sim import scripted_summary

# (what the user says, the model's replies: text, or (tool, arguments) for a call); no
# replies: the state path answers.
TURNS: list[tuple[str, list[str | tuple[str, dict[str, object]]]]] = [
    ("Hi Annie, I'm planning my week.", ["Happy to help. What's first?"]),
    (
        "Add a task to renew the car insurance by Friday.",
        [
            ("create_task", {"title": "Renew the car insurance by Friday", "pending": "user"}),
            "Added: renew the car insurance by Friday.",
        ],
    ),
    ("Actually the insurance is due Thursday, not Friday.", ["Thanks, Thursday it is."]),
    (
        "Save a note that the gate code is 5512.",
        [("save_note", {"text": "The gate code is 5512"}), "Saved."],
    ),
    ("My booking reference for the ferry is FR-2290.", ["Got it, FR-2290."]),
    ("Is anything pending on me?", []),
    (
        "Look at my task list and tell me the insurance task's id.",
        [("list_tasks", {}), "It's the first one on your list."],
    ),
    ("I prefer morning appointments.", ["Noted, mornings it is."]),
    ("Thanks, I'll call them tomorrow.", ["I'll remind you to follow up tomorrow."]),
]


async def scripted_session(
    settings: Settings, store: Store, tokenizer: Tokenizer, embedder: Embedder
) -> str:
    """Live `TURNS` in a new session on `store` and close it; returns the session id."""
    replies: deque[str | tuple[str, dict[str, object]]] = deque(r for _, rs in TURNS for r in rs)
    llm = ScriptedLLM(tokenizer, lambda prompt: _reply(prompt, replies, llm))
    runtime = Runtime(settings, llm=llm, store=store, tokenizer=tokenizer, embedder=embedder)
    session: Session = runtime.open_session(meta={"front_end": "gate"})
    for text, _ in TURNS:
        async for _event in session.handle_text(text):
            pass
        await session.wait_idle()
    await session.close()
    await runtime.close()
    return session.id


def _reply(
    prompt: str, replies: deque[str | tuple[str, dict[str, object]]], llm: ScriptedLLM
) -> str:
    if INSTRUCTIONS in prompt:
        return scripted_summary(prompt)
    if not replies:
        return "Okay."
    reply = replies.popleft()
    if isinstance(reply, str):
        return reply
    name, arguments = reply
    return write_call(name, arguments, llm.tool_dialect)
