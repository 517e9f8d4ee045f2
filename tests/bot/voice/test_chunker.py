"""The sentence chunker: early first clause, sentence pieces, abbreviations, markup."""

from __future__ import annotations

from bot.voice.chunker import SentenceChunker, clean_for_speech


def feed_all(chunker: SentenceChunker, text: str, step: int = 3) -> list[str]:
    out: list[str] = []
    for i in range(0, len(text), step):
        out += chunker.feed(text[i : i + step])
    return out + chunker.flush()


def test_first_piece_goes_at_the_first_clause() -> None:
    chunker = SentenceChunker()
    assert chunker.feed("Sure, I can") == []  # "Sure," is too short to stand alone
    pieces = chunker.feed(" check that for you, and then")
    assert pieces == ["Sure, I can check that for you,"]
    # Later pieces wait for a sentence end, not a clause.
    assert chunker.feed(" we will see, maybe") == []
    assert chunker.feed(" tomorrow. Next") == ["and then we will see, maybe tomorrow."]
    assert chunker.flush() == ["Next"]


def test_a_first_sentence_with_no_clause_in_it_is_cut_after_about_fifteen_words() -> None:
    chunker = SentenceChunker()
    said = 'The user said "Whales" and "Spiders" and "Lemon Beach" and "The Great Barrier Reef" '
    pieces = feed_all(chunker, said + "and the rest. ")  # as the model streams it
    assert len(pieces) == 2 and 60 <= len(pieces[0]) <= 80 and pieces[1].endswith("rest.")
    assert " ".join(pieces).split() == (said + "and the rest.").split()
    # Later sentences may run to `max_chars` before they are cut.
    chunker = SentenceChunker()
    assert chunker.feed("Yes. ") == ["Yes."]
    assert chunker.feed(said + said) == []


def test_a_bracketed_aside_is_not_read_aloud_even_when_streamed_in_pieces() -> None:
    # The history marks an interrupted answer so; a small model sometimes copies the mark.
    said = "Sure, here it is [interrupted: the user spoke over this]. The sea was calm [1]. "
    assert feed_all(SentenceChunker(), said, step=2) == ["Sure, here it is.", "The sea was calm."]
    # A first piece cut for length is cut before the aside, not inside it.
    long = "The story about the sea and the lighthouse keeper is a"
    said = f"{long} [interrupted: the user spoke over this] tale. "
    assert feed_all(SentenceChunker(), said) == [long, "tale."]
    # A bracket that never closes is read as it is, not held back for good.
    assert feed_all(SentenceChunker(), "Take [the long way, then. Right? ") == [
        "Take [the long way, then. Right?"
    ]


def test_sentences_split_but_abbreviations_and_decimals_do_not() -> None:
    text = "Dr. Smith paid 3.5 dollars, e.g. for tea. J. Doe agreed! Is that all? Yes"
    pieces = feed_all(SentenceChunker(first_clause_chars=1000), text)
    assert pieces == [
        "Dr. Smith paid 3.5 dollars, e.g. for tea.",
        "J. Doe agreed!",
        "Is that all?",
        "Yes",
    ]


def test_markup_is_not_read_aloud() -> None:
    assert clean_for_speech("**Two** tasks:\n- `call Bob`\n## write") == (
        "Two tasks: call Bob write"
    )
    pieces = feed_all(SentenceChunker(), "# Heading\n\n**Bold** text here. ")
    assert pieces == ["Heading Bold text here."]


def test_long_sentences_are_cut_at_a_clause_or_space() -> None:
    chunker = SentenceChunker(max_chars=40, first_clause_chars=1000)
    long = "one two three four five six seven, eight nine ten eleven twelve thirteen"
    pieces = chunker.feed(long + " fourteen")
    assert pieces and pieces[0] == "one two three four five six seven,"
    assert all(len(p) <= 40 for p in pieces)
    rest = " ".join(pieces + chunker.flush())
    assert rest.split() == (long + " fourteen").split()


def test_punctuation_only_is_dropped_and_reset_starts_over() -> None:
    chunker = SentenceChunker()
    assert feed_all(chunker, " ... ") == []
    chunker.feed("Hello there, how are")
    chunker.reset()
    assert chunker.pending == ""
    assert chunker.feed("Well, that is a long clause, ok") == ["Well, that is a long clause,"]
