"""Idle-time model work starts once Annie's answer has begun to sound, not when its text is
done.

The turn's text is complete before Piper has made the answer's first sentence, the one the
user waits for; a warm-up or a summary run then takes the cores it needs (on two cores,
Piper's first chunk took 0.6 s beside the model instead of a tenth of that alone). The
sentences after it are synthesized while it plays, far faster than real time, so background
work may share the cores from the first sound on, and keeps the time Annie speaks.
"""

from __future__ import annotations

import asyncio

from bot.server.app import Engines
from config import Settings
from memory.store import Store
from models.base import Tokenizer
from models.fakes import ScriptedLLM
from testkit.peer import VoiceClient
from tests.bot.voice.conftest import serve
from tests.bot.voice.test_barge_in import LONG_REPLY


async def test_the_warm_up_a_turn_stopped_goes_on_once_the_answer_sounds(
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
        # Every call replaces `last_stats`; a prefill generates nothing. Watch for the first
        # prefill after the answer's generation, closely.
        await client.wait_for(lambda c: llm.last_stats.generated_tokens > 0, 60, "the answer")
        voice = server.voices[0]
        while llm.last_stats.generated_tokens > 0:
            await asyncio.sleep(0.002)
        # The warm-up went on only once her first frame of voice had gone out.
        assert voice.output.voiced_frames_sent > 0
        # It went on from what was kept: never from scratch (a call with nothing left to
        # evaluate, when the turn's own prompt already covered the head, has no plan).
        stats = llm.last_stats
        assert stats.plan in ("extend", "restore", "cut") or stats.prompt_tokens == 0, stats
        assert not stats.full_reprefill, stats
        assert not voice.stats.barge_ins  # while she speaks: nothing stopped her for it
        await client.close()
