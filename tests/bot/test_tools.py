"""Tools: bad arguments are results, the web tools against a real local server, the registry."""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import AsyncIterator
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from aiohttp import web

from bot.tools.base import ToolEnv
from bot.tools.core import PAGE_CHARS
from bot.tools.grammar import tool_call_grammar
from bot.tools.registry import ActiveTools, ToolRegistry, compact_schema, default_registry
from bot.tools.web import check_url, readable_text
from config import Settings, load_settings
from memory.store import Store

PAGE = """<!doctype html><html><head><title>Tide tables | Brest harbour</title>
<style>p{color:red}</style><script>alert("no")</script></head><body>
<header><nav><a href="/">Home</a> <a href="/shop">Shop</a> <a href="/login">Sign in</a></nav>
</header><main><article><h1>Tide tables for Brest</h1>
<p>High tide is at <b>6:42</b> today, with a coefficient of 78; the next comes this evening.</p>
<p>Low tide at 12:55. The harbour master asks boats to keep clear of the slipway then.</p>
<p>Tomorrow the tides come about fifty minutes later, as they do each day of the cycle.</p>
</article><aside><h3>More from us</h3><ul><li><a href="/n">Subscribe to our newsletter</a></li>
<li><a href="/b">Ten best beaches</a></li></ul></aside></main>
<footer><p>Copyright 2025 Brest harbour. All rights reserved.</p></footer></body></html>"""
# What a reader of the page wants, and what is around it on every page of the site.
MAIN = ["High tide is at 6:42 today", "Low tide at 12:55.", "fifty minutes later"]
AROUND = ["Sign in", "newsletter", "Ten best beaches", "All rights reserved", "alert", "color:red"]
PARAGRAPH = "<p>{n}: the tide tables of Brest harbour, and the boats that wait for them.</p>"


@pytest.fixture
async def server() -> AsyncIterator[str]:
    async def page(request: web.Request) -> web.Response:
        return web.Response(text=PAGE, content_type="text/html")

    async def big(request: web.Request) -> web.Response:
        paragraphs = "".join(PARAGRAPH.format(n=n) for n in range(10_000))
        page = f"<html><body><article>{paragraphs}</article></body></html>"
        return web.Response(text=page, content_type="text/html")

    async def binary(request: web.Request) -> web.Response:
        return web.Response(body=b"\x89PNG....", content_type="image/png")

    async def hop(request: web.Request) -> web.Response:
        raise web.HTTPFound("/page")

    async def to_file(request: web.Request) -> web.Response:
        raise web.HTTPFound("file:///etc/passwd")

    app = web.Application()
    app.add_routes(
        [
            web.get("/page", page),
            web.get("/big", big),
            web.get("/img", binary),
            web.get("/hop", hop),
            web.get("/to-file", to_file),
        ]
    )
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    yield f"http://127.0.0.1:{port}"
    await runner.cleanup()


def ctx(
    settings: Settings | None = None, store: Store | None = None, active: ActiveTools | None = None
) -> ToolEnv:
    return ToolEnv(
        settings=settings or load_settings(),
        store=store,
        session_id="",
        load_group=active.load if active else None,
    )


async def run(
    name: str, args: dict[str, object], context: ToolEnv
) -> tuple[bool, str, dict[str, object]]:
    tool = default_registry().get(name)
    assert tool is not None
    out = await tool.run(args, context)
    return out.ok, out.content, out.data


async def test_bad_arguments_become_readable_errors() -> None:
    c = ctx()
    cases: list[tuple[str, dict[str, object]]] = [
        ("fetch_webpage", {}),
        ("fetch_webpage", {"url": 42, "extra": 1}),
        ("web_search", {"query": ""}),
        ("render_table", {"columns": ["a", "b"], "rows": [["1"]]}),
        ("get_time", {"timezone": ["x"]}),
        ("get_context", {"offset": -5}),
        ("load_tool_group", {}),
        ("think", {"thought": None}),
    ]
    for name, args in cases:
        ok, content, _ = await run(name, args, c)
        assert not ok, name
        assert content.startswith(f"error: bad arguments for {name}"), content


async def test_failures_inside_handlers_are_results_too() -> None:
    ok, content, _ = await run("get_time", {"timezone": "Mars/Olympus"}, ctx())
    assert not ok and "unknown time zone" in content
    ok, content, _ = await run("get_context", {"ids": ["ev-1"]}, ctx())
    assert not ok and "no memory store is open" in content
    ok, content, _ = await run("load_tool_group", {"group": "web"}, ctx())
    assert not ok and "cannot be loaded" in content


