"""Generated files and arguments: configuration, the command line, calendars and transcripts.

Surface "config" writes `config.toml` files (valid TOML with wrong types, unknown keys, values
out of range; bytes that are not TOML) and `ANNIE_*` variables, and loads them through
`config.load_settings` in this process: each must load or raise `ConfigError` naming the key,
the file or the variable, never another exception; some cases run `python -m bot tasks list`
(settings and the store, no model) as a real process, which must exit with a one-line reason
and no traceback. Surface "commands" passes generated arguments to every `python -m bot`
command's parser, runs the cheap commands (records, devices, export, briefing, route) in this
process over the surface's ANNIE_HOME and some as real processes; never `serve`, `bench` or
anything that loads a model or reaches the network. Surface "calendar" reads generated .ics
files (broken, huge, recurrences that explode, bad zones, binary) through
`memory.calendar.Calendar` as the state path does, in a child process that is killed past its
cap. Surface "transcripts" reads generated conversation files and replay traces
(`memory.transcripts.read`, `bot.turn.replay.read_trace`).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import json
import math
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

from hypothesis import strategies as st

from testkit.fuzz import (
    PYTHON,
    ROOT,
    SurfaceReport,
    Worker,
    environ,
    fixed_cases,
    generate,
    kind_of,
    python_env,
    shown,
)

# One case in this many also runs as a real process (`python -m bot ...`): 200 in 10,000.
PROCESS_EVERY = 50
# A real process must finish within this (settings and the store: about a second).
PROCESS_S = 60.0


def _no_nul(text: str) -> str:
    # An environment variable or an argument cannot hold NUL.
    return text.replace("\x00", "")


# How deep generated brackets go: parsers that recurse fail past about a thousand, and
# Hypothesis would rarely draw that deep from a plain range of integers.
DEPTHS = st.sampled_from([1, 10, 500, 999, 1000, 2000, 5000, 20_000])
# Text any environment or argument list can hold: no NUL, no lone surrogate.
_TEXT = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), max_size=40)


# --- surface "config" -----------------------------------------------------------------------


def known_keys() -> dict[str, list[str]]:
    """Every settings section and its keys ("" is the top level)."""
    from pydantic import BaseModel

    from config import Settings

    out: dict[str, list[str]] = {"": []}
    for name, field in Settings.model_fields.items():
        kind = field.annotation
        if isinstance(kind, type) and issubclass(kind, BaseModel):
            out[name] = list(kind.model_fields)
            for sub, sub_field in kind.model_fields.items():
                inner = sub_field.annotation
                if isinstance(inner, type) and issubclass(inner, BaseModel):
                    out[f"{name}.{sub}"] = list(inner.model_fields)
        else:
            out[""].append(name)
    return out


def _toml_values() -> st.SearchStrategy[Any]:
    scalars = st.one_of(
        st.integers(min_value=-(2**63), max_value=2**63 - 1),
        st.sampled_from([0, -1, 1, 2**31, -(2**31), 10**18]),
        st.floats(),
        st.booleans(),
        _TEXT,
        st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31)),
        st.dates(),
    )
    return st.recursive(
        scalars,
        lambda inner: st.one_of(
            st.lists(inner, max_size=3), st.dictionaries(_key_names(), inner, max_size=3)
        ),
        max_leaves=6,
    )


def _key_names() -> st.SearchStrategy[str]:
    return st.one_of(
        st.text(st.sampled_from("abcdefghijklmnopqrstuvwxyz_-0123456789"), min_size=1, max_size=12),
        _TEXT.filter(bool),
    )


def toml_key(key: str) -> str:
    if key and all(c.isascii() and (c.isalnum() or c in "_-") for c in key):
        return key
    return json.dumps(key)


def toml_value(value: Any) -> str:
    """A value in TOML (inline tables and arrays for nested ones)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, str):
        return json.dumps(value)  # JSON's escapes are TOML's basic string escapes
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{toml_key(k)} = {toml_value(v)}" for k, v in value.items()) + "}"
    return json.dumps(str(value))


