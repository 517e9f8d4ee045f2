"""What of a streamed answer is said aloud: budgets, runaway repetition, code and lists to the
page, links by name. Fed word by word, as a model streams."""

from __future__ import annotations

import re

import pytest

from bot.voice.aloud import (
    LINK,
    NOTICES,
    REST_ON_PAGE,
    Budget,
    SpokenAnswer,
    classify,
    for_turn,
    holds_id,
    looks_like_code,
)
from config.settings import SpeechSettings
from context.conversation import INTERRUPTED_MARK

SPOKEN = Budget(60, 3)
WRITTEN = Budget(400)
CODE = NOTICES["fence"]


def stream(answer: SpokenAnswer, text: str) -> list[str]:
    """Feed `text` a token at a time (a word with its space), as a model does; flush at the
    end unless generation was cut."""
    said: list[str] = []
    for token in re.findall(r"\S+\s*|\s+", text):
        said += answer.feed(token)
        if answer.cut is not None:
            return said
    return said + answer.flush()


def sentences(n: int, start: int = 0) -> str:
    return " ".join(f"Sentence number {i} has a few words." for i in range(start, start + n))


def test_a_voice_answer_stops_at_three_sentences_and_keeps_them() -> None:
    answer = SpokenAnswer(SPOKEN, SPOKEN)
    said = stream(answer, sentences(10))
    assert said == [f"Sentence number {i} has a few words." for i in range(3)]
    assert answer.cut is not None and answer.cut.reason == "budget"
    assert answer.cut.kept == sentences(3)
    assert answer.spoken_sentences == 3


def test_the_word_budget_ends_at_the_first_sentence_end_past_it() -> None:
    # Sentences of 14 words: the third ends past 30 words, before a fifth sentence.
    text = " ".join(f"The {i} " + " ".join(f"w{j}" for j in range(12)) + "." for i in range(6))
    answer = SpokenAnswer(Budget(30, 5), Budget(30, 5))
    said = stream(answer, text)
    assert len(said) == 3 and [len(p.split()) for p in said] == [14, 14, 14]
    assert answer.cut is not None and answer.cut.kept.endswith("w11.")
    assert answer.cut.kept.count(".") == 3


def test_a_sentence_that_never_ends_is_cut_well_past_the_budget() -> None:
    text = ", ".join(f"and then part {i} came" for i in range(200))
    answer = SpokenAnswer(SPOKEN, SPOKEN)
    said = stream(answer, text)
    assert answer.cut is not None and answer.cut.reason == "budget"
    assert sum(len(p.split()) for p in said) <= 60 + 30 + 50  # a few long clauses at most


def test_typed_text_generates_to_the_written_budget_and_says_the_rest_is_on_the_page() -> None:
    answer = SpokenAnswer(SPOKEN, WRITTEN)
    said = stream(answer, sentences(20))
    assert answer.cut is None, "20 short sentences are within 400 words"
    assert said[:3] == [f"Sentence number {i} has a few words." for i in range(3)]
    assert said[3:] == [REST_ON_PAGE]
    answer = SpokenAnswer(SPOKEN, WRITTEN)
    stream(answer, sentences(100))
    assert answer.cut is not None and answer.cut.reason == "budget"
    assert 400 <= answer.generated_words <= 407
    assert answer.cut.kept.endswith(".")


def test_for_turn_gives_voice_the_spoken_budget_and_text_the_written_one() -> None:
    speech = SpeechSettings(spoken_words=20, spoken_sentences=2, written_words=99)
    assert for_turn(speech, "voice").generated == Budget(20, 2)
    assert for_turn(speech, "text").generated == Budget(99)
    assert for_turn(speech, "text").spoken == Budget(20, 2)


def test_a_repeated_sentence_is_cut_before_it_is_said_again() -> None:
    text = "I like dragons. The dragon flew over the hills. " * 5
    answer = SpokenAnswer(SPOKEN, WRITTEN)
    said = stream(answer, text)
    # A long sentence is cut the second time; a short one ("Yes.") may come twice.
    assert said == ["I like dragons.", "The dragon flew over the hills.", "I like dragons."]
    assert answer.cut is not None and answer.cut.reason == "repetition"
    assert answer.cut.kept == "I like dragons. The dragon flew over the hills. I like dragons."


