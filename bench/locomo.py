"""`python -m bot bench locomo ZIP`: the live turn's recall over LoCoMo's long conversations.

LoCoMo (snap-research/locomo, `locomo10.zip`; the project never ships it) holds ten
conversations between two people over weeks of sessions, each with questions whose evidence
names the turns (`dia_id`) that answer them. Each conversation chosen is imported into a fresh
store in a temporary ANNIE_HOME the way a conversation is imported for real
(`store.episodes.import_turns`, embedded on the way in), and every question goes through the
live turn's recall (`context.recall.recall`) and evidence lane admission, as of noon on the day
after the conversation's last session with turns.

An item in the lane answers a question when it is an episode whose turn is in the question's
evidence, or a summary or note whose provenance (`source_event`) names the event of one.
Figures, by category: an answering item in the lane (`lane any`), every evidence turn covered
by the lane (`lane all`, what a multi-hop question needs), an answering item in the top 10 (a
second recall of ten), and the lane sure of itself (`context.certainty`) with no answering
item (`sure w/o ev`): the model is handed the wrong turns as the answer. For adversarial
questions, which ask about something said of the other person, a sure lane is false
certainty, counted apart. Beside them, in the same run: plain MiniLM cosine over all turns
(`store.notes.search_semantic`, the same embeddings), top 3 and top 10. Also the lane's tokens
(`context.ledger`: the model's own tokenizer, or tiktoken's estimate when no model file is
found, which the report says) and recall latency. `--answers` also asks the model for an
answer from the lane and scores it by token F1 against the gold answer (hours on CPU).

Categories by number: 1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial.
The numbering is disputed upstream (the paper lists single-hop first; the released data's
numbers are read this way by most evaluations, not all), so both number and name are shown.
A question whose evidence names no turn (a few in category 3) is counted but not scored.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import string
import tempfile
import time
import zipfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from config import Settings, load_settings
from context.admission import admit_turn
from context.conversation import Conversation, Prefix
from context.inputs import Evidence, Request
from context.ledger import Ledger
from context.recall import recall
from memory.episodes import Said
from memory.search import EmbedderLike
from memory.store import Store
from memory.transcripts import Transcript, TranscriptError, locomo
from models.base import LLM, Tokenizer

HELP = "recall over LoCoMo conversations: evidence in the lane by category, beside plain cosine"
INNER = "data/multimodal_dialog/locomo10_v2/"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
ANSWERABLE = (1, 2, 3, 4)
ADVERSARIAL = 5
TOP = 10
BASELINE_LANE = 3
ASK_AT = 12  # o'clock, local time, on the day after the last session
_DIA_ID = re.compile(r"^D:?(\d+):(\d+)$")
ANSWER_PROMPT = (
    "You are Annie. Answer the question from the notes retrieved from memory, in as few "
    "words as you can. If the notes do not say, answer: not mentioned."
)
ANSWER_TOKENS = 64
ABSTAINED = ("not mentioned", "don't know", "do not know")


class LocomoError(ValueError):
    """A zip that is not LoCoMo's, or a conversation it does not hold."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", type=Path, metavar="PATH", help="snap-research/locomo's zip")
    parser.add_argument(
        "--conversations",
        default="",
        metavar="N,N",
        help="conversations to run, by file name without .json (default: all in the zip)",
    )
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    parser.add_argument(
        "--answers",
        action="store_true",
        help="also have the model answer from the lane and score token F1 (hours on CPU)",
    )
    parser.add_argument(
        "--pad",
        type=int,
        default=0,
        metavar="N",
        help="first fill each store with N more episodes (the other conversations' turns, again"
        " and again, in the year before): recall at the size of a year of daily talk",
    )


# --- reading the zip -------------------------------------------------------------------------


