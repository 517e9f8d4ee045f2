"""`python -m bot memory import|recall` as a user runs them, on a real store in ANNIE_HOME, with
the real embedding model."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from bot.cli import main
from context.recall import IN_WINDOW_BONUS
from memory.store import Store
from testkit.cli import bot

# Two conversations of the user's with Annie, as JSON Lines; times without a zone are local.
TALK = [
    {
        "session": "kitchen",
        "at": "2026-03-02T09:00",
        "speaker": "user",
        "text": "My sister Priya is flying in from Toronto on the 14th.",
    },
    {
        "session": "kitchen",
        "at": "2026-03-02T09:00:20",
        "speaker": "annie",
        "text": "Noted, Priya arrives from Toronto on the 14th.",
    },
    {
        "session": "kitchen",
        "at": "2026-03-02T09:01",
        "speaker": "user",
        "text": "The car needs its MOT before the end of April.",
    },
    {
        "session": "garden",
        "at": "2026-03-05T18:00",
        "speaker": "user",
        "text": "I planted the tomato seedlings in the greenhouse today.",
    },
    {
        "session": "garden",
        "at": "2026-03-05T18:00:30",
        "speaker": "annie",
        "text": "Lovely, remember to water them every other day.",
    },
]

# A tiny conversation between two other people, in LoCoMo's per-conversation form.
LOCOMO = {
    "speaker_a": "Caroline",
    "speaker_b": "Melanie",
    "session_1_date_time": "1:56 pm on 8 May, 2023",
    "session_1": [
        {
            "speaker": "Caroline",
            "dia_id": "D1:1",
            "text": "Hey Mel! Last weekend I adopted a rescue greyhound called Biscuit.",
        },
        {
            "speaker": "Melanie",
            "dia_id": "D1:2",
            "text": "That's wonderful! I've been busy painting a sunset over the lake.",
        },
        {
            "speaker": "Caroline",
            "dia_id": "D1:3",
            "text": "I'd love to see it. Are you still doing pottery classes?",
        },
    ],
    "session_2_date_time": "10:37 am on 27 June, 2023",
    "session_2": [
        {
            "speaker": "Melanie",
            "dia_id": "D2:1",
            "text": "We took the kids camping at the beach last week.",
        },
        {
            "speaker": "Caroline",
            "dia_id": "D2:2",
            "text": "I started volunteering at an LGBTQ youth centre on Saturdays.",
        },
    ],
}


def run_json(capsys: pytest.CaptureFixture[str], *args: str) -> list[dict[str, object]]:
    assert main(list(args)) == 0
    found: list[dict[str, object]] = json.loads(capsys.readouterr().out)
    return found


def write_talk(tmp_path: Path) -> Path:
    path = tmp_path / "talk.jsonl"
    path.write_text("".join(json.dumps(t) + "\n" for t in TALK), encoding="utf-8")
    return path


def import_talk(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["memory", "import", str(write_talk(tmp_path))]) == 0
    out = capsys.readouterr().out
    assert out == "imported 2 sessions and 5 episodes from talk.jsonl (JSON Lines)\n"


def test_imported_jsonl_is_recalled_as_episodes_of_its_sessions(
    annie_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import_talk(tmp_path, capsys)
    with Store(annie_home / "annie.db") as store:
        assert store.episodes.count() == 5
        assert not store.notes.recent()  # episodes are no notes

    # The same file again remembers nothing twice.
    assert main(["memory", "import", str(tmp_path / "talk.jsonl")]) == 0
    assert "imported already; nothing written" in capsys.readouterr().out
    with Store(annie_home / "annie.db") as store:
        assert store.episodes.count() == 5

    found = run_json(capsys, "memory", "recall", "When is my sister arriving?", "--json")
    first = found[0]
    assert first["kind"] == "episode"
    assert first["speaker"] == "user"
    assert first["session"] == "sess-1"  # "kitchen", the first session imported
    # The turn comes with the answer to it, as the lane shows it.
    assert first["text"] == (
        "You: My sister Priya is flying in from Toronto on the 14th.\n"
        "Annie: Noted, Priya arrives from Toronto on the 14th."
    )
    assert str(first["at"]).startswith("2026-03-02T09:00")
    assert first["certain"] is True
    assert set(first) == {"kind", "id", "session", "at", "speaker", "text", "score", "certain"}

    found = run_json(capsys, "memory", "recall", "what did I plant in the greenhouse?", "--json")
    assert (found[0]["session"], found[0]["speaker"]) == ("sess-2", "user")
    assert "tomato seedlings" in str(found[0]["text"])
    scores = [float(str(f["score"])) for f in found]
    assert scores == sorted(scores, reverse=True)

    # Plain: a line per item with kind, id, date, speaker and the text as the lane shows it.
    assert main(["memory", "recall", "When is my sister arriving?"]) == 0
    line = capsys.readouterr().out.splitlines()[0].split()
    assert line[:2] == ["episode", str(first["id"])]
    assert line[3:7] == ["2026-03-02", "09:00", "user", "You:"]
    assert "/ Annie: Noted" in " ".join(line)


def test_imported_locomo_conversation_is_recalled_by_a_named_speakers_fact(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "conv-26.json"
    path.write_text(json.dumps(LOCOMO), encoding="utf-8")
    assert main(["memory", "import", str(path)]) == 0
    assert capsys.readouterr().out == (
        "imported 2 sessions and 5 episodes from conv-26.json (LoCoMo)\n"
    )

    found = run_json(capsys, "memory", "recall", "What kind of dog did Caroline adopt?", "--json")
    first = found[0]
    assert (first["kind"], first["speaker"], first["session"]) == ("episode", "Caroline", "sess-1")
    assert str(first["text"]).startswith(
        "Caroline: Hey Mel! Last weekend I adopted a rescue greyhound called Biscuit.\nMelanie: "
    )
    assert str(first["at"]).startswith("2023-05-08T13:56")

    found = run_json(capsys, "memory", "recall", "Where does Caroline volunteer?", "--json")
    assert (found[0]["speaker"], found[0]["session"]) == ("Caroline", "sess-2")
    assert "youth centre" in str(found[0]["text"])
    # The second session's turns are placed from its own start.
    assert str(found[0]["at"]).startswith("2023-06-27T10:37")


def test_questions_from_stdin_give_one_line_each_in_order(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import_talk(tmp_path, capsys)
    questions = [
        "what did I plant in the greenhouse?",
        "When is my sister arriving?",
        "",
        "When is the car's MOT due?",
    ]
    # As a script runs it, in a process of its own, reading its standard input.
    done = bot("memory", "recall", "-", "--json", stdin="\n".join(questions) + "\n")
    assert done.returncode == 0, done.stderr
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(answers) == 4
    assert "tomato seedlings" in answers[0][0]["text"]
    assert "Priya" in answers[1][0]["text"]
    assert answers[2] == []  # the blank line
    assert "MOT" in answers[3][0]["text"]

    # Plain, each question's line names it and what it recalled.
    monkeypatch.setattr("sys.stdin", io.StringIO("\n".join(questions) + "\n"))
    assert main(["memory", "recall", "-"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split("\t")[0] for line in lines] == questions
    assert lines[0].split("\t")[1].startswith(f"-> episode {answers[0][0]['id']} ")
    assert lines[2] == "\t-> nothing"


def test_notes_and_episodes_come_back_in_one_recall(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import_talk(tmp_path, capsys)
    assert main(["notes", "add", "Priya is allergic to peanuts."]) == 0
    note_id = capsys.readouterr().out.split()[0]

    found = run_json(capsys, "memory", "recall", "What is Priya allergic to?", "--json")
    assert found[0]["id"] == note_id
    assert (found[0]["kind"], found[0]["session"], found[0]["speaker"]) == ("note", "", "")
    assert found[0]["text"] == "Priya is allergic to peanuts."
    assert found[0]["certain"] is True
    episodes = [f for f in found if f["kind"] == "episode"]
    assert episodes and all("Priya" in str(f["text"]) for f in episodes)
    assert {f["session"] for f in episodes} == {"sess-1"}

    # Nothing says whether she eats meat: what is about her comes back, marked as only related.
    assert main(["memory", "recall", "Is Priya vegetarian?"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert {line.split()[0] for line in lines[:-1]} == {"note", "episode"}
    assert lines[-1] == "(only related: recall is not sure any of these says what was asked)"


def test_notes_are_recalled_the_right_one_first(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = (
        "The spare key is under the blue flowerpot by the shed.\nMaya's shoe size is 38.\n"
        "The plumber's number is 07700 900123.\nMaya lives in Bristol.\n"
    )
    monkeypatch.setattr("sys.stdin", io.StringIO(lines))
    assert main(["notes", "add", "-"]) == 0
    capsys.readouterr()
    found = run_json(capsys, "memory", "recall", "What size footwear does Maya take?", "--json")
    assert [f["id"] for f in found][:2] == ["note-2", "note-4"]
    assert found[0]["certain"] is True
    assert all((f["kind"], f["session"], f["speaker"]) == ("note", "", "") for f in found)
    # Nothing says what she is allergic to: her notes come back, marked as only related.
    found = run_json(capsys, "memory", "recall", "Is Maya allergic to anything?", "--json")
    assert found and not any(f["certain"] for f in found)
    scores = [float(str(f["score"])) for f in found]
    assert scores == sorted(scores, reverse=True)
    found = run_json(capsys, "memory", "recall", "where did we hide the door key?", "--json")
    assert found[0]["id"] == "note-1"
    assert found[0]["text"] == "The spare key is under the blue flowerpot by the shed."
    assert run_json(capsys, "memory", "recall", "Tell me a joke.", "--json") == []
    assert main(["memory", "recall", "Tell me a joke."]) == 0
    assert capsys.readouterr().out == "nothing would be recalled for that question\n"


def test_last_tuesday_picks_the_tuesday_note_over_a_newer_one(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # 2026-03-27 is a Friday: "last Tuesday" is the 24th.
    tuesday = (
        "The boiler is making a banging noise when the heating comes on.",
        "2026-03-24T10:00",
    )
    newer = ("The boiler pressure dropped to one bar, topped it up.", "2026-03-26T09:00")
    for text, at in (tuesday, newer):
        assert main(["notes", "add", text, "--at", at]) == 0
    capsys.readouterr()
    now = ("--now", "2026-03-27T19:00")
    found = run_json(capsys, "memory", "recall", "what's up with the boiler?", "--json", *now)
    assert sorted(str(f["text"]) for f in found) == sorted([newer[0], tuesday[0]])
    asked = "What did I tell you last Tuesday about the boiler?"
    found = run_json(capsys, "memory", "recall", asked, "--json", *now)
    assert [f["text"] for f in found] == [tuesday[0], newer[0]]
    assert str(found[0]["at"]).startswith("2026-03-24T10:00")
    assert float(str(found[0]["score"])) > IN_WINDOW_BONUS > float(str(found[1]["score"]))
    # Asked a week later, "last Tuesday" holds no note: both come back, neither lifted by time.
    later = ("--now", "2026-04-03T19:00")
    found = run_json(capsys, "memory", "recall", asked, "--json", *later)
    assert len(found) == 2 and all(float(str(f["score"])) < IN_WINDOW_BONUS for f in found)


def test_a_malformed_or_missing_file_exits_2_and_writes_nothing(
    annie_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = json.dumps(TALK[0])
    broken = tmp_path / "broken.jsonl"
    broken.write_text(f"{good}\n\n{good}\n{{'session': 'kitchen'\n{good}\n", encoding="utf-8")
    assert main(["memory", "import", str(broken)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "broken.jsonl, line 4: not JSON" in err

    unfinished = tmp_path / "unfinished.jsonl"
    row = {k: v for k, v in TALK[0].items() if k != "text"}
    unfinished.write_text(f"{good}\n{json.dumps(row)}\n", encoding="utf-8")
    assert main(["memory", "import", str(unfinished)]) == 2
    assert "unfinished.jsonl, line 2: missing text" in capsys.readouterr().err

    missing = tmp_path / "nowhere.jsonl"
    assert main(["memory", "import", str(missing)]) == 2
    assert f"error: {missing}: cannot read" in capsys.readouterr().err

    assert main(["memory", "recall", "  "]) == 2
    assert capsys.readouterr().err == "error: recall needs a question\n"
    assert main(["memory", "recall", "the boiler", "--now", "soon"]) == 2
    assert "--now 'soon' is not an ISO date or date-time" in capsys.readouterr().err
    with Store(annie_home / "annie.db") as store:
        assert store.episodes.count() == 0
        assert not store.notes.any()
        sessions = store.one("SELECT count(*) AS c FROM sessions")
        assert sessions is not None and sessions["c"] == 0
