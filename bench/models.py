"""`python -m bot bench models`: load time and speed of every engine, measured in one run.

Figures: STT and TTS real-time factors (seconds of work per second of audio), LLM prefill and
generation tokens per second, tokenizer tokens per second, VAD and embedding throughput, and
what incremental evaluation saves: a second turn's evaluated versus reused tokens, and the
time to restore a turn-boundary checkpoint versus re-evaluating the whole prompt. Then what a
checkpoint costs on a hybrid: save and restore times on a generated qwen35 model (testkit)
three-quarters full, beside the memory estimate for Qwen3.5-9B at 32,768 tokens.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import numpy as np

from config import load_settings
from models import (
    LLM,
    detect_device,
    load_embedder,
    load_llm,
    load_stt,
    load_tokenizer,
    load_tts,
    load_vad,
)
from models.footprint import format_bytes
from models.pcm import resample

HELP = (
    "load time and speed of each engine (STT/TTS real-time factor, LLM tokens/s, "
    "checkpoint save/restore)"
)

PARAGRAPH = (
    "Good morning. You have two meetings today, the first at ten with the design team. "
    "Your dentist appointment was moved to Thursday at nine. "
    "Remember to send the quarterly report before the end of the week."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--n-ctx", type=int, default=4096, help="LLM window for the run")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def _timed(fn: Any, *args: Any) -> tuple[Any, float]:
    t0 = time.perf_counter()
    out = fn(*args)
    return out, time.perf_counter() - t0


async def _collect(llm: LLM, prompt: str, max_tokens: int) -> str:
    return "".join([p async for p in llm.stream(prompt, max_tokens=max_tokens)])


def bench_llm(settings: Any, n_ctx: int) -> dict[str, Any]:
    llm, load_s = _timed(load_llm, settings, n_ctx)
    filler = " ".join(
        f"Note {i}: the meeting about project {i % 7} moved to room {i % 5}." for i in range(40)
    )
    system = {"role": "system", "content": f"You are Annie ({uuid.uuid4().hex[:6]}). {filler}"}
    turn1 = [system, {"role": "user", "content": "Summarize my notes in one sentence."}]
    prompt1 = llm.render(turn1)

    answer = asyncio.run(_collect(llm, prompt1, 64))
    first = llm.last_stats
    gen_s = max(1e-9, first.total_s - first.prefill_s)

    turn2 = [*turn1, {"role": "assistant", "content": answer}, {"role": "user", "content": "Why?"}]
    prompt2 = llm.render(turn2)
    asyncio.run(_collect(llm, prompt2, 16))
    second = llm.last_stats

    asyncio.run(_collect(llm, prompt1, 1))  # back to the turn-1 boundary: a checkpoint
    restore = llm.last_stats

    # The same second-turn prompt from scratch, for comparison (a fresh system line).
    cold = prompt2.replace(system["content"], system["content"] + " ", 1)
    asyncio.run(llm.prefill(cold))
    full = llm.last_stats

    tokenizer = load_tokenizer(settings)
    text = filler * 5
    n_tok = tokenizer.count(text)
    _, tok_s = _timed(lambda: [tokenizer.count(text) for _ in range(20)])
    return {
        "path": str(llm.path),
        "window": llm.n_ctx,
        "load_s": round(load_s, 3),
        "prefill_tokens": first.evaluated_tokens,
        "prefill_tok_per_s": round(first.evaluated_tokens / max(1e-9, first.prefill_s), 1),
        "generated_tokens": first.generated_tokens,
        "generate_tok_per_s": round(first.generated_tokens / gen_s, 1),
        "first_token_s": round(first.first_token_s, 3),
        "tokenizer_exact": tokenizer.exact,
        "tokenizer_tok_per_s": round(20 * n_tok / max(1e-9, tok_s), 0),
        "turn2_prompt_tokens": second.prompt_tokens,
        "turn2_reused_tokens": second.reused_tokens,
        "turn2_evaluated_tokens": second.evaluated_tokens,
        "turn2_prefill_s": round(second.prefill_s, 3),
        "turn2_full_prefill_s": round(full.prefill_s, 3),
        "checkpoint_restore_s": round(restore.prefill_s, 4),
        "checkpoint_restore_reused": restore.reused_tokens,
        "checkpoint_restore_full_reprefill": restore.full_reprefill,
    }


def _fill_prompt(llm: LLM, tokens: int) -> str:
    """A chat prompt of about `tokens` tokens: a long system note and one question."""
    notes: list[str] = []
    while True:
        notes.append(f"Note {len(notes)}: {PARAGRAPH}")
        system = {"role": "system", "content": " ".join(notes)}
        prompt = llm.render([system, {"role": "user", "content": "What is on today?"}])
        if llm.count(prompt) >= tokens:
            return prompt


def bench_checkpoints(settings: Any, n_ctx: int, fill: float = 0.75) -> dict[str, Any]:
    """Turn checkpoint save and restore on a generated qwen35 hybrid filled to `fill` of the
    window, beside the estimate for Qwen3.5-9B at 32,768 tokens (no download).

    Each prompt extends the last by a few words, so every call evaluates only those and saves
    a checkpoint (save = call time minus evaluation time); going back to an earlier prompt
    restores its checkpoint without evaluating anything (restore = its prefill time).
    """
    from models.footprint import QWEN35_9B, estimate, read_hparams
    from models.llm import LlamaLLM
    from testkit.qwen35 import write_qwen35_gguf

    with tempfile.TemporaryDirectory(prefix="annie-bench-") as tmp:
        path = write_qwen35_gguf(Path(tmp) / "qwen35-bench.gguf", n_layer=8, n_embd=256)
        shape = read_hparams(path)
        llm = load_llm(load_settings(models={"llm_path": str(path)}), n_ctx)
        try:
            base = _fill_prompt(llm, int(n_ctx * fill))
            prompts = [base]
            for i in range(5):
                prompts.append(f"{prompts[-1]} Reminder {i}.")
            saves: list[float] = []
            for prompt in prompts:
                stats = asyncio.run(llm.prefill(prompt))
                saves.append(stats.total_s - stats.prefill_s)
            restores: list[float] = []
            for _ in range(2):
                # Backwards only: a later prompt would extend the current one instead.
                for prompt in prompts[4:1:-1]:
                    stats = asyncio.run(llm.prefill(prompt))
                    if stats.evaluated_tokens or not stats.reused_tokens:
                        raise RuntimeError("no checkpoint hit: the restore evaluated tokens")
                    restores.append(stats.prefill_s)
                asyncio.run(llm.prefill(prompts[-1]))
            n_tokens = llm.count(prompts[-1])
        finally:
            if isinstance(llm, LlamaLLM):  # free the context before its file goes
                llm.close()
    fp = estimate(shape, n_ctx)
    checkpoint = estimate(shape, n_tokens).checkpoint_bytes
    save_s, restore_s = statistics.median(saves[1:]), statistics.median(restores)
    big = estimate(QWEN35_9B, 32768, checkpoints=settings.models.llm_checkpoints)
    return {
        "model": f"{shape.architecture}: {len(shape.attention_layers)} attention + "
        f"{len(shape.recurrent_layers)} recurrent layers, n_embd {shape.n_embd}",
        "window": n_ctx,
        "fill_tokens": n_tokens,
        "kv_cache_bytes": fp.kv_bytes,
        "recurrent_state_bytes": fp.recurrent_bytes,
        "checkpoint_bytes": checkpoint,
        "save_ms": round(save_s * 1000, 3),
        "restore_ms": round(restore_s * 1000, 3),
        "qwen35_9b": {
            "window": big.n_ctx,
            "kv_cache_bytes": big.kv_bytes,
            "recurrent_state_bytes": big.recurrent_bytes,
            "checkpoint_bytes": big.checkpoint_bytes,
            "checkpoint_half_bytes": big.checkpoint_half_bytes,
            "checkpoints": big.checkpoints,
            "checkpoints_bytes": big.checkpoints_bytes,
            # The same copy rate applied to a 9B checkpoint (a rough guide, not a measurement).
            "save_ms_at_same_rate": round(big.checkpoint_bytes / checkpoint * save_s * 1000, 1),
            "restore_ms_at_same_rate": round(
                big.checkpoint_bytes / checkpoint * restore_s * 1000, 1
            ),
        },
    }


def bench_speech(settings: Any) -> dict[str, Any]:
    tts, tts_load = _timed(load_tts, settings)
    _, first_sentence_s = _timed(lambda: next(iter(tts.synthesize_iter(PARAGRAPH))))
    chunks, tts_s = _timed(lambda: list(tts.synthesize_iter(PARAGRAPH)))
    pcm = np.concatenate([c.pcm for c in chunks])
    audio_s = len(pcm) / tts.sample_rate
    speech16 = resample(pcm, tts.sample_rate, 16000)

    stt, stt_load = _timed(load_stt, settings)
    transcript, stt_s = _timed(lambda: asyncio.run(stt.transcribe(speech16)))

    vad, vad_load = _timed(load_vad, settings)
    stream = vad.new_stream()
    frame = stream.frame_samples
    frames = [speech16[i : i + frame] for i in range(0, len(speech16) - frame, frame)]
    _, vad_s = _timed(lambda: [stream.probability(f) for f in frames])
    return {
        "tts": {
            "load_s": round(tts_load, 3),
            "audio_s": round(audio_s, 2),
            "rtf": round(tts_s / audio_s, 3),
            "first_sentence_s": round(first_sentence_s, 3),
        },
        "stt": {
            "load_s": round(stt_load, 3),
            "audio_s": round(len(speech16) / 16000, 2),
            "rtf": round(stt_s / (len(speech16) / 16000), 3),
            "text": transcript.text,
        },
        "vad": {
            "load_s": round(vad_load, 3),
            "frames": len(frames),
            "rtf": round(vad_s / (len(frames) * frame / 16000), 4),
        },
    }


def bench_embed(settings: Any) -> dict[str, Any]:
    embedder, load_s = _timed(load_embedder, settings)
    sentences = [f"Note {i}: call the dentist about appointment {i}." for i in range(64)]
    embedder.embed(sentences[:2])
    _, s = _timed(embedder.embed, sentences)
    return {"load_s": round(load_s, 3), "sentences_per_s": round(len(sentences) / s, 1)}


def run(args: argparse.Namespace) -> int:
    settings = load_settings()
    out: dict[str, Any] = {"device": detect_device(settings)}
    out["llm"] = bench_llm(settings, args.n_ctx)
    out["checkpoints"] = bench_checkpoints(settings, args.n_ctx)
    out.update(bench_speech(settings))
    out["embed"] = bench_embed(settings)
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    llm = out["llm"]
    print(f"Model benchmark on {out['device'].upper()}")
    print(f"  LLM   {llm['path']} (window {llm['window']}), load {llm['load_s']} s")
    print(
        f"        prefill {llm['prefill_tok_per_s']} tok/s ({llm['prefill_tokens']} tokens), "
        f"generation {llm['generate_tok_per_s']} tok/s, first token {llm['first_token_s']} s"
    )
    print(
        f"        tokenizer {llm['tokenizer_tok_per_s']:.0f} tok/s "
        f"({'exact' if llm['tokenizer_exact'] else 'estimate'})"
    )
    print(
        f"        turn 2: {llm['turn2_evaluated_tokens']} evaluated, "
        f"{llm['turn2_reused_tokens']} reused of {llm['turn2_prompt_tokens']} "
        f"({llm['turn2_prefill_s']} s vs {llm['turn2_full_prefill_s']} s from scratch)"
    )
    print(
        f"        checkpoint restore: {llm['checkpoint_restore_reused']} tokens in "
        f"{llm['checkpoint_restore_s']} s, full re-prefill: "
        f"{llm['checkpoint_restore_full_reprefill']}"
    )
    _print_checkpoints(out["checkpoints"])
    tts, stt, vad = out["tts"], out["stt"], out["vad"]
    print(
        f"  TTS   load {tts['load_s']} s, RTF {tts['rtf']} ({tts['audio_s']} s of audio), "
        f"first sentence {tts['first_sentence_s']} s"
    )
    print(f"  STT   load {stt['load_s']} s, RTF {stt['rtf']} ({stt['audio_s']} s of audio)")
    print(f"  VAD   load {vad['load_s']} s, RTF {vad['rtf']} ({vad['frames']} frames)")
    emb = out["embed"]
    print(f"  Embed load {emb['load_s']} s, {emb['sentences_per_s']} sentences/s")
    return 0


def _print_checkpoints(cp: dict[str, Any]) -> None:
    big, size = cp["qwen35_9b"], format_bytes
    print(f"  Checkpoints on a generated {cp['model']}")
    print(
        f"        at {cp['fill_tokens']} of {cp['window']} tokens: one checkpoint "
        f"{size(cp['checkpoint_bytes'])} (KV cache {size(cp['kv_cache_bytes'])}, recurrent "
        f"state {size(cp['recurrent_state_bytes'])}); save {cp['save_ms']} ms, restore "
        f"{cp['restore_ms']} ms (medians)"
    )
    print(
        f"        Qwen3.5-9B at {big['window']:,} tokens (estimate): KV cache "
        f"{size(big['kv_cache_bytes'])}, recurrent state {size(big['recurrent_state_bytes'])}, "
        f"one checkpoint {size(big['checkpoint_bytes'])} "
        f"({size(big['checkpoint_half_bytes'])} at half), {big['checkpoints']} kept "
        f"{size(big['checkpoints_bytes'])} of host memory"
    )
    print(
        "        at the copy rate measured above, one 9B checkpoint would take about "
        f"{big['save_ms_at_same_rate']} ms to save and {big['restore_ms_at_same_rate']} ms "
        "to restore"
    )
