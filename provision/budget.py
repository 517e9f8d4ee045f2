"""The memory budget of one set-up: what lives on the card, what lives in host memory, and free.

On the card: the weights (the GGUF's size), the KV cache and the recurrent state (computed from
the model's hyperparameters by `provision.footprint`), llama.cpp's compute buffers and Whisper
(stated estimates, see `[gpu]` in config/default.toml), and headroom kept free. In host memory:
the saved turn checkpoints, each up to a full window's state. The planner uses it to choose a
model and window per card; `doctor` prints the same lines for the model it loaded.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields
from typing import Any

from provision.footprint import CTX_PAD, F32, ModelShape, estimate, format_bytes

MIB = 1024 * 1024
GIB = 1024 * MIB
# llama.cpp's batch as Annie loads the model (n_batch 512; the micro-batch defaults to it).
N_UBATCH = 512


@dataclass(frozen=True)
class Estimates:
    """The stated estimates beside the computed lines (the `[gpu]` config keys, in bytes)."""

    compute_base: int = 512 * MIB
    whisper: int = 768 * MIB
    headroom: int = 512 * MIB
    host_reserve: int = 4 * GIB


@dataclass(frozen=True)
class Budget:
    """One model at one window, line by line. `free`/`host_available` are None when unknown."""

    window: int
    weights: int
    kv: int
    recurrent: int
    compute: int
    whisper: int
    headroom: int
    checkpoints: int
    checkpoint_bytes: int
    checkpoints_bytes: int
    free: int | None
    host_available: int | None
    host_reserve: int

    @property
    def on_card(self) -> int:
        """Everything that must fit on the card, headroom included."""
        return self.weights + self.kv + self.recurrent + self.compute + self.whisper + self.headroom

    @property
    def fits(self) -> bool:
        return self.free is None or self.on_card <= self.free

    @property
    def host_fits(self) -> bool:
        if self.host_available is None:
            return True
        return self.checkpoints_bytes <= self.host_available - self.host_reserve

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Budget:
        """Back from `as_dict` (its derived keys are dropped)."""
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out.update(on_card=self.on_card, fits=self.fits, host_fits=self.host_fits)
        return out


def compute_bytes(shape: ModelShape, window: int, base: int) -> int:
    """The compute-buffer estimate: `base`, plus one batch's attention scores over the window.

    Without flash attention llama.cpp materializes K·Q for a micro-batch against every cell,
    n_cells x n_ubatch x n_head float32, which is what grows with the window (1 GiB for
    Qwen3.5's 16 heads at 32k).
    """
    cells = math.ceil(window / CTX_PAD) * CTX_PAD
    scores = cells * N_UBATCH * shape.n_head * F32 if shape.attention_layers else 0
    return base + scores


def vram_budget(
    shape: ModelShape,
    weights: int,
    window: int,
    checkpoints: int,
    free: int | None,
    host_available: int | None,
    est: Estimates | None = None,
) -> Budget:
    """The budget of `shape` with `weights` bytes of GGUF at `window` tokens."""
    est = est or Estimates()
    fp = estimate(shape, window, checkpoints=checkpoints)
    return Budget(
        window=window,
        weights=weights,
        kv=fp.kv_bytes,
        recurrent=fp.recurrent_bytes,
        compute=compute_bytes(shape, window, est.compute_base),
        whisper=est.whisper,
        headroom=est.headroom,
        checkpoints=checkpoints,
        checkpoint_bytes=fp.checkpoint_bytes,
        checkpoints_bytes=fp.checkpoints_bytes,
        free=free,
        host_available=host_available,
        host_reserve=est.host_reserve,
    )


def checkpoints_that_fit(budget: Budget, wanted: int) -> int:
    """How many of `wanted` checkpoints fit in host memory (at least one is always kept)."""
    if budget.host_available is None or budget.checkpoint_bytes <= 0:
        return wanted
    room = budget.host_available - budget.host_reserve
    return max(1, min(wanted, room // budget.checkpoint_bytes))


def budget_lines(budget: Budget, place: str = "on the card") -> list[str]:
    """The budget as text, one line per item, as the plan and `doctor` print it."""
    fb = format_bytes
    rows = [
        ("weights", budget.weights, "the GGUF file"),
        ("KV cache", budget.kv, f"{budget.window:,} tokens, f16"),
        ("recurrent state", budget.recurrent, "one sequence, f32"),
        ("compute buffers", budget.compute, "estimate"),
        ("Whisper", budget.whisper, "estimate"),
        ("headroom", budget.headroom, "kept free"),
    ]
    lines = [f"{name:<20} {fb(n):>10}  {note}" for name, n, note in rows]
    free = "unknown" if budget.free is None else fb(budget.free)
    verdict = "fits" if budget.fits else "DOES NOT FIT"
    lines.append(f"{'total ' + place:<20} {fb(budget.on_card):>10}  of {free} free: {verdict}")
    host = "unknown" if budget.host_available is None else fb(budget.host_available)
    lines.append(
        f"{'checkpoints':<20} {fb(budget.checkpoints_bytes):>10}  {budget.checkpoints} x "
        f"{fb(budget.checkpoint_bytes)} in host memory; {host} available, "
        f"{fb(budget.host_reserve)} kept for the runtime"
        + ("" if budget.host_fits else ": DOES NOT FIT")
    )
    return lines
