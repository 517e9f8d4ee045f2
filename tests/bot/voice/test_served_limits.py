"""The session cap follows the engine: a serving engine's slots lower it, a local model keeps
the configured number, and /healthz says which backend and how many sessions are allowed."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import aiohttp

from bot.server.shared import Engines, session_limit
from config import load_settings
from memory.store import Store
from models import LLM, load_llm
from models.served import ServedLLM
from testkit.llama_server import LlamaCppServer
from tests.bot.voice.conftest import serve


async def health(url: str) -> dict[str, Any]:
    async with aiohttp.ClientSession() as http, http.get(f"{url}/healthz") as r:
        return dict(await r.json())


async def test_a_serving_engine_s_slots_cap_the_sessions(
    served_smollm2: LlamaCppServer, annie_home: Path, engines: Engines
) -> None:
    settings = load_settings(
        models={
            "llm_backend": "server",
            "llm_url": served_smollm2.url,
            "llm_path": str(served_smollm2.model),
        },
        context={"window": 4096},
        server={"max_sessions": 4},
    )
    llm = load_llm(settings)
    assert isinstance(llm, ServedLLM)
    with Store.open(settings) as store:
        async with serve(settings, engines, llm, store) as server:
            # llama-cpp-python's server does not say how many requests it runs: config stands.
            got = await health(server.url)
            assert {k: got[k] for k in ("ok", "sessions", "max_sessions", "backend")} == {
                "ok": True,
                "sessions": 0,
                "max_sessions": 4,
                "backend": "server",
            }
            assert got["engine_slots"] is None
            # What llama-server reports in /props as total_slots (-np 2).
            llm.info = replace(llm.info, slots=2)
            got = await health(server.url)
            assert (got["max_sessions"], got["engine_slots"]) == (2, 2)
    llm.close()


async def test_a_local_model_keeps_the_configured_cap(
    annie_home: Path, engines: Engines, llm: LLM
) -> None:
    settings = load_settings(context={"window": 4096}, server={"max_sessions": 3})
    assert llm.max_parallel == 1  # one call at a time; the rest queue, so sessions may exceed it
    assert session_limit(settings, llm) == 3
    assert session_limit(settings, None) == 3
    with Store.open(settings) as store:
        async with serve(settings, engines, llm, store) as server:
            got = await health(server.url)
    assert (got["max_sessions"], got["backend"], got["engine_slots"]) == (3, "local", None)
