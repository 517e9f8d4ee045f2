"""The install half of the plan: the builds, the CUDA libraries, and the commands that fetch them.

Decides, from what the indexes publish (`routes`, `cuda_runtime`), how PyTorch,
llama-cpp-python and the CUDA runtime libraries are installed, and whether the LLM will really
run on the card: where llama-cpp-python can only be built for the CPU, nothing is sized for the
card and the plan says why. `commands` spells out what `./start.sh` will run, step by step, with
the bytes each step downloads where the indexes say.
"""

from __future__ import annotations

import shlex
from typing import Any

from provision.cuda_runtime import runtime_route
from provision.indexes import Index
from provision.indexes import size_text as _size
from provision.machine import Machine
from provision.routes import llama_route, torch_route
from provision.settings import Layered

PIP = [".venv/bin/python", "-m", "pip", "install"]


def builds(m: Machine, s: Layered, device: str, served: bool, idx: Index) -> dict[str, Any]:
    """The llama-cpp-python, PyTorch and CUDA-library routes, and the device they leave.

    `device` comes back as "cpu" when the chat model cannot run on the card (no CUDA build
    of llama-cpp-python can be had), unless a serving engine runs the chat model."""
    messages: list[str] = []
    llama = llama_route(m, s, device, idx)
    if device == "cuda" and not served and llama["route"] == "cpu":
        messages.append(
            "The LLM would run on the CPU (see the llama-cpp-python note), so nothing is sized "
            "for the card and no card-sized model is downloaded: Annie runs on the CPU with the "
            "small packaged models until llama-cpp-python has CUDA."
        )
        device = "cpu"
    torch = torch_route(m, s, device, idx)
    cuda = runtime_route(m, s, device, llama, idx)
    messages += llama.pop("notes") + torch.pop("notes")
    for name, entry, cuda_tag in (("llama-cpp-python", llama, "+cuda"), ("torch", torch, "+cu")):
        have = entry["installed"]
        wants_cuda = entry["route"] not in ("cpu", "pypi")
        if have and wants_cuda and cuda_tag not in have:
            messages.append(
                f"{name} {have} is installed without CUDA; `.venv/bin/pip uninstall -y {name}` "
                "and ./start.sh again installs it as planned."
            )
    return {"device": device, "llama": llama, "torch": torch, "cuda": cuda, "messages": messages}


def pip_command(args: list[str]) -> str:
    return shlex.join([*PIP, *args])


def commands(plan: dict[str, Any]) -> list[dict[str, Any]]:
    """What `./start.sh` runs for this plan, in order, and the bytes each step downloads."""
    torch, llama, cuda = plan["torch"], plan["llama_cpp"], plan["cuda_runtime"]
    out = [
        {
            "step": "PyTorch",
            "command": pip_command([*torch["pip_args"], torch["spec"]]),
            "bytes": torch["bytes"],
            "what": torch["label"],
        }
    ]
    if cuda["packages"]:
        files = ", ".join(
            f"{f['file'] or f['package']} ({_size(f['bytes'])})" for f in cuda["files"]
        )
        out.append(
            {
                "step": "CUDA libraries",
                "command": pip_command(cuda["packages"]),
                "bytes": cuda["bytes"],
                "what": f"for {'; '.join(cuda['for'])}: {files}",
            }
        )
    env = [f"CMAKE_ARGS={llama['cmake_args']}"] if llama["cmake_args"] else []
    env += [f"CUDACXX={llama['cudacxx']}"] if llama["cudacxx"] else []
    build = ["--no-cache-dir"] if llama["route"] != "cuda-wheel" else []
    command = pip_command([*llama["pip_args"], *build, llama["spec"]])
    out.append(
        {
            "step": "llama-cpp-python",
            "command": (shlex.join(env) + " " if env else "") + command,
            "bytes": llama["bytes"],
            "what": llama["label"],
        }
    )
    if plan["device"] == "cuda" and llama["route"] != "cpu":
        out.append(
            {
                "step": "GPU check",
                "command": ".venv/bin/python -m provision.cuda_check",
                "bytes": 0,
                "what": "llama.cpp's CUDA backend opens and sees the card; cuBLAS 12 opens",
            }
        )
    out.append(
        {
            "step": "models",
            "command": ".venv/bin/python -m models.fetch",
            "bytes": plan["disk"]["need_bytes"],
            "what": ", ".join(f"{m['role']}: {m['what']}" for m in plan["models"][:2]),
        }
    )
    return out
