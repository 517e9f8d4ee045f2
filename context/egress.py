"""The one check every outgoing request passes: nothing the user keeps private leaves the machine.

A web search query, a URL to fetch, or any later request that goes over the network is
compared with every private item in the store (private notes and private episodes: the words
the user asked to keep between them and Annie, and her answers to them) before it is sent,
whatever the approval setting. Withholding private notes from prompts (`context.provenance`)
is the first line; this is the last, and it does not depend on how the words reached the model
(a briefing, a compacted summary, a state answer, a recalled turn, or the user's own words).

A request matches a private item when, after folding case and dropping spacing and separators,
it holds any of the item's:
- numbers of four or more digits ("4 4 1 2" and "44-12" are 4412);
- three consecutive words (unless all three are among the 200 commonest: "is in the");
- rare words: names (capitalized), identifiers (letters with digits), and words outside the
  10,000 most common English words (`common_words.txt`, from wordfreq's English list).
So "peanut allergy symptoms" passes against "Leo is allergic to peanuts", and "leo peanut"
does not. The requests of one turn are checked together as well as one by one, so a number or
a phrase split over two calls is still caught.

The index is rebuilt only when the store's private items change (a counter the database keeps,
read once per check); a check then costs one lookup per word and per character position.
"""

from __future__ import annotations

import functools
import logging
import re
import weakref
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

COMMON_WORDS_FILE = Path(__file__).with_name("common_words.txt")
# A capitalized word is a name unless it is among the commonest words ("The", "My", "I").
NAME_EXEMPT = 500
# Three words that are all among the commonest ("is in the") say nothing of the item, and
# would hold back every query that has them.
FILLER = 200
MIN_DIGITS = 4
REFUSALS_KEPT = 100
MIN_WORD = 3
# Words run together with the separators dropped are compared as one string only for pieces
# this long: shorter ones ("leo") would be found inside unrelated words ("galileo").
MIN_RUN_ON = 6

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_DIGIT_RUN = re.compile(r"\d(?:[\s\-./,_]*\d)*")
_LETTER_RUN = re.compile(r"\b(?:[^\W_][\s\-._]+){2,}[^\W_]\b")
_SEPARATORS = re.compile(r"[\W_]+", re.UNICODE)


@functools.cache
def common_words() -> dict[str, int]:
    """The common-word list, each word with its rank (0 is the commonest)."""
    words: dict[str, int] = {}
    for line in COMMON_WORDS_FILE.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            words.setdefault(line.strip(), len(words))
    return words


def fold(text: str) -> str:
    """Case folded, with characters spaced out ("l e o", "K-T-1-9") joined back into words."""
    return _LETTER_RUN.sub(lambda m: _SEPARATORS.sub("", m.group(0)), text).casefold()


def words(text: str) -> list[str]:
    return _WORD.findall(fold(text))


def run_on(text: str) -> str:
    """`text` folded, with every space and separator dropped."""
    return _SEPARATORS.sub("", fold(text))


def numbers(text: str) -> list[str]:
    """The digit runs in `text`, separators inside a run dropped ("12 34-56" is "123456")."""
    return [re.sub(r"\D", "", m.group(0)) for m in _DIGIT_RUN.finditer(text)]


@dataclass(frozen=True)
class Pieces:
    """What of a private item a request must not hold."""

    numbers: frozenset[str]
    rare: frozenset[str]
    phrases: frozenset[str]  # three consecutive words, run on


def pieces(text: str) -> Pieces:
    common = common_words()
    nums = {n for n in numbers(text) if len(n) >= MIN_DIGITS}
    rare: set[str] = set()
    for raw in _WORD.findall(text):
        word = raw.casefold()
        if len(word) < MIN_WORD or word.isdigit():
            continue
        rank = common.get(word)
        named = raw[0].isupper() and (rank is None or rank >= NAME_EXEMPT)
        identifier = any(c.isdigit() for c in word)
        if rank is None or named or identifier:
            rare.add(word)
    said = words(text)
    phrases = {
        "".join(said[i : i + 3])
        for i in range(len(said) - 2)
        if any(common.get(w, FILLER) >= FILLER for w in said[i : i + 3])
    }
    return Pieces(frozenset(nums), frozenset(rare), frozenset(phrases))


def _heads(pieces: dict[str, str], size: int) -> dict[str, list[str]]:
    """The pieces by their first `size` characters."""
    heads: dict[str, list[str]] = {}
    for piece in pieces:
        heads.setdefault(piece[:size], []).append(piece)
    return heads


def _within(
    text: str, heads: dict[str, list[str]], pieces: dict[str, str], size: int
) -> tuple[str, str] | None:
    """The first piece found anywhere inside `text`, with its item."""
    for i in range(len(text) - size + 1):
        for piece in heads.get(text[i : i + size], ()):
            if text.startswith(piece, i):
                return piece, pieces[piece]
    return None


