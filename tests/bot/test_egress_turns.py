"""Nothing private leaves through a real runtime: the scripted model puts private words into
web searches and page addresses by each way they can reach it, with the web allowed for the
whole session (the check holds whatever the approval setting). Real runtime, session loop,
SQLite file and a search engine and pages on 127.0.0.1 that record every request."""

from __future__ import annotations

import json
from collections import deque
from pathlib import Path

from bot.runtime import Runtime
from bot.turn.events import StateAnswer, ToolResultEvent, TurnDone
from context.egress import egress_for
from models.base import Tokenizer
from models.fakes import ScriptedLLM
from testkit.web_fakes import SearchEngine
from tests.bot.conftest import collect, make_runtime

REFUSED = (
    "I didn't search the web for that: it held something you asked me to keep private, so "
    "nothing left this machine."
)


def call(name: str, **arguments: object) -> str:
    return f"<tool_call>\n{json.dumps({'name': name, 'arguments': arguments})}\n</tool_call>"


def web_runtime(
    tmp_path: Path, tokenizer: Tokenizer, engine: SearchEngine
) -> tuple[Runtime, deque[str], ScriptedLLM]:
    replies: deque[str] = deque()
    llm = ScriptedLLM(tokenizer, lambda prompt: replies.popleft() if replies else "Done.")
    runtime = make_runtime(
        llm,
        tmp_path,
        tools={
            "web_search_url": engine.searxng_url,
            "web_approval": "never_ask",
            "fetch_allow_private": True,
        },
    )
    return runtime, replies, llm


def private_note(runtime: Runtime, text: str) -> str:
    note = runtime.store.notes.add(text)
    runtime.store.provenance.stamp(note, sensitivity="private")
    return note


async def test_a_private_note_in_a_search_is_held_back_and_said(
    tmp_path: Path, tokenizer: Tokenizer
) -> None:
    with SearchEngine() as engine:
        runtime, replies, llm = web_runtime(tmp_path, tokenizer, engine)
        private_note(runtime, "Leo is allergic to peanuts")
        session = runtime.open_session()
        replies.extend(
            [call("load_tool_group", group="web"), call("web_search", query="LEO peanut")]
        )
        events = await collect(session, "Look up something for me on the web.")
        assert engine.queries == []
        results = [e for e in events if isinstance(e, ToolResultEvent)]
        assert [(r.name, r.ok) for r in results][-1] == ("web_search", False)
        assert results[-1].preview.startswith("error: not sent")
        (done,) = [e for e in events if isinstance(e, TurnDone)]
        # Annie's own words end the turn: the model gets no round to try other words.
        assert done.text == REFUSED
        assert len(llm.prompts) == 2
        logged = runtime.store.events.find(session.id, kinds=["tool_result"])
        assert "not sent" in str(logged[-1].content)
        assert len(egress_for(runtime.store).refused) == 1

        # An ordinary search goes out as before.
        replies.extend([call("web_search", query="peanut allergy symptoms"), "Here you are."])
        events = await collect(session, "And search for peanut allergy symptoms.")
        assert [q for _, q in engine.queries] == ["peanut allergy symptoms"]
        assert [e.text for e in events if isinstance(e, TurnDone)] == ["Here you are."]
        await runtime.close()


async def test_a_number_split_over_two_searches_in_one_turn_is_caught(
    tmp_path: Path, tokenizer: Tokenizer
) -> None:
    with SearchEngine() as engine:
        runtime, replies, _ = web_runtime(tmp_path, tokenizer, engine)
        private_note(runtime, "The alarm code for the front door is 8832")
        session = runtime.open_session()
        replies.extend(
            [
                call("load_tool_group", group="web"),
                call("web_search", query="88") + "\n" + call("web_search", query="32"),
            ]
        )
        events = await collect(session, "Search the web for a couple of numbers.")
        # The first half alone says nothing; the second would complete the code.
        assert [q for _, q in engine.queries] == ["88"]
        assert [e.text for e in events if isinstance(e, TurnDone)] == [REFUSED]
        await runtime.close()


