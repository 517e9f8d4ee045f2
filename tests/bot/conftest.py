"""Session fixtures: a small runtime over a real SQLite file and a given model."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from bot.runtime import Runtime
from bot.tools.base import Tool
from bot.tools.core import core_tools
from bot.tools.memory_tools import memory_tools
from bot.tools.registry import ToolRegistry
from bot.tools.utility import utility_tools
from bot.tools.web import web_tools
from bot.turn.events import Event, TextDelta
from bot.turn.session import Session
from config import load_settings
from memory.store import Store
from models.base import LLM, Embedder

SHORT_PROMPT = "You are Annie, a helpful voice assistant. Answer in one short sentence."


def small_registry(extra: Sequence[Tool] = ()) -> ToolRegistry:
    """Core tools plus list_tasks loaded; web and utility on demand. Keeps prompts short."""
    memory = [t for t in memory_tools() if t.name in ("list_tasks", "save_note")]
    return ToolRegistry([*core_tools(), *memory, *web_tools(), *utility_tools(), *extra])


def make_runtime(
    llm: LLM,
    tmp_path: Path,
    *,
    window: int = 4096,
    reserve: int = 160,
    rounds: int = 4,
    extra: Sequence[Tool] = (),
    embedder: Embedder | None = None,
    system_prompt: str = SHORT_PROMPT,
    tools: dict[str, object] | None = None,
) -> Runtime:
    settings = load_settings(
        context={"window": window, "reserve_output": reserve, "max_tool_rounds": rounds},
        tools={"timeout_s": 5.0, **(tools or {})},
    )
    return Runtime(
        settings,
        llm=llm,
        store=Store(tmp_path / "annie.db"),
        system_prompt=system_prompt,
        registry=small_registry(extra),
        embedder=embedder,
    )


async def collect(
    session: Session, text: str, on: Callable[[Event], None] | None = None, **kw: object
) -> list[Event]:
    events: list[Event] = []
    async for event in session.handle_text(text, **kw):  # type: ignore[arg-type]
        events.append(event)
        if on is not None:
            on(event)
    return events


def after_deltas(
    n: int, action: Callable[[list[str]], None]
) -> tuple[list[str], Callable[[Event], None]]:
    """An `on` callback for `collect` that runs `action(texts so far)` at the n-th text delta."""
    texts: list[str] = []

    def on(event: Event) -> None:
        if isinstance(event, TextDelta):
            texts.append(event.text)
            if len(texts) == n:
                action(texts)

    return texts, on