@dataclass(frozen=True)
class Leak:
    """Why a request may not go out: the private item it matches, and what it holds of it."""

    item: str  # the item's id
    kind: str  # "number", "rare word" or "phrase"
    piece: str

    @property
    def reason(self) -> str:
        return f"it holds a {self.kind} from something the user asked to keep private"


class PrivateIndex:
    """Every private item's pieces, indexed by piece."""

    def __init__(self, items: Iterable[tuple[str, str]]) -> None:
        self.numbers: dict[str, str] = {}
        self.rare: dict[str, str] = {}
        self.phrases: dict[str, str] = {}
        self.size = 0
        for item_id, text in items:
            self.size += 1
            p = pieces(text)
            for n in p.numbers:
                self.numbers.setdefault(n, item_id)
            for w in p.rare:
                self.rare.setdefault(w, item_id)
            for phrase in p.phrases:
                self.phrases.setdefault(phrase, item_id)
        # Pieces found inside a longer run (digits, or letters with separators dropped) are
        # looked up by their first few characters, so a request costs one lookup a position.
        self._number_heads = _heads(self.numbers, MIN_DIGITS)
        run_on_pieces = {**self.rare, **self.phrases}
        self._run_on = {k: v for k, v in run_on_pieces.items() if len(k) >= MIN_RUN_ON}
        self._run_on_heads = _heads(self._run_on, MIN_RUN_ON)

    def match(self, request: str) -> Leak | None:
        """The first private piece `request` holds, or None."""
        if self.size == 0:
            return None
        for run in numbers(request):
            found = _within(run, self._number_heads, self.numbers, MIN_DIGITS)
            if found is not None:
                return Leak(found[1], "number", found[0])
        said = words(request)
        for word in said:
            item = self.rare.get(word)
            if item is not None:
                return Leak(item, "rare word", word)
        for i in range(len(said) - 2):
            item = self.phrases.get("".join(said[i : i + 3]))
            if item is not None:
                return Leak(item, "phrase", " ".join(said[i : i + 3]))
        found = _within(run_on(request), self._run_on_heads, self._run_on, MIN_RUN_ON)
        if found is not None:
            kind = "rare word" if found[0] in self.rare else "phrase"
            return Leak(found[1], kind, found[0])
        return None


def refused(what: str) -> str:
    """What Annie says when `what` ("search the web for that", "open that page") was held
    back: the private item is not named, not even by its id."""
    return (
        f"I didn't {what}: it held something you asked me to keep private, so nothing left "
        "this machine."
    )


@dataclass
class _Turn:
    key: tuple[str, str]
    requests: list[str] = field(default_factory=list)


class Egress:
    """The egress check over one store: `check` before anything is sent."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self._index = PrivateIndex(())
        self._version: int | None = None
        self._turns: dict[str, _Turn] = {}
        # The latest refusals, for the page and the tests; the log keeps every one.
        self.refused: deque[tuple[str, Leak]] = deque(maxlen=REFUSALS_KEPT)

    def index(self) -> PrivateIndex:
        """The private items as they are now (rebuilt only when they changed)."""
        if self.store is None:
            return self._index
        version = self.store.provenance.private_version()
        if version != self._version:
            self._index = PrivateIndex(self.store.provenance.private_items())
            self._version = version
        return self._index

    def check(self, request: str, *, session_id: str = "", turn_id: str = "") -> Leak | None:
        """Why `request` may not leave, or None. It is judged alone and together with the
        requests this turn already sent (a call with no turn, such as an approved one, joins
        the session's last turn)."""
        turn = self._turns.get(session_id)
        if turn is None or (turn_id and turn_id != turn.key[1]):
            turn = _Turn((session_id, turn_id))
            self._turns[session_id] = turn
        index = self.index()
        leak = index.match(request)
        if leak is None and turn.requests:
            # Joined both ways: a name cut in two ("Pr", "iya") is whole only without a space.
            leak = index.match(" ".join([*turn.requests, request]))
            if leak is None:
                leak = index.match("".join([*turn.requests, request]))
        if leak is not None:
            self.refused.append((request, leak))
            log.warning(
                "egress refused (session %s, turn %s): %s (private item %s)",
                session_id or "-",
                turn_id or "-",
                leak.reason,
                leak.item,
            )
            return leak
        turn.requests.append(request)
        return None


_BY_STORE: weakref.WeakKeyDictionary[Any, Egress] = weakref.WeakKeyDictionary()


def egress_for(store: Any) -> Egress:
    """The store's one egress check (shared by every tool and session that uses the store)."""
    if store is None:
        return Egress(None)
    found = _BY_STORE.get(store)
    if found is None:
        found = _BY_STORE[store] = Egress(store)
    return found
