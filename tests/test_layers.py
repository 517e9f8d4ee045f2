"""The packages stand in layers: each imports only from those below it.

`provision` ← `config` ← `models` ← `memory` ← `context` ← `compaction` ← `bot`. `provision`
(the set-up planner) is the lowest: it runs before anything is installed, so it imports no
other project package, and `models.footprint` and `doctor` take its memory arithmetic.
Every import counts: module-level, inside functions (lazy), and under `TYPE_CHECKING`,
because a lazy import that points upward is the same dependency, only hidden. `testkit` (test
support) may import the runtime; no runtime package imports it (the benchmarks in `bot/bench/`
may: they measure with its generated models and test peers), nor looks a package up by name
with importlib.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ["provision", "config", "models", "memory", "context", "compaction", "bot"]
PROJECT = {*LAYERS, "testkit", "tests"}


def imported_packages(path: Path) -> list[tuple[int, str]]:
    """(line, top-level project package) for every import in the file, however nested."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        elif isinstance(node, ast.ImportFrom) and node.level > 0:
            names = [path.relative_to(ROOT).parts[0]]  # relative: its own package
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
        for name in names:
            top = name.split(".")[0]
            if top in PROJECT:
                found.append((node.lineno, top))
    return found


def runtime_files(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py"))


def test_the_layer_list_covers_every_runtime_package() -> None:
    packages = {p.name for p in ROOT.iterdir() if (p / "__init__.py").is_file()}
    assert packages - {"testkit", "tests"} == set(LAYERS)


@pytest.mark.parametrize("package", LAYERS)
def test_each_package_imports_only_from_the_layers_below(package: str) -> None:
    allowed = set(LAYERS[: LAYERS.index(package) + 1])
    bench = ROOT / "bot" / "bench"
    wrong = [
        f"{path.relative_to(ROOT)}:{line} imports {top}"
        for path in runtime_files(package)
        for line, top in imported_packages(path)
        if top not in allowed and not (top == "testkit" and path.is_relative_to(bench))
    ]
    assert not wrong, "\n".join(wrong)


def test_the_checker_sees_lazy_and_type_checking_imports(tmp_path: Path) -> None:
    # The checker itself must be able to fail: an upward import hidden in a function and
    # under TYPE_CHECKING, and an importlib lookup, are all found.
    sample = tmp_path / "probe.py"
    source = (
        "from typing import TYPE_CHECKING\n"
        "import importlib\n"
        "if TYPE_CHECKING:\n    from bot.session import Session\n"
        "def f() -> None:\n    from compaction import create_hooks\n"
        "    importlib.import_module('bot.tools')\n"
    )
    sample.write_text(source, encoding="utf-8")
    tops = [top for _, top in imported_packages(sample)]
    assert tops.count("bot") == 2 and "compaction" in tops