def render_toml(tree: dict[str, dict[str, Any]]) -> str:
    """`{section: {key: value}}` as a TOML file ("" is the top level)."""
    lines = [f"{toml_key(k)} = {toml_value(v)}" for k, v in tree.get("", {}).items()]
    for section, keys in tree.items():
        if not section:
            continue
        lines.append("[" + ".".join(toml_key(p) for p in section.split(".")) + "]")
        lines += [f"{toml_key(k)} = {toml_value(v)}" for k, v in keys.items()]
    return "\n".join(lines) + "\n"


# Where a generated `home` may point: it is where a real process creates its store.
SAFE_HOMES = ["", "elsewhere", "~/annie", "relative/dir", "{home}/other"]


@st.composite
def config_cases(draw: st.DrawFn) -> dict[str, Any]:
    keys = known_keys()
    sections = sorted(keys)
    tree: dict[str, dict[str, Any]] = {}
    for _ in range(draw(st.integers(0, 4))):
        section = draw(st.one_of(st.sampled_from(sections), _key_names()))
        known = keys.get(section, [])
        names: st.SearchStrategy[str] = _key_names()
        pick_known: bool = draw(st.booleans())
        if known and pick_known:
            names = st.sampled_from(known)
        key = draw(names)
        value = draw(_toml_values())
        if key == "home":
            value = draw(st.sampled_from(SAFE_HOMES))
        tree.setdefault(section, {})[key] = value
    text = render_toml(tree)
    form = draw(st.sampled_from(["toml", "toml", "toml", "cut", "bytes", "deep", "none"]))
    encoded = text.encode("utf-8", "surrogatepass")
    data: bytes | None = encoded
    if form == "cut":
        data = encoded[: draw(st.integers(0, len(encoded)))] + draw(st.binary(max_size=8))
    elif form == "bytes":
        data = draw(st.binary(max_size=200))
    elif form == "deep":
        data = b"a = " + b"[" * draw(DEPTHS)
    elif form == "none":
        data = None
    env_names = [
        "ANNIE_" + (f"{s}.{k}" if s else k).upper().replace(".", "__")
        for s, ks in keys.items()
        for k in ks
    ]
    env: dict[str, str] = {}
    if not draw(st.integers(0, 9)):
        # A section set as a value, then a key inside it (or the other way round).
        section = draw(st.sampled_from([s for s in sections if s and "." not in s]))
        pair = [f"ANNIE_{section.upper()}", f"ANNIE_{section.upper()}__{draw(_key_names())}"]
        for name in pair if draw(st.booleans()) else pair[::-1]:
            env[name] = draw(_TEXT)
    for _ in range(draw(st.integers(0, 3))):
        name = draw(
            st.one_of(
                st.sampled_from(env_names),
                st.sampled_from(
                    [
                        "ANNIE_",
                        "ANNIE___",
                        "ANNIE_SERVER",
                        "ANNIE_SERVER__",
                        "ANNIE_SERVER__PORT__X",
                        "ANNIE_server__port",
                        "ANNIE_NOPE",
                        "ANNIE_GPU__TIERS",
                        "ANNIE_CALENDAR__FILES",
                        "ANNIE_GPU__NVCC_DIRS",
                    ]
                ),
                st.text(st.sampled_from("ABCDEFGHIJKLMNOPQRSTUVWXYZ_"), max_size=20).map(
                    lambda s: "ANNIE_" + s
                ),
            )
        )
        if name.upper() == "ANNIE_HOME":
            continue
        env[name] = draw(
            st.one_of(
                _TEXT,
                st.sampled_from(["0", "-1", "1e400", "nan", "true", "[]", "[1, 2", '["a"]', "{}"]),
                DEPTHS.map(lambda n: "[" * n),
                st.integers().map(str),
            )
        )
    return {"toml": data, "env": env}


def _safe_env(env: dict[str, str]) -> dict[str, str]:
    """A case's variables for a real process: any that could name the home is kept inside it."""
    return {k: ("elsewhere" if k.lower().endswith("home") else _no_nul(v)) for k, v in env.items()}


