"""The packages stand in layers, and no two modules need each other.

`provision` ← `config` ← `models` ← `memory` ← `context` ← `compaction` ← `bot` ← `testkit` ←
`bench`. `provision` (the set-up planner) is the lowest: it runs before anything is installed,
so it imports no other project package. `testkit` (test support) and `bench` (the benchmarks)
stand above the runtime: they may import it, and no runtime package imports them.
Every import counts: module-level, inside functions (lazy), under `TYPE_CHECKING`, and a
package looked up by name with importlib, because a lazy import that points upward is the
same dependency, only hidden. Modules are checked the same way for circles: two modules that
import each other, directly or around a circle, are one concept split in two.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ["provision", "config", "models", "memory", "context", "compaction", "bot"]
ABOVE = ["testkit", "bench"]
ORDER = [*LAYERS, *ABOVE]
PROJECT = {*ORDER, "tests"}


def imports_of(path: Path) -> list[tuple[int, str]]:
    """(line, dotted module name) for every import in the file, however nested."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    rel = path.relative_to(ROOT).with_suffix("")
    package = list(rel.parts if path.name == "__init__.py" else rel.parts[:-1])
    if path.name == "__init__.py":
        package = package[:-1]
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package[: len(package) - (node.level - 1)]
                base = ".".join([*parent, base] if base else parent)
            # `from pkg import mod` names the module pkg.mod; `from pkg import name`, pkg.
            names = [f"{base}.{alias.name}" for alias in node.names]
            if not any(_is_module(name) for name in names):
                names = [base]
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant | ast.JoinedStr)
        ):
            arg = node.args[0]
            text = arg.value if isinstance(arg, ast.Constant) else ast.unparse(arg)
            names = [str(text).strip("f'\"")]
        found.extend((node.lineno, name) for name in names if name.split(".")[0] in PROJECT)
    return found


def _is_module(name: str) -> bool:
    path = ROOT.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def imported_packages(path: Path) -> list[tuple[int, str]]:
    """(line, top-level project package) for every import in the file."""
    return sorted({(line, name.split(".")[0]) for line, name in imports_of(path)})


def files(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py"))


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_the_layer_list_covers_every_package() -> None:
    packages = {p.name for p in ROOT.iterdir() if (p / "__init__.py").is_file()}
    assert packages - {"tests"} == set(ORDER)


@pytest.mark.parametrize("package", ORDER)
def test_each_package_imports_only_from_the_layers_below(package: str) -> None:
    allowed = set(ORDER[: ORDER.index(package) + 1])
    wrong = [
        f"{path.relative_to(ROOT)}:{line} imports {top}"
        for path in files(package)
        for line, top in imported_packages(path)
        if top not in allowed
    ]
    assert not wrong, "\n".join(wrong)


def import_graph(packages: list[str]) -> dict[str, set[str]]:
    """Module → the project modules it imports (a name that is not a module counts as the
    module that defines it: `from bot.turn import events` is bot.turn.events)."""
    paths = {module_name(p): p for package in packages for p in files(package)}
    graph: dict[str, set[str]] = {name: set() for name in paths}
    for name, path in paths.items():
        for _, target in imports_of(path):
            while target and target not in paths:
                target = target.rpartition(".")[0]
            if target and target != name:
                graph[name].add(target)
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_two_modules_import_each_other() -> None:
    found = circles(import_graph(ORDER))
    assert not found, "\n".join(" <-> ".join(group) for group in found)


def test_the_checkers_see_lazy_imports_and_circles(tmp_path: Path) -> None:
    # The checkers themselves must be able to fail: an upward import hidden in a function and
    # under TYPE_CHECKING, and an importlib lookup, are all found; a circle is found.
    sample = ROOT / "tests" / "probe_layers_tmp.py"
    sample.write_text(
        "from typing import TYPE_CHECKING\n"
        "import importlib\n"
        "if TYPE_CHECKING:\n    from bot.turn.session import Session\n"
        "def f() -> None:\n    from compaction import create_hooks\n"
        "    importlib.import_module('bot.tools')\n",
        encoding="utf-8",
    )
    try:
        tops = [top for _, top in imported_packages(sample)]
    finally:
        sample.unlink()
    assert tops.count("bot") == 2 and "compaction" in tops
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


# What an engine can do is declared on the LLM interface (`models.base.LLM`: `parallel`,
# `max_parallel`, `n_ctx`, `kind`, `close`); outside `models/`, nothing asks which engine it is.
_ENGINE_PROBES = frozenset(["n_ctx", "close", "max_parallel", "info", "label", "kind", "meter"])


def engine_probes(path: Path) -> list[tuple[int, str]]:
    """(line, what) for each comparison of an engine's `backend` and each `getattr` or
    `hasattr` of an engine capability by name in the file."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(isinstance(s, ast.Attribute) and s.attr == "backend" for s in sides):
                found.append((node.lineno, "backend compared"))
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("getattr", "hasattr")
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and node.args[1].value in _ENGINE_PROBES
        ):
            found.append((node.lineno, f"{node.func.id} {node.args[1].value!r}"))
    return found


def test_nothing_outside_models_asks_which_engine_it_is() -> None:
    outside = [p for name in ORDER if name != "models" for p in files(name)]
    probes = [f"{p.relative_to(ROOT)}:{line}: {what}" for p in outside
              for line, what in engine_probes(p)]  # fmt: skip
    assert probes == []


def test_the_engine_probe_check_sees_both_kinds(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "def f(llm):\n    if llm.backend == 'server':\n        pass\n"
        "    close = getattr(llm, 'close', None)\n    return getattr(llm, 'model_path', '')\n"
    )
    assert engine_probes(sample) == [(2, "backend compared"), (4, "getattr 'close'")]


# The voice connection and the conversation meet only on the conversation's inbox and outbox
# (`bot.turn.inbox`, `bot.turn.events`): neither imports the other's module.
SEAM = {"bot.voice": "bot.turn.session", "bot.turn": "bot.voice"}


def seam_crossings(graph: dict[str, set[str]]) -> list[str]:
    """Each import across the seam between the voice stages and the conversation."""
    return [
        f"{module} imports {target}"
        for module, targets in sorted(graph.items())
        for side, other in SEAM.items()
        if module == side or module.startswith(side + ".")
        for target in sorted(targets)
        if target == other or target.startswith(other + ".")
    ]


def test_the_voice_and_the_conversation_meet_only_on_the_inbox() -> None:
    assert seam_crossings(import_graph(ORDER)) == []
    # The check can fail: an import either way is found.
    probe = {"bot.voice.x": {"bot.turn.session"}, "bot.turn.y": {"bot.voice.session"}}
    assert seam_crossings(probe) == [
        "bot.turn.y imports bot.voice.session",
        "bot.voice.x imports bot.turn.session",
    ]