def read_zip(path: Path, chosen: Sequence[str] = ()) -> list[tuple[str, dict[str, Any]]]:
    """The conversations in LoCoMo's zip (`chosen` names, or all), in order: (name, data)."""
    if not path.is_file():
        raise LocomoError(f"{path}: no such file")
    try:
        with zipfile.ZipFile(path) as z:
            members = {
                n[len(INNER) : -len(".json")]: n
                for n in z.namelist()
                if n.startswith(INNER) and n.endswith(".json") and "/" not in n[len(INNER) :]
            }
            if not members:
                raise LocomoError(
                    f"{path}: no {INNER}N.json inside (expected snap-research/locomo's "
                    "locomo10.zip)"
                )
            names = list(chosen) or sorted(members, key=lambda n: (not n.isdigit(), n.zfill(9)))
            unknown = [n for n in names if n not in members]
            if unknown:
                raise LocomoError(
                    f"{path}: no conversation {', '.join(unknown)} (it holds "
                    f"{', '.join(sorted(members))})"
                )
            out = []
            for name in names:
                data = json.loads(z.read(members[name]))
                if not isinstance(data, dict) or not isinstance(data.get("qa"), list):
                    raise LocomoError(f"{path}: {members[name]} has no qa list")
                out.append((name, data))
            return out
    except zipfile.BadZipFile as exc:
        raise LocomoError(f"{path}: not a zip file ({exc})") from exc
    except json.JSONDecodeError as exc:
        raise LocomoError(f"{path}: a conversation is not JSON ({exc.msg})") from exc


def evidence_ids(raw: object) -> set[str]:
    """A question's evidence as dia_ids; LoCoMo writes a few as "D8:6; D9:17" or "D:11:26"."""
    out: set[str] = set()
    for entry in raw if isinstance(raw, list) else []:
        for part in re.split(r"[;,\s]+", str(entry)):
            m = _DIA_ID.match(part.strip())
            if m is not None:
                out.add(f"D{m.group(1)}:{m.group(2)}")
    return out


def ask_time(transcript: Transcript) -> datetime:
    """Noon, local time, on the day after the conversation's last turn."""
    day = max(t.at for t in transcript.turns).date() + timedelta(days=1)
    return datetime(day.year, day.month, day.day, ASK_AT).astimezone()


# --- asking ----------------------------------------------------------------------------------


@dataclass
class Scored:
    """One question's outcome."""

    category: int
    scored: bool  # its evidence names a turn
    lane_any: bool
    lane_all: bool
    top_any: bool
    certain: bool
    base_any: bool
    base_all: bool
    base_top_any: bool
    tokens: int
    ms: float
    f1: float | None = None
    abstained: bool = False


@dataclass(frozen=True)
class Engines:
    """What the bench runs on: the settings and the loaded models (`llm` for `--answers`)."""

    settings: Settings
    embedder: EmbedderLike
    tokenizer: Tokenizer
    llm: LLM | None = None


def load_engines(answers: bool = False) -> Engines:
    from models import load_embedder, load_llm, load_tokenizer

    settings = load_settings()
    return Engines(
        settings,
        load_embedder(settings),
        load_tokenizer(settings),
        load_llm(settings, n_ctx=4096) if answers else None,
    )


def _turns_of(store: Store, ids: Sequence[str], by_event: dict[str, str]) -> dict[str, set[str]]:
    """The dia_ids each recalled row stands for: an episode its own turn; a summary or note
    the turns of the events its provenance names (none are written by an import)."""
    out: dict[str, set[str]] = {}
    for row_id, info in store.episodes.info(ids).items():
        events = re.split(r"[,\s]+", info.event_id.strip()) if info.event_id else []
        out[row_id] = {by_event[e] for e in events if e in by_event}
    return out


def _covered(rows: Sequence[str], turns: dict[str, set[str]], wanted: set[str]) -> set[str]:
    """The evidence turns that `rows` stand for."""
    return {ref for r in rows for ref in turns.get(r, set())} & wanted


class _Repeated:
    """The embedder for padding: each distinct text embedded once, then reused (the same
    turns come back many times), so a store of 100,000 episodes fills in a minute."""

    def __init__(self, embedder: EmbedderLike) -> None:
        self.embedder = embedder
        self.dim = embedder.dim
        self.known: dict[str, npt.NDArray[np.float32]] = {}

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        new = [t for t in dict.fromkeys(texts) if t not in self.known]
        if new:
            self.known.update(zip(new, self.embedder.embed(new), strict=True))
        return np.vstack([self.known[t] for t in texts])


def _pad(store: Store, turns: Sequence[Said], n: int, before: datetime, repeated: _Repeated) -> int:
    """Fill `store` with `n` episodes cycling through `turns`, as sessions of 40 turns spread
    over the year before `before`; how many were written."""
    if n <= 0 or not turns:
        return 0
    step = timedelta(days=365) / max(1, n)
    padded = [
        Said(f"pad {i // 40}", before - timedelta(days=366) + i * step, t.speaker, t.text)
        for i, t in ((i, turns[i % len(turns)]) for i in range(n))
    ]
    done = store.episodes.import_turns(padded, "padding", repeated)
    return int(done["episodes"])