def config_check(case: dict[str, Any], home: Path) -> list[tuple[str, str]]:
    """Load the case's settings in this process; the problems, or []."""
    from config import ConfigError, load_settings

    path = home / "config.toml"
    data = case["toml"]
    if data is None:
        path.unlink(missing_ok=True)
    else:
        path.write_bytes(bytes(data).replace(b"{home}", str(home).encode()))
    env = {"ANNIE_HOME": str(home), **case["env"]}
    t0 = time.monotonic()
    try:
        load_settings(environ=env)
    except ConfigError as exc:
        text = str(exc)
        named = str(path) in text or any(name in text for name in case["env"])
        if not named and not text.startswith("invalid configuration: "):
            return [("a ConfigError naming neither the file nor the variable", text[:200])]
    except Exception as exc:
        return [(kind_of(exc), f"{type(exc).__name__}: {exc}"[:300])]
    took = time.monotonic() - t0
    if took > 2.0:
        return [("loading the settings took over 2 s", f"{took:.1f} s")]
    return []


def cli_process(argv: list[str], home: Path, env: dict[str, str]) -> list[tuple[str, str]]:
    """`python -m bot ARGV` as a real process over `home`: it must end with 0, or with 1 or 2
    and a reason on stderr, and never show a traceback."""
    user = home / "user"
    user.mkdir(exist_ok=True)
    try:
        done = subprocess.run(
            [PYTHON, "-m", "bot", *argv],
            cwd=home,
            env=python_env(home, {"HOME": str(user), **env}),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=PROCESS_S,
        )
    except subprocess.TimeoutExpired:
        return [(f"`bot {argv[0]}` took over {PROCESS_S:g} s", " ".join(argv)[:200])]
    err = done.stderr.decode(errors="replace")
    if "Traceback" in err:
        return [(f"a traceback from `bot {argv[0]}`: {traceback_kind(err)}", err[-300:])]
    if done.returncode not in (0, 1, 2):
        return [(f"`bot {argv[0]}` exited {done.returncode}", err[-300:])]
    if done.returncode and not err.strip():
        return [(f"`bot {argv[0]}` failed without a reason", f"exit {done.returncode}")]
    return []


def traceback_kind(text: str) -> str:
    """A printed traceback's exception type and innermost frame of the project's code."""
    last = [ln for ln in text.splitlines() if ln and not ln[0].isspace()][-1:]
    exc = "".join(last).split(":", 1)[0]
    frames = re.findall(r'File "([^"]+)", line (\d+)', text)
    own = [(f, n) for f, n in frames if f.startswith(str(ROOT)) and "/.venv/" not in f]
    if own:
        name, line = own[-1]
        return f"{exc} at {Path(name).relative_to(ROOT)}:{line}"
    return exc


def config_surface(cases: int, seed: int, home: Path) -> SurfaceReport:
    report = SurfaceReport()
    work = home / "config"
    work.mkdir(parents=True, exist_ok=True)
    count = 0

    def check(case: dict[str, Any]) -> None:
        nonlocal count
        count += 1
        report.cases += 1
        problems = config_check(case, work)
        if count % PROCESS_EVERY == 0:
            problems += cli_process(["tasks", "list"], work, _safe_env(case["env"]))
        for kind, detail in problems:
            report.fail(kind, f"{shown(case)} -> {detail}")

    for case in fixed_cases("config"):
        check(case)
    generate(config_cases(), cases, seed, check)
    return report


# --- surface "commands" ---------------------------------------------------------------------

# Run in this process and as real processes: settings and the store, no model, no network.
RUNNABLE = ["tasks", "reminders", "notes", "devices", "export", "briefing", "route"]
# Only parsed: these load models, listen, reach the network or run benchmarks.
PARSE_ONLY = ["serve", "chat", "ask", "memory", "pair", "replay", "doctor", "bench"]


def _ids(prefix: str) -> st.SearchStrategy[str]:
    return st.one_of(
        st.integers(-5, 40).map(lambda n: f"{prefix}-{n}"),
        st.integers(0, 40).map(str),
        st.sampled_from(
            [f"{prefix}-" + "9" * 30, "9" * 25, f"{prefix}--1", "١٢", "²", "", " ", f"{prefix}-"]
        ),
        _TEXT,
    )


