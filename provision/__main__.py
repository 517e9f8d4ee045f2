"""`python3 -S -m provision [--json | --shell [--show]]`: print the set-up plan; change nothing.

Text for a person (`./start.sh plan`: the machine, the builds, the model and budget, then the
commands set-up will run with what each downloads), JSON for tests and tools (`--json`), or
shell assignments that `start.sh` evaluates to carry the plan out (`--shell`; `--show` also
prints the text on stderr, so one probe of the machine serves both). What is installed is read
from `.venv` unless `--venv` names another; sizes are looked up only for what is not.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path
from typing import Any, TextIO

from provision.budget import Budget, budget_lines
from provision.footprint import format_bytes
from provision.indexes import HttpIndex
from provision.indexes import size_text as _size
from provision.machine import probe
from provision.plan import make_plan
from provision.settings import ROOT, load


def _gb(n: int | None) -> str:
    return "unknown" if n is None else f"{n / 1e9:.1f} GB"


def render(plan: dict[str, Any], out: TextIO) -> None:
    def say(label: str, text: str) -> None:
        out.write(f"  {label:<18}{text}\n")

    out.write("Set-up plan for this machine (nothing is changed until ./start.sh runs)\n")
    gpu = plan["gpu"]
    if gpu["cards"]:
        for card in gpu["cards"]:
            say(
                "GPU",
                f"{card['name']}: {card['total_mib']:,} MiB, {card['free_mib']:,} MiB free; "
                f"driver {card['driver']}, CUDA {gpu['cuda'] or 'unknown'}"
                + (
                    f", compute capability {card['capability'][0]}.{card['capability'][1]}"
                    if card.get("capability")
                    else ""
                ),
            )
    else:
        say("GPU", f"none ({gpu['status']})")
    nvcc = plan["nvcc"]
    off = "" if nvcc["on_path"] else " (not on PATH)"
    say("nvcc", f"{nvcc['path']}{off} (CUDA {nvcc['version']})" if nvcc["path"] else "not found")
    say("C/C++ compiler", plan["compiler"] or "not found")
    say("Python", plan["python"])
    say("device", plan["device"].upper())
    for label, key in (("llama-cpp-python", "llama_cpp"), ("PyTorch", "torch")):
        entry = plan[key]
        kept = f"; installed: {entry['installed']}, kept" if entry["installed"] else ""
        say(label, entry["label"] + kept)
    cuda = plan["cuda_runtime"]
    if cuda["packages"]:
        say("CUDA libraries", f"{' '.join(cuda['packages'])}, {_size(cuda['bytes'])}")
    llm = plan["llm"]
    for model in plan["models"]:
        size = f", {_gb(model['bytes'])}" if model["bytes"] else ""
        say(f"model {model['role']}", f"{model['what']}{size}; {model['source']}")
        if model["role"] == "llm" and llm["source"] in ("table", "config"):
            why = (
                f"the card table's row for {llm['min_free_gib']} GiB free and more"
                if llm["source"] == "table"
                else "set in your config"
            )
            say("", f"chosen by {why}")
    say("window", f"{llm['window']:,} tokens ({llm['window_source']})")
    if plan["budget"]:
        budget = Budget.from_dict(plan["budget"])
        say("budget", budget_lines(budget)[0])
        for line in budget_lines(budget)[1:]:
            say("", line)
    elif llm["source"] != "server":  # a served model's checkpoints are the engine's affair
        say("checkpoints", f"{llm['checkpoints']} kept in host memory")
    disk = plan["disk"]
    say(
        "disk",
        f"downloads {_gb(disk['need_bytes'])}; {_gb(disk['free_bytes'])} free for {disk['path']}"
        + ("" if disk["ok"] else ": NOT ENOUGH"),
    )
    if plan["host"]["mem_available"] is not None:
        say("host memory", f"{format_bytes(plan['host']['mem_available'])} available")
    for name, value in plan["settings"].items():
        say("sets", f"{name}={value} (for the runtime; your config wins)")
    for message in plan["messages"]:
        out.write(f"  note: {message}\n")
    out.write("Commands ./start.sh will run (those already done are skipped)\n")
    for n, step in enumerate(plan["commands"], 1):
        out.write(f"  {n}. {step['step']}: {_size(step['bytes'])}\n")
        out.write(f"     {step['command']}\n")
        out.write(f"     {step['what']}\n")


def shell(plan: dict[str, Any]) -> str:
    """Assignments for start.sh (bash): the routes, the pip arguments, the exports."""
    llama, torch, cuda = plan["llama_cpp"], plan["torch"], plan["cuda_runtime"]

    def array(items: list[str]) -> str:
        return "(" + " ".join(map(shlex.quote, items)) + ")"

    lines = [
        f"PLAN_DEVICE={shlex.quote(plan['device'])}",
        f"PLAN_LLAMA_ROUTE={shlex.quote(llama['route'])}",
        f"PLAN_LLAMA_LABEL={shlex.quote(llama['label'])}",
        f"PLAN_LLAMA_SPEC={shlex.quote(llama['spec'])}",
        f"PLAN_LLAMA_BLOCKED={shlex.quote(llama['blocked'])}",
        f"PLAN_CMAKE_ARGS={shlex.quote(llama['cmake_args'])}",
        f"PLAN_CUDACXX={shlex.quote(llama['cudacxx'])}",
        "PLAN_LLAMA_ARGS=" + array(llama["pip_args"]),
        "PLAN_CUDA_LIBS=" + array(cuda["packages"]),
        "PLAN_CUDA_NAMES=" + array(cuda["names"]),
        f"PLAN_CUDA_LABEL={shlex.quote('; '.join(cuda['for']))}",
        f"PLAN_TORCH_ROUTE={shlex.quote(torch['route'])}",
        f"PLAN_TORCH_LABEL={shlex.quote(torch['label'])}",
        f"PLAN_TORCH_SPEC={shlex.quote(torch['spec'])}",
        "PLAN_TORCH_ARGS=" + array(torch["pip_args"]),
        "PLAN_EXPORTS=("
        + " ".join(shlex.quote(f"{k}={v}") for k, v in plan["settings"].items())
        + ")",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="./start.sh plan", description=__doc__)
    parser.add_argument("--json", action="store_true", help="print the plan as one JSON object")
    parser.add_argument("--shell", action="store_true", help="print assignments for start.sh")
    parser.add_argument("--show", action="store_true", help="with --shell: the text on stderr")
    parser.add_argument(
        "--venv", type=Path, default=ROOT / ".venv", help="the virtual environment to look in"
    )
    args = parser.parse_args(argv)
    try:
        settings = load()
    except ValueError as exc:
        print(f"./start.sh plan: {exc}", file=sys.stderr)
        return 2
    nvcc_dirs = [str(d) for d in settings.get("gpu.nvcc_dirs")]
    machine = probe(args.venv, settings.home / "models", nvcc_dirs)
    plan = make_plan(machine, settings, HttpIndex(float(settings.get("gpu.probe_timeout_s"))))
    if args.json:
        print(json.dumps(plan, indent=2))
    elif args.shell:
        if args.show:
            render(plan, sys.stderr)
        sys.stdout.write(shell(plan))
    else:
        render(plan, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