def test_a_short_loop_of_words_is_cut_before_its_sentence() -> None:
    text = "Here is a story. The knight and the dragon " + "and the dragon " * 20 + "slept."
    answer = SpokenAnswer(SPOKEN, WRITTEN)
    said = stream(answer, text)
    assert said == ["Here is a story."]
    assert answer.cut is not None and answer.cut.reason == "repetition"
    assert answer.cut.kept == "Here is a story."


def test_repeated_code_lines_are_a_loop_too() -> None:
    line = "console.log('The booking reference is QX-7731');\n"
    answer = SpokenAnswer(SPOKEN, WRITTEN)
    stream(answer, "Here it is:\n```js\n" + line * 10 + "```\n")
    assert answer.cut is not None and answer.cut.reason == "repetition"
    # The same line three times running is a loop of words; cut before the third.
    assert answer.cut.kept.count("console.log") == 2


def in_pieces(answer: SpokenAnswer, text: str, size: int = 5) -> str:
    """Feed `text` a few characters at a time, as a model streams a run with no space;
    returns what was fed before generation was cut."""
    for i in range(0, len(text), size):
        answer.feed(text[i : i + size])
        if answer.cut is not None:
            return text[: i + size]
    answer.flush()
    return text


def test_a_run_of_letters_looping_with_no_space_is_cut() -> None:
    # A small model's runaway inside code: one "word" that never ends, and no line end.
    head = "Here it is:\n```javascript\nfunction remember(ref) {\n"
    run = "  return { type: 'AjaxMemcached" + "Refund" * 200
    answer = SpokenAnswer(SPOKEN, WRITTEN)
    fed = in_pieces(answer, head + run)
    assert answer.cut is not None and answer.cut.reason == "repetition"
    assert answer.cut.kept.endswith("function remember(ref) {")
    assert len(fed) < len(head) + 120  # caught within a few repeats


def test_a_run_with_no_space_and_no_loop_is_cut_at_its_length_limit() -> None:
    run = "".join(f"{i:x}q" for i in range(400))  # no unit repeats, and no space
    answer = SpokenAnswer(SPOKEN, WRITTEN)
    in_pieces(answer, "The key is " + run)
    assert answer.cut is not None and answer.cut.reason == "repetition"
    assert answer.cut.kept == ""


def test_a_code_line_that_never_ends_counts_against_the_budget() -> None:
    line = " + ".join(f"part{i}" for i in range(600))  # words, no loop, no line end
    answer = SpokenAnswer(SPOKEN, Budget(100))
    fed = in_pieces(answer, "Here:\n```js\nlet total = " + line)
    assert answer.cut is not None and answer.cut.reason == "budget"
    assert len(fed.split()) < 100 + 50 + 10


def test_code_with_few_spaces_counts_by_its_length_not_its_spaces() -> None:
    # One spaced word a line, some fifteen tokens each: counted by spaces, 60 lines (900
    # tokens) would fit a 100-word budget.
    lines = "".join(f"localStorage.setItem('ref{i}','QX-{7731 + i}');\n" for i in range(60))
    answer = SpokenAnswer(SPOKEN, Budget(100))
    stream(answer, "Here:\n```js\n" + lines + "```\nDone.")
    assert answer.cut is not None and answer.cut.reason == "budget"
    kept = answer.cut.kept
    assert 10 <= kept.count("setItem") <= 25  # 100 words of six characters: about 16 lines


def test_long_links_and_rules_are_not_runaways() -> None:
    url = "https://example.org/" + "/".join(f"section{i}" for i in range(20))
    text = f"See {url} for more.\n\n" + "-" * 40 + "\n\nThat is all."
    answer = SpokenAnswer(SPOKEN, WRITTEN)
    in_pieces(answer, text)
    assert answer.cut is None


def test_code_may_repeat_a_line_now_and_then() -> None:
    line = "console.log('The booking reference is QX-7731');\n"
    body = "".join(f"{line}let step{i} = {i};\n" for i in range(3))
    answer = SpokenAnswer(SPOKEN, WRITTEN)
    stream(answer, "Here it is:\n```js\n" + body + "```\nDone.")
    assert answer.cut is None


def test_fenced_code_is_never_read_and_the_voice_says_it_is_on_the_page() -> None:
    text = (
        "Sure! Here is a function:\n\n```javascript\nfunction remember(ref) {\n"
        "  localStorage.setItem('ref', ref);\n}\n```\n\nCall it with your reference."
    )
    answer = SpokenAnswer(SPOKEN, WRITTEN)
    said = stream(answer, text)
    assert said == ["Sure!", "Here is a function:", CODE, "Call it with your reference."]
    assert answer.cut is None