def _times() -> st.SearchStrategy[str]:
    return st.one_of(
        st.sampled_from(
            [
                "+00:05",
                "+01:00:00",
                "+99:99",
                "+" + "9" * 12 + ":00:00",
                "+999999999:00",
                "2026-09-01T15:30",
                "2026-09-01",
                "0001-01-01T00:00+05:00",
                "9999-12-31T23:59-05:00",
                "0001-01-01",
                "9999-12-31",
                "2026-13-01",
                "",
                "now",
            ]
        ),
        st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30)).map(
            lambda d: d.isoformat()
        ),
        _TEXT,
    )


@st.composite
def command_cases(draw: st.DrawFn) -> dict[str, Any]:
    command = draw(st.sampled_from(RUNNABLE + RUNNABLE + PARSE_ONLY))
    text = st.one_of(_TEXT, st.just("-"), st.just("  "), st.sampled_from(["what time is it?"]))
    argv: list[str] = [command]
    if command == "tasks":
        action = draw(st.sampled_from(["add", "list", "done", "nope"]))
        argv.append(action)
        if action == "add":
            argv.append(draw(text))
            if draw(st.booleans()):
                pending = st.sampled_from(["user", "assistant", "external", "none", "x"])
                argv += ["--pending", draw(pending)]
            if draw(st.booleans()):
                argv += ["--due", draw(_times())]
        elif action == "done":
            argv.append(draw(_ids("task")))
    elif command == "reminders":
        action = draw(st.sampled_from(["add", "list", "done"]))
        argv.append(action)
        if action == "add":
            argv += [draw(text), "--at", draw(_times())]
        elif action == "done":
            argv.append(draw(_ids("rem")))
    elif command == "notes":
        argv.append("list")  # `notes add` loads the embedding model: parsed only, below
    elif command == "devices":
        action = draw(st.sampled_from(["list", "revoke"]))
        argv.append(action)
        if action == "revoke":
            argv.append(draw(st.one_of(_ids("dev"), text)))
    elif command == "export":
        if draw(st.booleans()):
            argv.append(draw(_ids("sess")))
        if draw(st.booleans()):
            argv.append("--list")
        if draw(st.booleans()):
            limit = st.one_of(st.integers(-(10**20), 10**20).map(str), _TEXT)
            argv += ["--limit", draw(limit)]
    elif command == "route":
        argv.append(draw(text))
    elif command == "memory":
        argv += draw(
            st.sampled_from([["import", "missing.jsonl"], ["recall", "q"], ["import"], []])
        )
    else:
        argv += draw(st.lists(_TEXT, max_size=2))
    flags = st.sampled_from(["--json", "--all", "--help", "-h", "--", "-", "--nope", "-x"])
    for _ in range(draw(st.integers(0, 2))):
        argv.insert(draw(st.integers(1, len(argv))), draw(st.one_of(flags, _TEXT)))
    return {"argv": [_no_nul(a) for a in argv]}


def parse_only(argv: list[str]) -> list[tuple[str, str]]:
    """Pass `argv` through its command's parser, as `bot.cli` builds it; run nothing."""
    name, rest = argv[0], argv[1:]
    module = importlib.import_module(f"bot.commands.{name}")
    parser = argparse.ArgumentParser(prog=f"python -m bot {name}", description=module.HELP)
    module.add_arguments(parser)
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        try:
            parser.parse_args(rest)
        except SystemExit as exc:
            if exc.code not in (0, 2):
                return [(f"`bot {name}`'s parser exited {exc.code}", err.getvalue()[-200:])]
        except Exception as exc:
            return [(kind_of(exc), f"{type(exc).__name__}: {exc}"[:300])]
    return []


