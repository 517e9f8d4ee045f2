"""A voice session whose model runs on a serving engine that goes away: the user hears why,
the page shows the reason, and the words they said are kept."""

from __future__ import annotations

import time
from pathlib import Path

from bot.server.app import Engines
from config import Settings
from memory.store import Store
from models import ModelUnavailable, load_llm, resolve
from testkit.llama_server import LlamaCppServer
from testkit.peer import VoiceClient
from tests.bot.voice.conftest import serve
from tests.conftest import served_settings


async def test_a_served_model_that_goes_away_is_said_aloud_and_shown(
    annie_home: Path, engines: Engines, model_settings: Settings
) -> None:
    with LlamaCppServer(resolve("llm", model_settings).path, n_ctx=4096) as engine:
        settings = served_settings(engine, annie_home, 4096)
        llm = load_llm(settings)
        with Store.open(settings) as store:
            async with serve(settings, engines, llm, store) as server:
                client = VoiceClient(server.url)
                session_id = await client.connect()
                session = server.runtime.sessions[0]
                # The warm-up's prefill runs on the served engine's one thread: beside a CPU-bound
                # load it took over a minute here. The bound is for a hang, not for speed.
                await client.wait_for(
                    lambda c: any(x.label == "warm-up" for x in session.ledger.calls),
                    300,
                    "the warm-up",
                )
                engine.kill()
                sent = time.monotonic()
                request = "Tell me a story about a dragon."
                client.send_text(request)
                done = await client.wait_for(
                    lambda c: [e for e in c.of_type("assistant_done") if e["path"] == "model"],
                    60,
                    "the failed turn",
                )
                assert done[0]["failed"] and done[0]["text"] == ModelUnavailable.spoken
                errors = [e for e in client.of_type("error") if e.get("where") == "model"]
                assert len(errors) == 1 and engine.url in errors[0]["message"]
                # The apology is spoken: at least half a second of voiced 20 ms frames.
                await client.wait_for(
                    lambda c: len(c.voiced_since(sent)) >= 25, 60, "the spoken apology"
                )
                await client.close()
            said = [e.content for e in store.events.find(session_id) if e.kind == "user"]
            assert said == [request]
