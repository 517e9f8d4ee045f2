"""`python -m bot memory import|recall`: import conversations, see what a question recalls.

`import FILE` reads a conversation (JSON Lines, or LoCoMo's per-conversation JSON; see
`memory.transcripts`) and writes it as sessions and episodes (`store.episodes.import_turns`),
embedded as they are written. A malformed or missing file is an error naming where, exit code
2, and nothing is written: the whole file is read before the store is opened.

`recall "QUESTION" [--json] [--now ISO]` lists what the live turn's own recall
(`context.recall.recall`) puts forward for the evidence lane, notes and episodes alike, in the
order the lane admits them (best score first), with whether recall was sure they say what was
asked (`context.certainty`); a session's admission then skips any its briefing already shows.
With `--json` a question prints one JSON array of `{kind, id, session, at, speaker, text,
score, certain}` (`at`: local ISO date-time; `session` and `speaker` are "" for a note). `recall
-` reads one question per line of standard input and prints one line per question, in order;
a blank line is a question that recalls nothing.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from bot.commands.records import with_store
from config import Settings, load_settings
from context.inputs import Evidence
from context.recall import recall
from memory.episodes import AlreadyImported
from memory.rows import from_iso, parse_when
from memory.search import EmbedderLike
from memory.store import Store
from memory.transcripts import TranscriptError, read

HELP = "import conversations as episodes, and see what a question would recall from memory"

FORMS = {"jsonl": "JSON Lines", "locomo": "LoCoMo"}
HEDGE = "(only related: recall is not sure any of these says what was asked)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    imp = sub.add_parser(
        "import",
        help="import a conversation file as sessions and episodes",
        description="import a conversation: JSON Lines ({session, at, speaker, text} a line)"
        " or LoCoMo's per-conversation JSON",
    )
    imp.add_argument("file", type=Path, help="the conversation file")
    rec = sub.add_parser(
        "recall",
        help="the notes and episodes a question would bring into the evidence lane",
        description="list what recall puts forward for a question, in order (- for stdin)",
    )
    rec.add_argument(
        "question", help="the question, as the user would say it, or - for one per stdin line"
    )
    rec.add_argument(
        "--json",
        action="store_true",
        help="one JSON array per question: {kind, id, session, at, speaker, text, score, certain}",
    )
    rec.add_argument(
        "--now", default=None, help="ask as of this ISO date-time (default: now, local time)"
    )


def run(args: argparse.Namespace) -> int:
    settings = load_settings()
    if args.action == "import":
        return _import(settings, args.file)
    try:
        now = _now(args.now)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    asked: str = args.question.strip()
    if not asked:
        print("error: recall needs a question", file=sys.stderr)
        return 2
    many = asked == "-"
    questions = [line.strip() for line in sys.stdin] if many else [asked]

    def act(store: Store) -> int:
        model = _loader(store, settings)
        for question in questions:
            evidence = recall(store, question, settings, model, now=now) if question else []
            found = [_item(e) for e in sorted(evidence, key=lambda e: -e.score)]
            if args.json:
                print(json.dumps(found, ensure_ascii=False), flush=True)
            elif many:
                print(_summary(question, found), flush=True)
            else:
                print(_listing(found))
        return 0

    return with_store(settings, act)


def _import(settings: Settings, path: Path) -> int:
    try:
        transcript = read(path)
    except TranscriptError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

    def act(store: Store) -> int:
        from models import load_embedder

        try:
            done = store.episodes.import_turns(
                transcript.turns, source=path.name, embedder=load_embedder(settings)
            )
        except AlreadyImported as exc:
            print(str(exc))
            return 0
        print(
            f"imported {done['sessions']} session{'s' * (done['sessions'] != 1)} and"
            f" {done['episodes']} episode{'s' * (done['episodes'] != 1)} from {path.name}"
            f" ({FORMS.get(transcript.form, transcript.form)})"
        )
        return 0

    return with_store(settings, act)


def _now(value: str | None) -> datetime | None:
    """`--now` as an aware local time; ValueError naming the flag if it does not read."""
    if value is None:
        return None
    try:
        stamp = parse_when(value)
    except ValueError:
        raise ValueError(f"--now '{value}' is not an ISO date or date-time") from None
    return from_iso(stamp).astimezone() if stamp else None


def _loader(store: Store, settings: Settings) -> Callable[[], EmbedderLike | None]:
    """The embedding model, loaded at the first question that needs it (recall asks for it
    only when something is stored), then kept for the questions after it."""

    def model() -> EmbedderLike | None:
        if store.notes.embedder is None:
            from models import load_embedder

            store.notes.embedder = load_embedder(settings)
        return store.notes.embedder

    return model


def _item(e: Evidence) -> dict[str, Any]:
    return {
        "kind": e.kind,
        "id": e.id,
        "session": e.session_id,
        "at": datetime.fromtimestamp(e.observed_at).astimezone().isoformat(timespec="seconds"),
        "speaker": e.speaker,
        "text": e.text,
        "score": round(e.score, 4),
        "certain": e.certain,
    }


def _line(f: dict[str, Any]) -> str:
    at = datetime.fromisoformat(f["at"])
    return (
        f"{f['kind']:<7}  {f['id']}  {f['score']:.2f}  {at:%Y-%m-%d %H:%M}"
        f"  {f['speaker'] or '-'}  {' / '.join(str(f['text']).splitlines())}"
    )


def _listing(found: list[dict[str, Any]]) -> str:
    """One line per item, best first, and the hedge when recall was not sure of them."""
    if not found:
        return "nothing would be recalled for that question"
    lines = [_line(f) for f in found]
    if not found[0]["certain"]:
        lines.append(HEDGE)
    return "\n".join(lines)


def _summary(question: str, found: list[dict[str, Any]]) -> str:
    """One line for a question read from stdin: the question, then each item's kind and id."""
    if not found:
        return f"{question}\t-> nothing"
    items = ", ".join(f"{f['kind']} {f['id']} ({f['score']:.2f})" for f in found)
    return f"{question}\t-> {items}{'' if found[0]['certain'] else '  (only related)'}"