def run_in_process(argv: list[str]) -> list[tuple[str, str]]:
    """`bot.cli.main(argv)` in this process with no standard input; the problems, or []."""
    from bot.cli import main

    out, err = io.StringIO(), io.StringIO()
    stdin = sys.stdin
    sys.stdin = io.StringIO("")
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code: object = main(argv)
    except SystemExit as exc:
        code = exc.code
    except Exception as exc:
        return [(kind_of(exc), f"{type(exc).__name__}: {exc}"[:300])]
    finally:
        sys.stdin = stdin
    if code not in (0, 1, 2):
        return [(f"`bot {argv[0]}` returned {code!r}", err.getvalue()[-200:])]
    if code and not err.getvalue().strip():
        return [(f"`bot {argv[0]}` failed without a reason", f"exit {code}")]
    if "Traceback" in err.getvalue():
        kind = f"a traceback from `bot {argv[0]}`: {traceback_kind(err.getvalue())}"
        return [(kind, err.getvalue()[-300:])]
    return []


def commands_surface(cases: int, seed: int, home: Path) -> SurfaceReport:
    report = SurfaceReport()
    work = home / "commands"
    (work / "user").mkdir(parents=True, exist_ok=True)
    count = 0

    def check(case: dict[str, Any]) -> None:
        nonlocal count
        count += 1
        report.cases += 1
        argv = list(case["argv"])
        runnable = argv[0] in RUNNABLE and argv[:2] != ["notes", "add"]
        problems = run_in_process(argv) if runnable else parse_only(argv)
        if runnable and count % PROCESS_EVERY == 0:
            problems += cli_process(argv, work, {})
        for kind, detail in problems:
            report.fail(kind, f"{shown(case)} -> {detail}")

    # Its own home and a HOME inside it: a command that writes under ~ writes here.
    with environ({"ANNIE_HOME": str(work), "HOME": str(work / "user"), "HF_HUB_OFFLINE": "1"}):
        for case in fixed_cases("commands"):
            check(case)
        generate(command_cases(), cases, seed, check)
    return report


# --- surface "calendar" ---------------------------------------------------------------------

# Each question asked of one file (titles, a day around now, a window of its own, the next of
# a few titles, the check) must be answered within this, as the state path answers from it:
# memory.calendar's bound on one question (its parse of a changed file, cut to 0.5 MB, and 1 s
# of expansion), with room to spare. Counted in the asking thread's CPU time: beside other
# work on a 2-core machine the same question took over 2 s of wall time, and a slow machine
# must make this slower, not red. A question that waits (a lock held for ever) is caught by
# `CALENDAR_KILL_S`, in wall time.
CALENDAR_S = 2.0
# Past this the child is killed: a case that would run for minutes fails at once.
CALENDAR_KILL_S = 10.0
_T = TypeVar("_T")
ZONES = ["UTC", "Europe/London", "America/New_York", "Asia/Kolkata", "Nowhere/Fake", "", "+05:00"]


def _ics_time() -> st.SearchStrategy[str]:
    return st.one_of(
        st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31)).map(
            lambda d: d.strftime("%Y%m%dT%H%M%S") + ("Z" if d.microsecond % 2 else "")
        ),
        st.datetimes(min_value=datetime(2024, 1, 1), max_value=datetime(2028, 12, 31)).map(
            lambda d: d.strftime("%Y%m%dT%H%M%S")
        ),
        st.dates(min_value=date(1, 1, 1)).map(lambda d: d.strftime("%Y%m%d")),
        st.sampled_from(
            ["20261301T000000", "2026", "x", "", "00000000T000000", "99991231T235959Z"]
        ),
    )


def _rrule() -> st.SearchStrategy[str]:
    freq = st.sampled_from(
        ["SECONDLY", "MINUTELY", "HOURLY", "DAILY", "WEEKLY", "MONTHLY", "YEARLY", "NOPE"]
    )
    parts = st.lists(
        st.one_of(
            st.integers(0, 10**9).map(lambda n: f"COUNT={n}"),
            st.integers(-2, 10**6).map(lambda n: f"INTERVAL={n}"),
            _ics_time().map(lambda t: f"UNTIL={t}"),
            st.sampled_from(["BYDAY=MO,WE", "BYDAY=-1FR", "BYDAY=53MO", "BYDAY=XX"]),
            st.sampled_from(["BYMONTHDAY=31", "BYMONTHDAY=-1", "BYMONTHDAY=0,32"]),
            st.sampled_from(["BYMONTH=2", "BYMONTH=13", "BYYEARDAY=366", "BYWEEKNO=53"]),
            st.sampled_from(["BYSETPOS=-1", "BYHOUR=0,12,23", "BYMINUTE=0,30", "BYSECOND=0,59"]),
            st.sampled_from(["WKST=SU", "WKST=ZZ", "RSCALE=HEBREW", "SKIP=FORWARD", "X=1"]),
        ),
        max_size=4,
    )
    return st.tuples(freq, parts).map(lambda t: ";".join([f"FREQ={t[0]}", *t[1]]))