def _conversation(
    name: str,
    data: dict[str, Any],
    engines: Engines,
    home: Path,
    pad: tuple[int, Sequence[Said], _Repeated | None] = (0, (), None),
) -> tuple[list[Scored], dict[str, Any]]:
    """Import one conversation into a store at `home`, ask its questions, score them."""
    t0 = time.perf_counter()
    transcript = locomo(data, name)
    settings = engines.settings.model_copy(deep=True)
    settings.home = str(home)
    top = settings.model_copy(deep=True)
    top.context.evidence_hits = TOP
    embedder = engines.embedder
    store = Store.open(settings, embedder=embedder)
    try:
        imported = store.episodes.import_turns(transcript.turns, f"locomo {name}", embedder)
        ids: list[str] = imported["ids"]
        size, filler, repeated = pad
        padded = _pad(store, filler, size, transcript.turns[0].at, repeated) if repeated else 0
        info = store.episodes.info(ids)
        by_event = {info[i].event_id: ref for i, ref in zip(ids, transcript.refs, strict=True)}
        t_imported = time.perf_counter()
        now = ask_time(transcript)
        ledger = Ledger(engines.tokenizer, window=settings.context.window)
        store.notes.search("warm up the in-memory vectors", vector=embedder.embed(["warm up"])[0])
        out: list[Scored] = []
        for i, qa in enumerate(data["qa"]):
            question = str(qa.get("question", "")).strip()
            if not question:
                continue
            wanted = evidence_ids(qa.get("evidence"))
            t = time.perf_counter()
            evidence = recall(store, question, settings, lambda: embedder, now=now)
            ms = (time.perf_counter() - t) * 1000.0
            conv = Conversation(f"locomo-{name}-{i}", Prefix(ANSWER_PROMPT))
            admitted = admit_turn(
                conv,
                Request(question, f"t{i}", f"q{i}"),
                None,
                evidence,
                ledger=ledger,
                ctx=settings.context,
            )
            items = [item for item in admitted.items if item.lane == "evidence"]
            shown = [i for item in items for i in item.source_ids]
            wider: list[Evidence] = recall(store, question, top, lambda: embedder, now=now)
            plain = [
                h.id for h in store.notes.search_semantic(embedder.embed([question])[0], limit=TOP)
            ]
            # A turn recalled comes with the reply to it: every turn an item shows counts.
            ten = [i for e in wider for i in (e.shows or (e.id,))]
            turns = _turns_of(store, [*shown, *ten, *plain], by_event)

            in_lane = _covered(shown, turns, wanted)
            in_base = _covered(plain[:BASELINE_LANE], turns, wanted)
            scored = Scored(
                category=int(qa.get("category", 0)),
                scored=bool(wanted),
                lane_any=bool(in_lane),
                lane_all=bool(wanted) and in_lane == wanted,
                top_any=bool(_covered(ten, turns, wanted)),
                certain=bool(items) and all(item.meta.get("certain", True) for item in items),
                base_any=bool(in_base),
                base_all=bool(wanted) and in_base == wanted,
                base_top_any=bool(_covered(plain, turns, wanted)),
                tokens=sum(ledger.item_tokens(item) for item in items),
                ms=ms,
            )
            if engines.llm is not None:
                _answer(engines.llm, conv, qa, scored)
            out.append(scored)
    finally:
        store.close()
    t_asked = time.perf_counter()
    return out, {
        "turns": len(transcript.turns),
        "padded": padded,
        "sessions": imported["sessions"],
        "questions": len(out),
        "asked_at": now.isoformat(timespec="minutes"),
        "import_s": round(t_imported - t0, 1),
        "ask_s": round(t_asked - t_imported, 1),
        "lane_any": _rate(
            [s.lane_any for s in out if s.scored and s.category in ANSWERABLE],
        ),
    }


# --- answering (--answers) -------------------------------------------------------------------


