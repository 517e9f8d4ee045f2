"""An approved web search goes back to the model as the call's tool result, like any other
result: capped to the tool-result budget (the rest reachable by id), and cleared by tier 1
once newer results push the context past its threshold. A standing yes ("don't ask again")
lets the next search run at once, and `tools.web_approval` sets that for a whole session.
Real runtime, session loop, compactor, SQLite file and local search engine; the scripted
model on the real tokenizer."""

from __future__ import annotations

import json
from collections import deque
from pathlib import Path

from bot.tools.base import OUTSIDE_MARK
from bot.tools.web import SearchHit
from bot.turn.events import LatencyEvent, ToolResultEvent, TurnDone
from models.base import Tokenizer
from models.fakes import ScriptedLLM
from testkit.web_fakes import SearchEngine
from tests.bot.conftest import collect, make_runtime

QUERY = "tide tables for Brest this week"


def call(name: str, **arguments: object) -> str:
    return f"<tool_call>\n{json.dumps({'name': name, 'arguments': arguments})}\n</tool_call>"


def many_hits(query: str) -> list[SearchHit]:
    """A long result: thirty pages with long snippets, far over the tool-result budget."""
    return [
        SearchHit(
            f"Tides at Brest, day {n}",
            f"https://tides.example/{n}",
            f"High water at Brest on day {n} is at {6 + n % 12}:15, low water six hours later; "
            "coefficients and heights for every port of the Finistere coast follow. " * 2,
        )
        for n in range(30)
    ]


async def test_an_approved_search_is_a_capped_tool_result_that_tier1_clears(
    tmp_path: Path, tokenizer: Tokenizer
) -> None:
    replies: deque[str] = deque()
    llm = ScriptedLLM(tokenizer, lambda prompt: replies.popleft() if replies else "Done.")
    with SearchEngine(results=many_hits) as engine:
        runtime = make_runtime(
            llm, tmp_path, window=4096, reserve=512, tools={"web_search_url": engine.searxng_url}
        )
        for n in range(40):
            runtime.store.tasks.add(f"Errand number {n}: pick up the parcel at counter {n}")
        session = runtime.open_session()

        replies.extend(
            [call("load_tool_group", group="web"), call("web_search", query=QUERY, limit=10), "?"]
        )
        await collect(session, f"Search the web for {QUERY}.")
        assert engine.queries == []
        replies.append("High water at Brest is at 6:15 on the first day.")
        events = await collect(session, "yes")
        done = [e for e in events if isinstance(e, TurnDone)]
        assert [(d.path, d.text) for d in done] == [
            ("model", "High water at Brest is at 6:15 on the first day.")
        ]
        assert [q for _, q in engine.queries] == [QUERY]
        # The approved search's run counts as tool time in the turn's breakdown.
        (latency,) = [e for e in events if isinstance(e, LatencyEvent)]
        assert latency.stages["tools_ms"] > 0 and latency.stages["state_ms"] >= 0

        # In the ledger as a tool result: capped, the whole text kept in the log by its id.
        result = [i for i in session.conv.items if i.kind == "tool_result"][-1]
        assert result.name == "web_search" and result.role == "tool"
        assert result.content.startswith(OUTSIDE_MARK)  # read as data, not instructions
        budget = session.settings.context.budget("tool_result")
        assert result.original_tokens > budget >= session.ledger.count(result.content) - 8
        logged = runtime.store.events.get(result.id)
        assert logged is not None and "day 9" in str(logged.content)
        assert "day 9" not in result.content
        assert session.usage().by_component["tool_results"] > 0

        # Newer long results push the context past tier 1: the search result is cleared.
        for _ in range(12):
            replies.extend([call("get_context", type="tasks"), "Those are your errands."])
            # An order the model carries out ("what errands do I have?" is the state path's).
            await collect(session, "Group my errands by neighbourhood, please.")
            await session.wait_idle()
            if result.cleared:
                break
        assert result.cleared and any(c.tier == 1 for c in session.compactions)
        assert result.id in session.ledger.prompt(session.conv)  # the placeholder names it
        await runtime.close()