@st.composite
def _vevent(draw: st.DrawFn) -> list[str]:
    lines = ["BEGIN:VEVENT"]
    if draw(st.booleans()) or draw(st.booleans()):
        lines.append(f"UID:{draw(st.sampled_from(['a', 'b', 'c', 'rec-1', '']))}")
    if draw(st.booleans()) or draw(st.booleans()):
        lines.append(f"SUMMARY:{draw(st.sampled_from(['Dentist', 'Standup', 'Gym']))}")
    zone = draw(st.sampled_from([None, None, *ZONES]))
    param = f";TZID={zone}" if zone else ""
    start = draw(_ics_time())
    if draw(st.integers(0, 9)):
        value = ";VALUE=DATE" if len(start) == 8 and draw(st.booleans()) else ""
        lines.append(f"DTSTART{param}{value}:{start}")
    end = draw(st.sampled_from(["none", "dtend", "duration", "both"]))
    if end in ("dtend", "both"):
        lines.append(f"DTEND{param}:{draw(_ics_time())}")
    if end in ("duration", "both"):
        duration = st.sampled_from(["PT1H", "P1D", "-PT1H", "P99999999D", "PT0S", "P1W2D", "X"])
        lines.append(f"DURATION:{draw(duration)}")
    for _ in range(draw(st.integers(0, 2))):
        prop = draw(st.sampled_from(["RRULE", "RRULE", "RDATE", "EXDATE", "RECURRENCE-ID"]))
        lines.append(f"{prop}:{draw(_rrule()) if prop == 'RRULE' else draw(_ics_time())}")
    if not draw(st.integers(0, 7)):
        lines.append("STATUS:CANCELLED")
    if not draw(st.integers(0, 5)):
        lines.append(draw(st.text(max_size=60)))
    lines.append("END:VEVENT")
    return lines


@st.composite
def calendar_cases(draw: st.DrawFn) -> dict[str, Any]:
    lines = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//fuzz//EN"]
    if draw(st.booleans()):
        lines.append(f"X-WR-TIMEZONE:{draw(st.sampled_from(ZONES))}")
    if not draw(st.integers(0, 4)):
        lines += [
            "BEGIN:VTIMEZONE",
            f"TZID:{draw(st.sampled_from(ZONES))}",
            "BEGIN:STANDARD",
            f"DTSTART:{draw(_ics_time())}",
            f"TZOFFSETFROM:{draw(st.sampled_from(['+0100', '-0500', '+9999', 'x']))}",
            f"TZOFFSETTO:{draw(st.sampled_from(['+0000', '+0100', 'x']))}",
            "END:STANDARD",
            "END:VTIMEZONE",
        ]
    for _ in range(draw(st.integers(0, 4))):
        lines += draw(_vevent())
    lines.append("END:VCALENDAR")
    text = "\r\n".join(lines) + "\r\n"
    form = draw(st.sampled_from(["ics", "ics", "ics", "lf", "cut", "binary", "huge"]))
    data = text.encode("utf-8", "surrogatepass")
    repeat = 0
    if form == "lf":
        data = data.replace(b"\r\n", b"\n")
    elif form == "cut":
        data = data[: draw(st.integers(0, len(data)))]
    elif form == "binary":
        data = draw(st.binary(max_size=300))
    elif form == "huge":
        repeat = draw(st.integers(100, 3000))
    when = draw(st.datetimes(min_value=datetime(1900, 1, 1), max_value=datetime(2100, 1, 1)))
    return {"ics": data, "repeat": repeat, "at": when.isoformat(), "days": draw(st.integers(1, 60))}