def normalized_tokens(text: str) -> list[str]:
    """LoCoMo's answer normalization: lower case, no punctuation, articles or "and"."""
    text = text.lower().translate(str.maketrans("", "", string.punctuation))
    return [w for w in text.split() if w not in ("a", "an", "the", "and")]


def token_f1(answer: str, gold: str) -> float:
    """Token F1 of `answer` against `gold`, both normalized."""
    got, want = normalized_tokens(answer), normalized_tokens(gold)
    same = sum((Counter(got) & Counter(want)).values())
    if not got or not want or not same:
        return 0.0
    precision, recall_ = same / len(got), same / len(want)
    return 2 * precision * recall_ / (precision + recall_)


async def _collect(llm: LLM, prompt: str) -> str:
    return "".join([p async for p in llm.stream(prompt, max_tokens=ANSWER_TOKENS)])


def _answer(llm: LLM, conv: Conversation, qa: dict[str, Any], scored: Scored) -> None:
    """The model's answer from the conversation as admitted (the lane, then the question)."""
    raw = asyncio.run(_collect(llm, llm.render(conv.messages())))
    answer = llm.parse(raw).text.strip() or raw.strip()
    scored.abstained = any(a in answer.lower() for a in ABSTAINED)
    if "answer" in qa:
        scored.f1 = token_f1(answer, str(qa["answer"]))


# --- figures ---------------------------------------------------------------------------------


def _rate(flags: Sequence[bool]) -> float:
    return round(sum(flags) / len(flags), 4) if flags else 0.0


def _pct(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


def _group(rows: Sequence[Scored], answers: bool) -> dict[str, Any]:
    """The figures of a set of questions (see the module doc)."""
    s = [r for r in rows if r.scored]
    out: dict[str, Any] = {
        "questions": len(rows),
        "unscored": len(rows) - len(s),
        "lane_any": _rate([r.lane_any for r in s]),
        "lane_all": _rate([r.lane_all for r in s]),
        "top10_any": _rate([r.top_any for r in s]),
        "sure": _rate([r.certain for r in rows]),
        "sure_without_evidence": _rate([r.certain and not r.lane_any for r in s]),
        "baseline_top3_any": _rate([r.base_any for r in s]),
        "baseline_top3_all": _rate([r.base_all for r in s]),
        "baseline_top10_any": _rate([r.base_top_any for r in s]),
    }
    if answers:
        f1 = [r.f1 for r in rows if r.f1 is not None]
        out["answer_f1"] = round(statistics.fmean(f1), 4) if f1 else 0.0
        out["abstained"] = _rate([r.abstained for r in rows])
    return out


def measure(
    conversations: Sequence[tuple[str, dict[str, Any]]],
    engines: Engines,
    pad: int = 0,
    others: Sequence[tuple[str, dict[str, Any]]] = (),
) -> dict[str, Any]:
    """Import and ask each conversation (each in its own store) and return the figures;
    `pad`: fill each store first with that many episodes from `others` (conversations not
    measured)."""
    start = time.perf_counter()
    rows: list[Scored] = []
    per: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="annie-locomo-") as folder:
        for name, data in conversations:
            home = Path(folder) / name
            home.mkdir()
            filler = [t for other, d in others if other != name for t in locomo(d, other).turns]
            padding = (pad, filler, _Repeated(engines.embedder) if pad else None)
            scored, figures = _conversation(name, data, engines, home, padding)
            rows += scored
            per[name] = figures
    answers = engines.llm is not None
    categories: dict[str, Any] = {}
    for number, label in CATEGORIES.items():
        group = _group([r for r in rows if r.category == number], answers)
        if number == ADVERSARIAL:
            group["false_certainty"] = group["sure"]
        categories[str(number)] = {"name": label, **group}
    tokens = [float(r.tokens) for r in rows]
    latency = [r.ms for r in rows]
    return {
        "conversations": list(per),
        "per_conversation": per,
        "categories": categories,
        "answerable": _group([r for r in rows if r.category in ANSWERABLE], answers),
        "lane": engines.settings.context.evidence_hits,
        "top": TOP,
        "floor": engines.settings.context.evidence_min_similarity,
        "lane_tokens_mean": round(statistics.fmean(tokens), 1) if tokens else 0.0,
        "lane_tokens_p95": _pct(tokens, 0.95),
        "tokenizer": engines.tokenizer.name,
        "tokens_exact": engines.tokenizer.exact,
        "recall_ms_p50": round(_pct(latency, 0.50), 1),
        "recall_ms_p95": round(_pct(latency, 0.95), 1),
        "answers": answers,
        "padded": pad,
        "import_s": round(sum(p["import_s"] for p in per.values()), 1),
        "ask_s": round(sum(p["ask_s"] for p in per.values()), 1),
        "total_s": round(time.perf_counter() - start, 1),
    }


