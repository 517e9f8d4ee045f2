"""A spoken web search that needs a yes, over a real WebRTC peer: "search the web for ..." asks
first, the spoken "yes" runs the search on a local engine, and the answer that uses the result
is said in the same turn. Once with the scripted model (what it reads is checked exactly), once
with the shipped SmolLM2 (the real engine reads the result and answers aloud)."""

from __future__ import annotations

from pathlib import Path

from bot.server.app import Engines
from bot.tools.web import SearchHit
from config import Settings, load_settings
from memory.store import Store
from models.base import LLM, TTS, Tokenizer
from models.fakes import ScriptedLLM
from models.toolcalls import write_call
from testkit.peer import VoiceClient, speak_48k
from testkit.web_fakes import SearchEngine
from tests.bot.voice.conftest import serve

FERRY = "ferry timetable Mallaig to Skye"
ANSWER = "The first ferry to Skye leaves Mallaig at nine ten."


def ferry_hits(query: str) -> list[SearchHit]:
    """What the local engine finds: the timetable first, then other pages."""
    return [
        SearchHit("Mallaig to Armadale timetable", "https://ferries.example/skye", "Mallaig 09:10"),
        *(SearchHit(f"Skye travel {n}", f"https://skye.example/{n}", "Ferries.") for n in range(3)),
    ]


def web_settings(engine: SearchEngine) -> Settings:
    return load_settings(context={"window": 4096}, tools={"web_search_url": engine.searxng_url})


def finals(client: VoiceClient) -> list[str]:
    return [e["text"] for e in client.of_type("transcript") if e["final"]]


async def say(client: VoiceClient, tts: TTS, text: str, turns: int) -> dict[str, object]:
    """Speak `text` and wait for the answer of that turn (the `turns`-th answer in all)."""
    client.mic.play(await speak_48k(tts, text))

    def answer(c: VoiceClient) -> dict[str, object] | None:
        done = c.of_type("assistant_done")
        return done[turns - 1] if len(done) >= turns else None

    found: dict[str, object] = await client.wait_for(answer, 240, f"answer {turns}")
    # As a person would, the next words wait until Annie has finished saying this answer.
    await client.wait_for(
        lambda c: any(
            e["state"] == "idle" and e.get("turn_id") == found["turn_id"]
            for e in c.of_type("voice_state")
        ),
        60,
        f"answer {turns} said",
    )
    return found


async def test_spoken_search_asks_then_the_yes_answers_with_the_result(
    annie_home: Path, engines: Engines, tokenizer: Tokenizer, tts: TTS
) -> None:
    prompts: list[str] = []
    script = [
        write_call("load_tool_group", {"group": "web"}, "json"),
        write_call("web_search", {"query": FERRY}, "json"),
        "Shall I search the web for the ferry timetable to Skye?",
        ANSWER,
    ]

    def reply(prompt: str) -> str:
        prompts.append(prompt)
        return script.pop(0)

    llm = ScriptedLLM(tokenizer, reply)
    with SearchEngine(results=ferry_hits) as engine:
        settings = web_settings(engine)
        with Store.open(settings) as store:
            async with serve(settings, engines, llm, store) as server:
                client = VoiceClient(server.url)
                try:
                    await client.connect()
                    asked = await say(client, tts, "Search the web for the ferry to Skye.", 1)
                    assert asked["path"] == "model" and "Shall I search" in str(asked["text"])
                    assert engine.queries == []  # nothing left the machine yet
                    (approval,) = store.approvals.pending()
                    assert approval.tool == "web_search" and approval.params["query"] == FERRY

                    answered = await say(client, tts, "Yes.", 2)
                    assert "yes" in finals(client)[-1].lower()
                    assert answered["path"] == "model" and answered["text"] == ANSWER
                    assert [q for _, q in engine.queries] == [FERRY]
                    # The model read the search's result, as the call's tool result.
                    assert "Mallaig 09:10" in prompts[-1]
                    # And the answer was said aloud.
                    assert any(
                        e["state"] == "speaking" and e["turn_id"] == answered["turn_id"]
                        for e in client.of_type("voice_state")
                    )
                    session = server.runtime.sessions[0]
                    results = [i for i in session.conv.items if i.kind == "tool_result"]
                    assert [i.name for i in results][-1] == "web_search"
                    assert "Mallaig 09:10" in results[-1].content
                    row = store.approvals.get(approval.id)
                    assert row is not None and row.status == "executed"
                finally:
                    await client.close()


async def test_smollm2_answers_aloud_from_an_approved_search(
    annie_home: Path, engines: Engines, llm: LLM, tts: TTS
) -> None:
    # The small model cannot be trusted to write the call, so the approval it would have
    # asked for is stored as the tool would store it; the spoken yes and all after are real.
    with SearchEngine(results=ferry_hits) as engine:
        settings = web_settings(engine)
        with Store.open(settings) as store:
            async with serve(settings, engines, llm, store) as server:
                client = VoiceClient(server.url)
                try:
                    session_id = await client.connect()
                    store.approvals.request("web_search", {"query": FERRY}, session_id, 300)
                    answered = await say(client, tts, "Yes.", 1)
                    assert answered["path"] == "model" and str(answered["text"]).strip()
                    assert [q for _, q in engine.queries] == [FERRY]
                    spoken_after = client.mic.clip_ended[1]
                    await client.wait_for(
                        lambda c: len(c.voiced_since(spoken_after)) >= 10, 60, "audio"
                    )
                    session = server.runtime.sessions[0]
                    kinds = [(i.kind, i.name) for i in session.conv.items if i.turn == 1]
                    # The call and its result come before the model's answer.
                    assert kinds[-3:] == [
                        ("tool_call", ""),
                        ("tool_result", "web_search"),
                        ("assistant", ""),
                    ]
                    assert "round 0" in [c.label for c in session.ledger.calls]
                finally:
                    await client.close()
