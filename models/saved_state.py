"""The shared head's model state on disk, so a server that starts again does not evaluate it.

The head every session shares (system prompt and tool schemas, about 2,000 tokens) is the
same from one start to the next until the prompt, the tools, the model or llama.cpp change.
Evaluating it takes 15 s on a 2-core CPU and most of a second on a GPU; reading it back takes
milliseconds. The file is named by a hash of everything that makes the state what it is (the
model file, its size and modification time, the window, the device, llama-cpp-python's
version and the head's text), so any change misses and the head is evaluated afresh.

A file holds a magic line, a JSON header, then the tokens (int32), where the text and tokens
align (int64 pairs), the last token's logits (float32) and llama.cpp's state bytes. It is
written to a temporary name and renamed, so a crash mid-write leaves no half file under the
real name; a file that does not read back whole is deleted and the head evaluated again.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
from pathlib import Path
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

MAGIC = b"ANNIE-MODEL-STATE 1\n"
SUFFIX = ".state"
# Heads of earlier prompts or models are left behind when those change: keep a few.
KEEP = 3


def state_file(directory: Path, identity: list[str], text: str) -> Path:
    """Where the state after `text` lives for the model that `identity` describes."""
    digest = hashlib.sha256("\0".join([*identity, text]).encode("utf-8")).hexdigest()
    return directory / f"head-{digest[:24]}{SUFFIX}"


def write(
    path: Path,
    text: str,
    tokens: list[int],
    boundaries: list[tuple[int, int]],
    logits: np.ndarray[Any, Any],
    state: np.ndarray[Any, Any],
) -> None:
    """Save one state; older files in the same folder beyond the last few are removed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    header = {
        "text_sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
        "tokens": len(tokens),
        "boundaries": len(boundaries),
        "logits": int(logits.size),
        "state_bytes": int(state.size),
    }
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with tmp.open("wb") as f:
            f.write(MAGIC)
            f.write(json.dumps(header).encode("utf-8") + b"\n")
            f.write(np.asarray(tokens, dtype="<i4").tobytes())
            f.write(np.asarray(boundaries, dtype="<i8").reshape(-1).tobytes())
            f.write(np.asarray(logits, dtype="<f4").tobytes())
            f.write(np.asarray(state, dtype=np.uint8).tobytes())
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()
    _prune(path.parent, keep=path)


def read(
    path: Path, text: str
) -> tuple[list[int], list[tuple[int, int]], np.ndarray[Any, Any], np.ndarray[Any, Any]] | None:
    """(tokens, boundaries, logits, state bytes) saved for `text`, or None. A file that is
    unreadable, cut short or for another text is deleted: it would miss every time."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        log.warning("could not read the saved model state %s: %s", path, exc)
        return None
    try:
        return _parse(data, text)
    except (ValueError, KeyError, json.JSONDecodeError) as exc:
        log.warning("the saved model state %s is unusable (%s); evaluating afresh", path, exc)
        with contextlib.suppress(OSError):
            path.unlink()
        return None


def _parse(
    data: bytes, text: str
) -> tuple[list[int], list[tuple[int, int]], np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    if not data.startswith(MAGIC):
        raise ValueError("not a saved model state")
    end = data.index(b"\n", len(MAGIC))
    header = json.loads(data[len(MAGIC) : end])
    if header["text_sha256"] != hashlib.sha256(text.encode("utf-8")).hexdigest():
        raise ValueError("saved for another text")
    at = end + 1
    sizes = (
        4 * int(header["tokens"]),
        16 * int(header["boundaries"]),
        4 * int(header["logits"]),
        int(header["state_bytes"]),
    )
    if len(data) != at + sum(sizes):
        raise ValueError(f"{len(data)} bytes, the header says {at + sum(sizes)}")
    parts = []
    for size in sizes:
        parts.append(data[at : at + size])
        at += size
    tokens = np.frombuffer(parts[0], dtype="<i4").astype(int).tolist()
    pairs = np.frombuffer(parts[1], dtype="<i8").reshape(-1, 2).tolist()
    logits = np.frombuffer(parts[2], dtype="<f4").astype(np.float32)
    state = np.frombuffer(parts[3], dtype=np.uint8).copy()
    return tokens, [(int(a), int(b)) for a, b in pairs], logits, state


def _prune(directory: Path, keep: Path) -> None:
    files = sorted(directory.glob(f"head-*{SUFFIX}"), key=_mtime, reverse=True)
    # Half-written files of a process killed while writing (they never got the real name).
    stale = [t for t in directory.glob(".head-*.tmp") if f".{os.getpid()}." not in t.name]
    for old in [f for f in files if f != keep][KEEP - 1 :] + stale:
        with contextlib.suppress(OSError):
            old.unlink()


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0
