"""The rules that notice what the user states: each kind, days written out, and what is no
note at all (questions, requests, wishes, the moment, sarcasm, what is taken back)."""

from __future__ import annotations

from datetime import date, datetime

import pytest

from context.noticed import KINDS, notice

# A Tuesday.
NOW = datetime.fromisoformat("2026-03-10T08:30:00+00:00")


@pytest.mark.parametrize(
    ("said", "kind", "text"),
    [
        ("um so I work as a plumber in Bristol", "fact", "I work as a plumber in Bristol."),
        ("I've got a heart condition", "fact", "I've got a heart condition."),
        ("we're in a big old farmhouse out past the village", "fact", None),
        ("I can't eat gluten at all", "preference", "I can't eat gluten at all."),
        ("my favourite film is Alien", "preference", "My favourite film is Alien."),
        ("keep it brief when you read me the news", "preference", None),
        ("my name is Samira", "preference", "My name is Samira."),
        ("my nephew Idris is a paramedic in Leeds", "person", None),
        ("Greta is my stepdaughter", "person", "Greta is my stepdaughter."),
        ("we have three daughters", "person", "We have three daughters."),
        ("my aunt's birthday is the 4th of May", "date", "My aunt's birthday is 4 May."),
        ("our lease runs out on august 31st", "date", "Our lease runs out on 31 August."),
    ],
)
def test_each_kind_in_the_users_words(said: str, kind: str, text: str | None) -> None:
    (found,) = notice(said, NOW)
    assert found.kind == kind
    assert found.kind in KINDS
    if text is not None:
        assert found.text == text


@pytest.mark.parametrize(
    ("said", "written", "until"),
    [
        ("I'm seeing the physio on thursday", "thursday (Thursday 12 March 2026)", "2026-03-12"),
        ("I'm off to Rome next monday", "next monday (Monday 16 March 2026)", "2026-03-16"),
        ("I've got my driving test tomorrow", "tomorrow (Wednesday 11 March 2026)", "2026-03-11"),
        ("we're hosting a barbecue in three weeks", "(Tuesday 31 March 2026)", "2026-03-31"),
        ("I'm starting at the new school on the 23rd", "(Monday 23 March 2026)", "2026-03-23"),
        ("I'm going to Oslo in June", "in June", None),
    ],
)
def test_a_plans_day_is_written_out_and_is_its_last(
    said: str, written: str, until: str | None
) -> None:
    (found,) = notice(said, NOW)
    assert found.kind == "plan"
    assert written in found.text
    assert found.until == (date.fromisoformat(until) if until else None)


def test_a_day_of_every_year_is_written_without_a_year() -> None:
    (found,) = notice("my mum's birthday is on halloween", NOW)
    assert found.kind == "date" and found.text == "My mum's birthday is on halloween (31 October)."
    assert found.until is None


def test_an_ordinal_that_is_no_day_is_left_as_said() -> None:
    (found,) = notice("I'm in a tiny flat on the fourth floor", NOW)
    assert found.text == "I'm in a tiny flat on the fourth floor."


@pytest.mark.parametrize(
    "said",
    [
        "do I like olives",
        "is my sister's birthday in May?",
        "remind me to call my brother on friday",
        "add oat milk to my list",
        "call my dad",
        "if I had a boat I'd live on it",
        "I wish I lived in Spain",
        "maybe I'll take up painting",
        "I'd love to see Japan one day",
        "I think my passport expires in June",
        "I'm so tired",
        "I'm running late",
        "my son is sick today",
        "my wife is at work",
        "I had porridge for breakfast",
        "I love that",
        "I hate it when you do that",
        "I never said that",
        "oh great, I just love waiting on hold",
        "I live in Madrid, no wait, forget that",
        "scratch that, my brother lives in Lima",
        "I'm going to the shop",
        "I have a question about my bill",
        "apparently my cousin is moving to Perth",
        "what a day",
        "thanks",
    ],
)
def test_what_states_nothing_to_keep_gives_no_note(said: str) -> None:
    assert notice(said, NOW) == []


def test_a_secret_is_private_and_a_request_to_remember_is_a_statement() -> None:
    (found,) = notice("please remember that my gate code is 4411", NOW)
    assert found.private and found.text == "My gate code is 4411."
    (plain,) = notice("my gym is the one on Mill Road", NOW)
    assert not plain.private


def test_one_note_per_sentence_and_the_question_after_it_is_left() -> None:
    found = notice("I'm vegan. My partner Jo is a teacher. What's on today?", NOW)
    assert [(n.kind, n.text) for n in found] == [
        ("preference", "I'm vegan."),
        ("person", "My partner Jo is a teacher."),
    ]


def test_letters_that_change_length_in_lower_case_keep_the_note_whole() -> None:
    (found,) = notice("my friend İlkay lives in Izmir", NOW)
    assert "lkay lives in izmir" in found.text.lower()
