"""Idle time begins when Annie has said her answer, not when its text is done.

The turn's text is complete long before its audio has played, and a warm-up or a summary run
then would take the cores that speech synthesis needs for the sentences still to come (on two
cores, Piper's first chunk took 0.6 s beside the model instead of a tenth of that alone).
"""

from __future__ import annotations

import asyncio

from bot.server import Engines
from config import Settings
from memory.store import Store
from models.base import Tokenizer
from models.fakes import ScriptedLLM
from testkit.peer import VoiceClient
from tests.bot.voice.conftest import serve
from tests.bot.voice.test_barge_in import LONG_REPLY


async def test_the_warm_up_a_turn_stopped_goes_on_once_the_answer_has_been_said(
    voice_settings: Settings, engines: Engines, tokenizer: Tokenizer, store: Store
) -> None:
    # A model that takes 2 ms a prompt token: the warm-up (about 2,000 tokens) is still
    # running when the question comes, and the turn stops it for later.
    llm = ScriptedLLM(tokenizer, [LONG_REPLY], prefill_s_per_token=0.002)
    async with serve(voice_settings, engines, llm, store) as server:
        client = VoiceClient(server.url)
        await client.connect()
        await asyncio.sleep(0.3)
        client.send_text("Tell me about the sea.")
        await client.wait_for(lambda c: c.of_type("assistant_done"), 60, "the answer's text")
        voice = server.voices[0]
        await client.wait_for(lambda c: len(c.voiced_since(0)) >= 100, 30, "2 s of answer")
        # The model's last call is still the answer's generation: no prefill ran while she
        # spoke (every call replaces `last_stats`; a prefill generates nothing).
        assert llm.last_stats.generated_tokens > 0
        client.send({"type": "interrupt"})  # she is cut: the answer is over
        await client.wait_for(lambda c: llm.last_stats.generated_tokens == 0, 30, "the warm-up")
        assert voice.stats.barge_ins
        assert llm.last_stats.plan in ("extend", "restore", "cut")  # went on from what was kept
        await client.close()