async def test_render_table_goes_to_the_page_not_the_context() -> None:
    rows = [[f"plan {n}", n * 10, None] for n in range(50)]
    ok, content, data = await run(
        "render_table", {"title": "Plans", "columns": ["plan", "GB", "note"], "rows": rows}, ctx()
    )
    assert ok and "Shown on the page" in content and len(content) < 200
    assert data["columns"] == ["plan", "GB", "note"]
    assert data["rows"][3] == ["plan 3", "30", ""]  # type: ignore[index]


async def test_get_time_answers_with_a_zone() -> None:
    # A zone whose offset no other candidate shares (UTC, the machine's zone): ignoring the
    # argument cannot pass.
    ok, content, data = await run("get_time", {"timezone": "Asia/Kolkata"}, ctx())
    assert ok and "(UTC+0530)" in content and str(data["iso"]).endswith("+05:30")
    now = datetime.now(ZoneInfo("Asia/Kolkata"))
    assert (
        now.strftime("%H:%M") in content
        or (now - timedelta(minutes=1)).strftime("%H:%M") in content
    )


async def test_fetch_webpage_reads_the_main_text(server: str) -> None:
    settings = load_settings(tools={"fetch_allow_private": True})
    ok, content, data = await run("fetch_webpage", {"url": f"{server}/page"}, ctx(settings))
    assert ok
    assert content.startswith(f"Tide tables for Brest\n{server}/page\n\n")
    assert all(part in content for part in MAIN), content
    assert not [part for part in AROUND if part in content], content
    assert data["title"] == "Tide tables for Brest"
    ok, content, _ = await run("fetch_webpage", {"url": f"{server}/hop"}, ctx(settings))
    assert ok and content.startswith(f"Tide tables for Brest\n{server}/page\n")


async def test_fetch_webpage_caps_size_and_refuses_binary(server: str) -> None:
    settings = load_settings(
        tools={"fetch_allow_private": True, "fetch_max_bytes": 50_000, "fetch_max_chars": 4000}
    )
    ok, content, data = await run("fetch_webpage", {"url": f"{server}/big"}, ctx(settings))
    assert ok and "(cut to the first part)" in content
    assert data["chars"] == 4000
    ok, content, _ = await run("fetch_webpage", {"url": f"{server}/img"}, ctx(settings))
    assert not ok and "not a text page" in content


async def test_the_guard_refuses_loopback_unless_allowed(server: str) -> None:
    ok, content, _ = await run("fetch_webpage", {"url": f"{server}/page"}, ctx())
    assert not ok and "local or private address" in content and "127.0.0.1" in content
    host = server.replace("127.0.0.1", "localhost")
    ok, content, _ = await run("fetch_webpage", {"url": f"{host}/page"}, ctx())
    assert not ok and "refused" in content
    for url in ("file:///etc/passwd", "ftp://example.com/x", "gopher://x", "http:///nohost"):
        ok, content, _ = await run("fetch_webpage", {"url": url}, ctx())
        assert not ok and "refused" in content, url
    settings = load_settings(tools={"fetch_allow_private": True})
    ok, content, _ = await run("fetch_webpage", {"url": f"{server}/to-file"}, ctx(settings))
    assert not ok and "only http and https" in content
    for private in (
        "http://10.1.2.3/",
        "http://192.168.0.1/",
        "http://169.254.169.254/",
        "http://[::1]/",
    ):
        with pytest.raises(ValueError, match="local or private"):
            await check_url(private, allow_private=False)


def test_readable_text_is_the_main_content_or_all_of_a_small_page() -> None:
    title, text = readable_text(PAGE)
    assert title == "Tide tables for Brest"
    assert text.splitlines()[:2] == [
        "Tide tables for Brest",
        MAIN[0] + ", with a coefficient of 78; the next comes this evening.",
    ]
    # A page of one line is all content; a bare fragment is read too.
    assert readable_text("<html><title>home</title><p>served / by home</p></html>") == (
        "home",
        "served / by home",
    )
    assert readable_text("<p>just a fragment</p>") == ("", "just a fragment")
    assert readable_text("") == ("", "")