def test_a_fence_opened_mid_line_is_still_code() -> None:
    answer = SpokenAnswer(SPOKEN, WRITTEN)
    said = stream(answer, "Here you go:```js\nlet x = 1;\n```\nDone.")
    assert said == ["Here you go:", CODE, "Done."]


def test_unfenced_code_lines_and_code_sentences_are_not_read() -> None:
    answer = SpokenAnswer(SPOKEN, WRITTEN)
    said = stream(answer, "const ref = 'QX-7731';\nconsole.log(ref);\nThat stores it.")
    assert said == [CODE, "That stores it."]
    assert looks_like_code("x = f(y); return x;") and not looks_like_code("Call me at noon.")


def test_lists_and_tables_go_to_the_page() -> None:
    answer = SpokenAnswer(SPOKEN, WRITTEN)
    said = stream(answer, "Here are the steps:\n1. Open the app.\n2. Tap save.\n- More.\nDone.")
    assert said == ["Here are the steps:", NOTICES["list"], "Done."]
    answer = SpokenAnswer(SPOKEN, WRITTEN)
    said = stream(answer, "| a | b |\n|---|---|\n| 1 | 2 |\nThat is the table.")
    assert said == [NOTICES["table"], "That is the table."]


def test_bold_text_and_headings_are_prose() -> None:
    answer = SpokenAnswer(SPOKEN, WRITTEN)
    said = stream(answer, "# Dragons\n\n**Dragons** are big. They fly.")
    assert said == ["Dragons", "Dragons are big.", "They fly."]


def test_a_url_inside_a_sentence_becomes_the_link_on_the_page() -> None:
    answer = SpokenAnswer(SPOKEN, WRITTEN)
    said = stream(
        answer, "See https://example.com/docs/page.html. Also [the guide](https://x.y/z)."
    )
    assert said == [f"See {LINK}.", "Also the guide."]


def test_the_historys_interrupted_note_copied_into_an_answer_is_not_said() -> None:
    answer = SpokenAnswer(SPOKEN, WRITTEN)
    said = stream(answer, f"It was calm{INTERRUPTED_MARK}. Then a storm came.")
    assert said == ["It was calm.", "Then a storm came."]


def test_state_answers_are_said_whole_after_what_was_waiting() -> None:
    answer = SpokenAnswer(Budget(3, 1), Budget(3, 1))
    answer.feed("Let me check")
    assert answer.say("You have two tasks: call Bob, and water the plants. That is all.") == [
        "Let me check",
        "You have two tasks: call Bob, and water the plants.",
        "That is all.",
    ]


@pytest.mark.parametrize(
    ("line", "complete", "kind"),
    [
        ("```py", False, "fence"),
        ("``", False, None),
        ("- item", False, "list"),
        ("-", False, None),
        ("12. step", False, "list"),
        ("---", True, "rule"),
        ("| a |", False, "table"),
        ("    indented()", False, "code"),
        ("The answer is", False, "prose"),
        ("const", False, None),
        ("const answer = 42;", True, "code"),
        ("let me know if that helps", True, "prose"),
        ("from the store we bought bread", True, "prose"),
        ("", True, "blank"),
    ],
)
def test_lines_are_classified_from_their_start(line: str, complete: bool, kind: str | None) -> None:
    assert classify(line, complete) == kind


@pytest.mark.parametrize(
    ("written", "said"),
    [
        (
            "About Leo, I have one note: Leo is allergic to peanuts (note-1).",
            "About Leo, I have one note: Leo is allergic to peanuts.",
        ),
        (
            "Shall I delete note-3, the old gate code?",
            "Shall I delete the note, the old gate code?",
        ),
        ("Marked done [task-12].", "Marked done."),
        ("Two are due (rem-4, rem-7) today.", "Two are due today."),
        # Words that only look like an id are words.
        ("Open notebook-2 on the shelf.", "Open notebook-2 on the shelf."),
    ],
)
def test_ids_are_never_said_the_page_keeps_them(written: str, said: str) -> None:
    voiced = SpokenAnswer(SPOKEN, WRITTEN)
    pieces = voiced.feed(written) + voiced.flush()
    assert " ".join(pieces) == said
    assert voiced.say(written) == [said]


def test_holds_id_tells_a_record_id_from_words_that_look_like_one() -> None:
    assert holds_id("Shall I delete note-3?") and holds_id("see (TASK-12)")
    assert not holds_id("Open notebook-2 on the shelf.") and not holds_id("the note about it")