def _ics_bytes(case: dict[str, Any]) -> bytes:
    data = bytes(case["ics"])
    if not case.get("repeat"):
        return data
    # Many single events in one file: the whole text's events again and again, each with a
    # UID of its own (a series' instances would share one).
    body_at = data.find(b"BEGIN:VEVENT")
    end_at = data.rfind(b"END:VCALENDAR")
    if body_at < 0 or end_at < 0:
        return data
    events = data[body_at:end_at]
    copies = [events.replace(b"UID:", b"UID:%d-" % i) for i in range(int(case["repeat"]))]
    return data[:body_at] + b"".join(copies) + data[end_at:]


def calendar_case(case: dict[str, Any]) -> list[tuple[str, str]]:
    """Read one generated file the way the state path does (in the worker process)."""
    from memory.calendar import Calendar, CalendarError

    folder = Path(os.environ["FUZZ_CALENDAR_DIR"])
    path = folder / "case.ics"
    path.write_bytes(_ics_bytes(case))
    calendar = Calendar([path])
    now = datetime.now().astimezone()
    at = datetime.fromisoformat(str(case["at"])).astimezone()
    took: list[tuple[str, float]] = []

    def timed(name: str, ask: Callable[[], _T]) -> _T:
        t0 = time.thread_time()
        try:
            return ask()
        finally:
            took.append((name, time.thread_time() - t0))

    try:
        titles = timed("titles", calendar.titles)
        timed("a day", lambda: calendar.between(now - timedelta(days=1), now + timedelta(days=1)))
        timed("a window", lambda: calendar.between(at, at + timedelta(days=int(case["days"]))))
        timed("next_of", lambda: calendar.next_of(titles[:3], now))
        timed("check", calendar.check)
    except CalendarError as exc:
        if not str(exc).strip():
            return [("a CalendarError without a reason", repr(exc))]
    except Exception as exc:
        return [(kind_of(exc), f"{type(exc).__name__}: {exc}"[:300])]
    slow = [f"{name} {seconds:.1f} s of CPU" for name, seconds in took if seconds > CALENDAR_S]
    if slow:
        return [(f"a calendar question took over {CALENDAR_S:g} s", ", ".join(slow))]
    return []


def calendar_surface(cases: int, seed: int, home: Path) -> SurfaceReport:
    report = SurfaceReport()
    folder = home / "calendar"
    folder.mkdir(parents=True, exist_ok=True)
    env = {"FUZZ_CALENDAR_DIR": str(folder)}
    with Worker("testkit.fuzz_inputs:calendar_case", env=env) as worker:
        # The child's imports and the library's first parse are not the file's time.
        worker.warm({"ics": b"", "repeat": 0, "at": "2026-01-01T00:00:00", "days": 1})

        def check(case: dict[str, Any]) -> None:
            report.cases += 1
            problems = worker.run(case, CALENDAR_KILL_S)
            if problems is None:
                problems = [(f"reading a calendar ran past {CALENDAR_KILL_S:g} s", "killed")]
                worker.warm({"ics": b"", "repeat": 0, "at": "2026-01-01T00:00:00", "days": 1})
            for kind, detail in problems:
                report.fail(kind, f"{shown(case)} -> {detail}")

        for case in fixed_cases("calendar"):
            check(case)
        generate(calendar_cases(), cases, seed, check)
    return report


# --- surface "transcripts" -------------------------------------------------------------------