async def test_get_context_reads_the_event_log_by_id_and_offset(tmp_path: Path) -> None:
    store = Store(tmp_path / "annie.db")
    sid = store.sessions.start()
    long = "".join(f"line {n}\n" for n in range(3000))
    ev = store.events.append(sid, "tool_result", long, name="fetch_webpage", meta={"turn": 2})
    store.events.append(sid, "user", "what about the tides?", meta={"turn": 3})
    task = store.tasks.add("call the bank", pending="user")
    c = ToolEnv(settings=load_settings(), store=store, session_id=sid)
    ok, content, _ = await run("get_context", {"ids": [ev]}, c)
    assert ok and content.startswith(f"{ev} (tool_result, fetch_webpage")
    assert f'get_context(ids=["{ev}"], offset={PAGE_CHARS})' in content
    ok, content, _ = await run("get_context", {"ids": [ev], "offset": PAGE_CHARS}, c)
    assert long[PAGE_CHARS : PAGE_CHARS + 20] in content
    ok, content, _ = await run("get_context", {"type": "turns", "ids": ["3"]}, c)
    assert ok and content == "[turn 3] User: what about the tides?"
    ok, content, _ = await run("get_context", {"ids": [task, "ev-999", "bogus"]}, c)
    assert (
        "call the bank" in content
        and "ev-999: no such event" in content
        and "unknown id" in content
    )
    ok, content, _ = await run("get_context", {}, c)
    assert not ok
    store.close()


async def test_a_note_whose_write_fails_part_way_leaves_nothing_behind_its_error(
    tmp_path: Path,
) -> None:
    store = Store(tmp_path / "annie.db")
    sid = store.sessions.start()
    c = ToolEnv(settings=load_settings(), store=store, session_id=sid)
    # The file refuses the note's provenance (written after the note's row), as a full disk
    # or a failing device would, from another connection as another process would set it.
    with sqlite3.connect(tmp_path / "annie.db") as other:
        other.execute(
            "CREATE TRIGGER refuse BEFORE UPDATE OF updated_at ON notes "
            "BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END"
        )
    ok, content, _ = await run("save_note", {"text": "the gate code is 4411"}, c)
    assert not ok and "full" in content, content
    assert store.notes.search("gate code", limit=5) == []
    assert store.events.find(sid, kinds=["note_write"]) == []
    with sqlite3.connect(tmp_path / "annie.db") as other:
        other.execute("DROP TRIGGER refuse")
    ok, content, data = await run("save_note", {"text": "the gate code is 4411"}, c)
    assert ok and content.startswith("Saved"), content
    assert [h.id for h in store.notes.search("gate code", limit=5)] == [data["id"]]
    store.close()


async def test_groups_load_on_demand_and_gate_calls() -> None:
    registry = default_registry()
    active = ActiveTools(registry)
    assert active.loaded == ["core", "memory"]
    assert active.callable("web_search") is None and active.callable("get_context") is not None
    load = registry.get("load_tool_group")
    assert load is not None and "- web:" in load.description and "- core:" not in load.description
    ok, content, _ = await run("load_tool_group", {"group": "web"}, ctx(active=active))
    assert ok and content.startswith("Loaded the web tools") and "web_search" in content
    # The schemas are the tools lane's, not the result's: one JSON per tool after a label.
    assert json.loads(active.schema_text("web").splitlines()[1])["name"] == "web_search"
    assert active.callable("web_search") is not None
    assert active.prefix_groups == ["core", "memory"]  # the prompt head does not change
    ok, content, _ = await run("load_tool_group", {"group": "nope"}, ctx(active=active))
    assert not ok and "no tool group 'nope'" in content


def test_schemas_are_compact_and_names_unique() -> None:
    registry = default_registry()
    text = json.dumps(registry.schemas(registry.groups))
    # Property names may be "title"; pydantic's "title": "Title" labels are gone.
    assert not re.search(r'"title": "[A-Z]', text) and '"type": "null"' not in text
    spec = compact_schema(
        {
            "properties": {
                "title": {"title": "Title", "anyOf": [{"type": "string"}, {"type": "null"}]}
            }
        }
    )
    assert spec == {"properties": {"title": {"type": "string"}}}
    tool = registry.get("get_time")
    assert tool is not None
    with pytest.raises(ValueError, match="two tools"):
        ToolRegistry([tool, tool])


def test_tool_choice_grammar_spells_one_call() -> None:
    registry = default_registry()
    save = registry.get("save_note")
    assert save is not None
    grammar = tool_call_grammar(save)
    assert grammar == tool_call_grammar(save, "json")
    assert grammar.startswith('root ::= "<tool_call>\\n{\\"name\\": \\"save_note\\"')
    assert '\\"text\\": ' in grammar and "kind" not in grammar.split("\n")[0]
    xml = tool_call_grammar(save, "xml").split("\n")[0]
    assert xml.startswith('root ::= "<tool_call>\\n<function=save_note>\\n"')
    assert '"<parameter=text>\\n" text' in xml and "kind" not in xml