def _print(f: dict[str, Any]) -> None:
    turns = sum(p["turns"] for p in f["per_conversation"].values())
    questions = sum(p["questions"] for p in f["per_conversation"].values())
    print(
        f"LoCoMo recall over conversations {', '.join(f['conversations'])}: {turns:,} turns, "
        f"{questions:,} questions (lane of {f['lane']}, top {f['top']}, floor {f['floor']}; "
        f"asked at noon the day after each conversation's last session)"
    )
    if f["padded"]:
        print(f"  each store first filled with {f['padded']:,} episodes of the other conversations")
    head = (
        f"  {'category':<16}{'asked':>6}{'lane any':>10}{'lane all':>10}{'top10 any':>11}"
        f"{'sure w/o ev':>13}  | cosine{'top3 any':>10}{'top3 all':>10}{'top10 any':>11}"
    )
    if f["answers"]:
        head += f"{'F1':>7}"
    print(head)
    rows = [(f"{n} {c['name']}", c) for n, c in f["categories"].items() if n != "5"]
    rows.append(("answerable 1-4", f["answerable"]))
    for label, c in rows:
        if not c["questions"]:
            print(f"  {label:<16}{0:>6}  (none asked)")
            continue
        line = (
            f"  {label:<16}{c['questions']:>6}{c['lane_any']:>10.1%}{c['lane_all']:>10.1%}"
            f"{c['top10_any']:>11.1%}{c['sure_without_evidence']:>13.1%}  |       "
            f"{c['baseline_top3_any']:>10.1%}{c['baseline_top3_all']:>10.1%}"
            f"{c['baseline_top10_any']:>11.1%}"
        )
        if f["answers"]:
            line += f"{c['answer_f1']:>7.2f}"
        print(line)
    unscored = sum(c["unscored"] for c in f["categories"].values())
    if unscored:
        print(f"  ({unscored} questions whose evidence names no turn are counted, not scored)")
    a = f["categories"]["5"]
    abstained = f", the model abstained {a['abstained']:.1%}" if f["answers"] else ""
    print(
        f"  5 adversarial: {a['questions']} questions, lane sure (false certainty) "
        f"{a['false_certainty']:.1%}; the lane held the turn it twists {a['lane_any']:.1%}"
        f"{abstained}"
    )
    counted = "exact" if f["tokens_exact"] else "tiktoken estimate, no model tokenizer found"
    print(
        f"  lane tokens mean {f['lane_tokens_mean']:.0f}, p95 {f['lane_tokens_p95']:.0f} "
        f"({f['tokenizer']}, {counted});  recall p50 {f['recall_ms_p50']:.1f} ms, "
        f"p95 {f['recall_ms_p95']:.1f} ms"
    )
    for name, p in f["per_conversation"].items():
        print(
            f"  conversation {name}: {p['turns']} turns in {p['sessions']} sessions, "
            f"{p['questions']} questions asked {p['asked_at']}, lane any (1-4) "
            f"{p['lane_any']:.1%}; import {p['import_s']:.1f} s, asking {p['ask_s']:.1f} s"
        )
    print(
        f"  run time {f['total_s']:.1f} s (import {f['import_s']:.1f} s, asking {f['ask_s']:.1f} s)"
    )


def run(args: argparse.Namespace) -> int:
    chosen = [c.strip() for c in args.conversations.split(",") if c.strip()]
    try:
        conversations = read_zip(args.path, chosen)
        for name, data in conversations:
            locomo(data, name)  # a malformed conversation fails before any model loads
    except (LocomoError, TranscriptError) as exc:
        print(f"error: {exc}")
        return 2
    if args.pad < 0:
        print("error: --pad takes a number of episodes, 0 or more")
        return 2
    others = read_zip(args.path) if args.pad else []
    figures = measure(conversations, load_engines(args.answers), args.pad, others)
    if args.json:
        print(json.dumps(figures))
    else:
        _print(figures)
    return 0
