"""The egress check over fifty private items, each asked for ten ways, and ordinary queries that
must still go out. The check sees only the request and the store's private items, so how the
words reached the model (the briefing, a compacted summary, a state answer, a recalled turn)
is one way each here; tests/bot/test_egress_turns.py takes those paths through a real runtime.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from context.egress import Egress, PrivateIndex, egress_for, pieces
from memory.store import Store

# (what the user asked to keep private, a piece of it a query might carry)
PRIVATE: list[tuple[str, str]] = [
    ("Leo is allergic to peanuts", "Leo"),
    ("My bank PIN is 4417", "4417"),
    ("The spare key is under the blue flowerpot by the shed", "flowerpot"),
    ("My passport number is X48291735", "X48291735"),
    ("Maya's therapist is Dr. Okonkwo on Tuesdays", "Okonkwo"),
    ("The alarm code for the front door is 8832", "8832"),
    ("I owe my brother 2350 dollars and he doesn't know I spent it", "2350"),
    ("My card number is 4929 1234 5678 9012", "4929123456789012"),
    ("Grandma Rosalind has early dementia, we haven't told the kids", "Rosalind"),
    ("The wifi password is sunflower-bicycle-77", "sunflower"),
    ("I'm interviewing at Brightwater Analytics next week, my boss can't know", "Brightwater"),
    ("My social security number is 078-05-1120", "078051120"),
    ("Priya is pregnant but isn't telling anyone until March", "Priya"),
    ("The safe combination is 36 24 12", "362412"),
    ("Tom's probation officer is named Gallagher", "Gallagher"),
    ("I keep the emergency cash inside the hollow encyclopedia volume", "encyclopedia"),
    ("My sister Ingrid is going through a divorce", "Ingrid"),
    ("My account at Northfield Credit Union ends in 5521", "Northfield"),
    ("The landlord Mr. Abernathy is letting us stay rent free", "Abernathy"),
    ("My blood test showed elevated creatinine levels", "creatinine"),
    ("Our door code at the cabin is 190477", "190477"),
    ("The surprise party for Colette is at the boathouse", "Colette"),
    ("I take sertraline every morning", "sertraline"),
    ("My username on the forum is quietfalcon82", "quietfalcon82"),
    ("Dad's pension reference is PN-77310-B", "77310"),
    ("The garage opener frequency code is 3719", "3719"),
    ("Aunt Theodora left us the house in her will", "Theodora"),
    ("My licence plate is KT19 XRM", "KT19"),
    ("Our landline number is 01632 960 483", "01632960483"),
    ("I hid the ring in the left pocket of the grey winter coat", "left pocket of"),
    ("Jonah failed his driving test twice", "Jonah"),
    ("The medical record number is MRN 5580231", "5580231"),
    ("Our lawyer at Whitcombe and Hale is handling the custody case", "Whitcombe"),
    ("The safe deposit box is number 1186 at the Elm Street branch", "1186"),
    ("My ex-husband Dmitri must never get this address", "Dmitri"),
    ("The vet said Biscuit has a heart murmur", "Biscuit"),
    ("My mother's maiden name is Villanueva", "Villanueva"),
    ("The house alarm backup code is 55190", "55190"),
    ("I'm seeing a cardiologist about palpitations", "palpitations"),
    ("My locker code at the gym is 2941", "2941"),
    ("Carmen owes the bookmaker money", "bookmaker"),
    ("The router admin password is tangerine9", "tangerine9"),
    ("Our adoption case worker is Ms. Fairweather", "Fairweather"),
    ("My tax refund this year was 4812", "4812"),
    ("Uncle Bartholomew is in rehab again", "Bartholomew"),
    ("The bike lock combination is 7071", "7071"),
    ("My insurance policy number is HX-204-9917", "2049917"),
    ("I secretly applied to Queensbury University", "Queensbury"),
    ("Eli's therapist diagnosed him with dyslexia last month", "dyslexia"),
    ("The storage unit at Keystone Storage is number 4420", "Keystone"),
]

# Queries a household asks the web every day, none of which holds anything above.
ORDINARY = [
    "peanut allergy symptoms",
    "weather in Paris tomorrow",
    "how long to boil an egg",
    "best pizza near me",
    "what time does the pharmacy close",
    "train times to London",
    "how to fix a leaking tap",
    "news today",
    "football scores last night",
    "recipe for banana bread",
    "how tall is the Eiffel Tower",
    "what is in the news today",
    "how many days until Christmas",
    "cheap flights to Rome in June",
    "symptoms of the flu in children",
    "how do I reset my phone",
    "what is the capital of Australia",
    "movies showing this weekend",
    "how to grow tomatoes on a balcony",
    "convert 30 celsius to fahrenheit",
    "galileo telescope history",
    "the best way to learn spanish",
    "is it going to rain on saturday",
    "how to make cold brew coffee",
    "when is the next full moon",
    "opening hours of the library",
    "how to tie a tie",
    "population of Canada 2024",
    "what is a heart rate of 70 normal",
    "dog friendly beaches nearby",
]


def _spaced(piece: str) -> str:
    """The piece with separators inserted: digits in pairs with spaces, letters dashed."""
    if piece.isdigit():
        return " ".join(piece[i : i + 2] for i in range(0, len(piece), 2))
    return "-".join(piece)


def _halves(piece: str) -> list[str]:
    """The piece split over two calls of one turn: by words when it has several, else by
    characters."""
    said = piece.split()
    if len(said) > 1:
        return [" ".join(said[:1]), " ".join(said[1:])]
    cut = len(piece) // 2
    return [piece[:cut], piece[cut:]]


Way = Callable[[str], list[str]]
WAYS: dict[str, Way] = {
    "as is": lambda p: [f"{p} information"],
    "in a URL path": lambda p: [f"https://www.example.com/look/{p.replace(' ', '/')}/page"],
    "in URL parameters": lambda p: [f"https://search.example.org/?q={p.replace(' ', '+')}&n=3"],
    "separators inserted": lambda p: [f"find {_spaced(p)} online"],
    "other case": lambda p: [f"what about {p.swapcase()}"],
    "split over two calls": _halves,
    # How the words reached the model changes nothing for the check; these carry the piece
    # the way each path words it.
    "after compaction": lambda p: [f"user said {p} earlier"],
    "from the briefing": lambda p: [f"follow up on {p}"],
    "from a state answer": lambda p: [f"{p} details"],
    "from a recalled episode": lambda p: [f"you told me about {p}"],
}


@pytest.fixture(scope="module")
def index() -> PrivateIndex:
    return PrivateIndex((f"note-{n}", text) for n, (text, _) in enumerate(PRIVATE, 1))


def test_every_piece_is_one_the_check_knows(index: PrivateIndex) -> None:
    """The table above is what it says: each piece is a number, a rare word or a phrase of
    its item (a piece the check does not hold would make the next test pass vacuously)."""
    for text, piece in PRIVATE:
        p = pieces(text)
        key = piece.casefold().replace(" ", "")
        digits = "".join(c for c in piece if c.isdigit())
        assert key in p.rare or key in p.phrases or digits in p.numbers, (text, piece)


@pytest.mark.parametrize("way", list(WAYS))
def test_no_private_item_leaves_any_way(way: str, index: PrivateIndex) -> None:
    sent: list[tuple[str, str]] = []
    for n, (_, piece) in enumerate(PRIVATE, 1):
        egress = Egress(None)
        egress._index = index  # the store-free check over the same items
        egress._version = 0
        requests = WAYS[way](piece)
        leaks = [egress.check(r, session_id="s", turn_id=f"t{n}") for r in requests]
        if all(leak is None for leak in leaks):
            sent.append((piece, " | ".join(requests)))
        else:
            assert len(egress.refused) == 1, "each refusal is logged once"
    assert sent == [], f"{len(sent)} of {len(PRIVATE)} left: {sent[:5]}"


def test_ordinary_queries_go_out(index: PrivateIndex) -> None:
    held = [(q, index.match(q)) for q in ORDINARY]
    assert [(q, leak) for q, leak in held if leak is not None] == []


def test_related_words_are_not_the_item() -> None:
    index = PrivateIndex([("note-1", "Leo is allergic to peanuts")])
    assert index.match("peanut allergy symptoms") is None
    leak = index.match("leo peanut")
    assert leak is not None and (leak.item, leak.kind, leak.piece) == ("note-1", "rare word", "leo")
    # Three words that are all among the commonest carry nothing of an item.
    assert PrivateIndex([("n", "my ring is in the safe")]).match("what is in the news") is None


def test_a_new_turn_starts_afresh_and_requests_join_only_within_one() -> None:
    egress = Egress(None)
    egress._index = PrivateIndex([("note-2", "My bank PIN is 4417")])
    egress._version = 0
    assert egress.check("44", session_id="s", turn_id="t1") is None
    assert egress.check("17", session_id="s", turn_id="t1") is not None  # 44 then 17: 4417
    assert egress.check("44", session_id="s", turn_id="t2") is None
    assert egress.check("17", session_id="other", turn_id="t9") is None  # another session
    assert egress.check("17", session_id="s", turn_id="t3") is None


def test_the_store_is_read_again_when_its_private_items_change(tmp_path: Path) -> None:
    with Store(tmp_path / "annie.db") as store:
        egress = egress_for(store)
        assert egress_for(store) is egress  # one check per store, shared by every tool
        public = store.notes.add("Leo is allergic to peanuts")
        assert egress.check("leo peanut allergy") is None
        store.provenance.stamp(public, sensitivity="private")
        leak = egress.check("leo peanut allergy")
        assert leak is not None and leak.item == public
        store.provenance.stamp(public, sensitivity="normal")
        assert egress.check("leo peanut allergy", turn_id="t2") is None
        # A private episode (the user's words asked to be kept) counts as much as a note.
        s = store.sessions.start()
        store.events.append(s, "user", "Keep this between us: my locker code is 2941", role="user")
        leak = egress.check("gym locker 2941", turn_id="t3")
        assert leak is not None and leak.kind == "number"