async def test_words_said_in_confidence_last_session_stay_in_this_one(
    tmp_path: Path, tokenizer: Tokenizer
) -> None:
    """A recalled episode: the user's own words, asked to be kept, are private."""
    with SearchEngine() as engine:
        runtime, replies, _ = web_runtime(tmp_path, tokenizer, engine)
        first = runtime.open_session()
        replies.append("I'll keep it to myself.")
        await collect(first, "Keep this between us: my locker code at the gym is 2941.")
        await first.close()

        second = runtime.open_session()
        replies.extend(
            [
                call("load_tool_group", group="web"),
                call("fetch_webpage", url=f"{engine.url}/lockers?code=29-41&gym=1"),
            ]
        )
        events = await collect(second, "Open the gym's locker page for me.")
        assert engine.reads == []
        results = [e for e in events if isinstance(e, ToolResultEvent)]
        assert results[-1].name == "fetch_webpage" and not results[-1].ok
        (done,) = [e for e in events if isinstance(e, TurnDone)]
        assert done.text.startswith("I didn't open that page")
        await runtime.close()


async def test_a_state_answer_read_from_a_private_note_does_not_reach_a_search(
    tmp_path: Path, tokenizer: Tokenizer
) -> None:
    with SearchEngine() as engine:
        runtime, replies, llm = web_runtime(tmp_path, tokenizer, engine)
        private_note(runtime, "My sister Ingrid is going through a divorce")
        session = runtime.open_session()
        events = await collect(session, "What did I tell you about Ingrid?")
        answers = [e for e in events if isinstance(e, StateAnswer)]
        assert answers and "Ingrid" in answers[0].text
        replies.extend(
            [
                call("load_tool_group", group="web"),
                call("web_search", query="ingrid divorce lawyer"),
            ]
        )
        events = await collect(session, "Find me some help with that online.")
        assert engine.queries == []
        assert [e.text for e in events if isinstance(e, TurnDone)] == [REFUSED]
        # The answer read from the private note is private too: out of every prompt made
        # while the web is in reach, and its episode is private.
        assert llm.prompts and all("going through a divorce" not in p for p in llm.prompts)
        (said,) = runtime.store.events.find(session.id, kinds=["state_answer"])
        assert runtime.store.provenance.private_events([said.id]) == {said.id}
        await runtime.close()


async def test_get_context_withholds_private_notes_and_turns_while_the_web_is_in_reach(
    tmp_path: Path, tokenizer: Tokenizer
) -> None:
    with SearchEngine() as engine:
        runtime, replies, _ = web_runtime(tmp_path, tokenizer, engine)
        note = private_note(runtime, "My mother's maiden name is Villanueva")
        runtime.store.notes.add("My mother's favourite flower is the iris")
        session = runtime.open_session()
        replies.append("Noted, and I'll keep it to myself.")
        await collect(session, "This is private: my locker code is 2941.")
        said = runtime.store.events.find(session.id, kinds=["user"])[-1].id
        replies.extend(
            [
                call("load_tool_group", group="web"),
                call("get_context", query="mother maiden name")
                + "\n"
                + call("get_context", type="notes")
                + "\n"
                + call("get_context", ids=[note, said])
                + "\n"
                + call("get_context", type="turns", ids=["1", "1"]),
                "Done.",
            ]
        )
        await collect(session, "Write me a short poem using what you know about my mother.")
        results = runtime.store.events.find(session.id, kinds=["tool_result"])[-4:]
        texts = [str(r.content) for r in results]
        assert all("Villanueva" not in t and "2941" not in t for t in texts), texts
        assert "iris" in texts[0] and "one private note left out" in texts[0]
        assert "withheld" in texts[2] and "withheld" in texts[3]

        await runtime.close()

    # With nothing in reach that sends data out, the user's own notes are all there.
    llm = ScriptedLLM(tokenizer, lambda prompt: replies.popleft() if replies else "Done.")
    runtime = make_runtime(llm, tmp_path)
    other = runtime.open_session()
    replies.extend([call("get_context", ids=[note]), "Done."])
    await collect(other, "What's my mother's maiden name, from your notes?")
    (result,) = runtime.store.events.find(other.id, kinds=["tool_result"])
    assert "Villanueva" in str(result.content)
    await runtime.close()