def _lines() -> st.SearchStrategy[str]:
    turn = st.fixed_dictionaries(
        {},
        optional={
            "session": st.one_of(_TEXT, st.integers()),
            "at": st.one_of(
                st.datetimes().map(lambda d: d.isoformat()),
                st.sampled_from(["2026-01-01T00:00:00Z", "0001-01-01T00:00+05:00", "x"]),
                st.integers(),
            ),
            "speaker": st.one_of(st.sampled_from(["user", "annie", "Bob", ""]), st.integers()),
            "text": st.one_of(_TEXT, st.none()),
        },
    )
    record = st.fixed_dictionaries(
        {
            "type": st.sampled_from(
                ["session", "user", "assistant", "tool_result", "disconnect", "x"]
            )
        },
        optional={
            "window": st.one_of(st.integers(-5, 10**9), st.floats(), st.booleans(), _TEXT),
            "text": st.one_of(_TEXT, st.integers(), st.none()),
            "content": st.one_of(_TEXT, st.lists(st.integers(), max_size=2)),
            "id": st.one_of(_TEXT, st.integers()),
            "name": st.one_of(_TEXT, st.none()),
            "tool_calls": st.one_of(
                st.lists(
                    st.fixed_dictionaries(
                        {},
                        optional={
                            "name": st.one_of(_TEXT, st.integers()),
                            "arguments": st.one_of(
                                st.dictionaries(_TEXT, st.integers(), max_size=2), _TEXT
                            ),
                        },
                    ),
                    max_size=2,
                ),
                _TEXT,
                st.none(),
            ),
        },
    )
    return st.one_of(
        turn.map(json.dumps),
        record.map(json.dumps),
        _TEXT,
        st.just(""),
        DEPTHS.map(lambda n: "[" * n),
    )


@st.composite
def transcript_cases(draw: st.DrawFn) -> dict[str, Any]:
    form = draw(st.sampled_from(["lines", "lines", "locomo", "binary"]))
    if form == "lines":
        data = "\n".join(draw(st.lists(_lines(), max_size=6))).encode("utf-8", "surrogatepass")
    elif form == "locomo":
        sessions: dict[str, Any] = {}
        for n in draw(st.lists(st.integers(-1, 12), max_size=3)):
            sessions[f"session_{n}"] = draw(
                st.one_of(
                    st.lists(
                        st.fixed_dictionaries(
                            {},
                            optional={
                                "speaker": st.one_of(_TEXT, st.integers()),
                                "text": st.one_of(_TEXT, st.none()),
                                "dia_id": _TEXT,
                                "blip_caption": st.one_of(_TEXT, st.integers()),
                            },
                        ),
                        max_size=3,
                    ),
                    _TEXT,
                )
            )
            sessions[f"session_{n}_date_time"] = draw(
                st.one_of(
                    st.sampled_from(
                        [
                            "1:56 pm on 8 May, 2023",
                            "13:99 am on 40 Foo, 0000",
                            "0:00 am on 1 Jan, 1",
                        ]
                    ),
                    _TEXT,
                    st.integers(),
                )
            )
        data = json.dumps(sessions).encode()
    else:
        data = draw(st.binary(max_size=300))
    return {"file": data, "reader": draw(st.sampled_from(["transcript", "trace"]))}


def transcripts_check(case: dict[str, Any], folder: Path) -> list[tuple[str, str]]:
    from bot.turn.replay import TraceError, read_trace
    from memory.transcripts import TranscriptError, read

    path = folder / "case.jsonl"
    path.write_bytes(bytes(case["file"]))
    clear: type[Exception] = TranscriptError if case["reader"] == "transcript" else TraceError
    t0 = time.monotonic()
    try:
        if case["reader"] == "transcript":
            read(path)
        else:
            read_trace(path)
    except clear as exc:
        if not str(exc).strip():
            return [(f"a {clear.__name__} without a reason", repr(exc))]
    except Exception as exc:
        return [(kind_of(exc), f"{type(exc).__name__}: {exc}"[:300])]
    took = time.monotonic() - t0
    if took > 2.0:
        return [("reading a transcript took over 2 s", f"{took:.1f} s")]
    return []


def transcripts_surface(cases: int, seed: int, home: Path) -> SurfaceReport:
    report = SurfaceReport()
    folder = home / "transcripts"
    folder.mkdir(parents=True, exist_ok=True)

    def check(case: dict[str, Any]) -> None:
        report.cases += 1
        for kind, detail in transcripts_check(case, folder):
            report.fail(kind, f"{shown(case)} -> {detail}")

    for case in fixed_cases("transcripts"):
        check(case)
    generate(transcript_cases(), cases, seed, check)
    return report


SURFACES = {
    "config": config_surface,
    "commands": commands_surface,
    "calendar": calendar_surface,
    "transcripts": transcripts_surface,
}

__all__ = ["ROOT", "SURFACES"]