async def test_a_standing_yes_and_the_session_setting_let_searches_run_at_once(
    tmp_path: Path, tokenizer: Tokenizer
) -> None:
    replies: deque[str] = deque()
    llm = ScriptedLLM(tokenizer, lambda prompt: replies.popleft() if replies else "Done.")
    with SearchEngine() as engine:
        runtime = make_runtime(llm, tmp_path, tools={"web_search_url": engine.searxng_url})
        session = runtime.open_session()
        replies.extend(
            [call("load_tool_group", group="web"), call("web_search", query="a"), "Search?"]
        )
        await collect(session, "Search the web for a.")
        replies.append("Found it.")
        await collect(session, "Yes, and don't ask again.")
        assert session.allowed == {"web_search", "fetch_webpage"}
        replies.extend([call("web_search", query="b"), "Found that too."])
        events = await collect(session, "And search for b.")
        results = [e for e in events if isinstance(e, ToolResultEvent)]
        assert [r.name for r in results] == ["web_search"]
        assert not results[0].preview.startswith("Approval needed")
        assert [q for _, q in engine.queries] == ["a", "b"]
        assert runtime.store.approvals.pending() == []
        allowance = runtime.store.events.find(session.id, kinds=["allowance"])
        assert [e.content for e in allowance] == ["fetch_webpage, web_search"]
        await runtime.close()

    # "never_ask": no approval for the web tools from the first call on.
    with SearchEngine() as engine:
        runtime = make_runtime(
            llm,
            tmp_path / "never",
            tools={"web_search_url": engine.searxng_url, "web_approval": "never_ask"},
        )
        session = runtime.open_session()
        replies.extend(
            [call("load_tool_group", group="web"), call("web_search", query="c"), "Here."]
        )
        await collect(session, "Search the web for c.")
        assert [q for _, q in engine.queries] == ["c"]
        assert runtime.store.approvals.pending() == []
        await runtime.close()


async def test_asking_for_the_web_in_so_many_words_is_one_call_and_one_question(
    tmp_path: Path, tokenizer: Tokenizer
) -> None:
    """ "Search the web for …" has the web tools loaded before the model's first call, and the
    approval's question offers the standing yes, so one exchange both asks and allows."""
    replies: deque[str] = deque()
    llm = ScriptedLLM(tokenizer, lambda prompt: replies.popleft() if replies else "Done.")
    with SearchEngine() as engine:
        runtime = make_runtime(llm, tmp_path, tools={"web_search_url": engine.searxng_url})
        session = runtime.open_session()
        replies.extend(
            [call("web_search", query=QUERY), "Shall I search the web for that? Say yes or no."]
        )
        events = await collect(session, f"Search the web for {QUERY}.")
        # The first call could already search: the web tools' schemas were in its prompt.
        assert '"name": "web_search"' in llm.prompts[0]
        results = [e for e in events if isinstance(e, ToolResultEvent)]
        assert [(r.name, r.ok) for r in results] == [("web_search", True)]
        logged = runtime.store.events.find(session.id, kinds=["tool_result"])[-1]
        assert "yes and don't ask again" in str(logged.content)
        assert engine.queries == []

        replies.append("High water is at 6:15.")
        events = await collect(session, "Yes, and don't ask again.")
        assert [q for _, q in engine.queries] == [QUERY]
        assert [e.text for e in events if isinstance(e, TurnDone)] == ["High water is at 6:15."]
        assert session.allowed == {"web_search", "fetch_webpage"}

        # Other words do not load anything.
        other = runtime.open_session()
        await collect(other, "What is the capital of France?")
        assert "web" not in other.tools.loaded
        assert '"name": "web_search"' not in llm.prompts[-1]
        await runtime.close()
