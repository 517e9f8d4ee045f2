"""Which notes mention a name: an in-memory index of the capitalized words in current notes.

Recall looks first among the notes that mention a person, place or pet the question names
(`context.recall`). The full-text index cannot say that: it stems and folds case, so "Ines"
is searched as "in" and "Will" as "will". This index keeps, per lower-cased word, the notes
that spell it with a capital, and which words are capitalized inside a sentence somewhere
(a name) rather than only at a note's start ("Water is dripping..."). It is built on first use
from the notes table and kept in step by the same cheap signature the vectors use (row count,
highest key, superseded count): appended notes are read alone, anything else rebuilds.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field

from memory.db import StoreBase

_CAPITALIZED = re.compile(r"\b[A-Z][\w-]*")
_WORD = re.compile(r"\b\w[\w-]*")
_SENTENCE_END = re.compile(r"[.!?:;]\s*$")


@dataclass
class _Index:
    """Per lower-cased word, the keys of the notes that capitalize it; which words are names."""

    notes: dict[str, list[int]] = field(default_factory=lambda: defaultdict(list))
    inside: set[str] = field(default_factory=set)  # capitalized within a sentence somewhere
    alone: set[str] = field(default_factory=set)  # ... somewhere with no capitalized neighbour
    anyhow: dict[str, int] = field(default_factory=lambda: defaultdict(int))  # in any case
    total: int = 0  # current notes
    signature: tuple[int, int, int] = (0, 0, 0)

    def mentions(self, word: str) -> list[int]:
        """The keys of current notes that spell `word` capitalized (any case given)."""
        return list(self.notes.get(word.lower(), ()))

    def is_name(self, word: str) -> bool:
        """Whether some note capitalizes `word` where no sentence starts."""
        return word.lower() in self.inside

    def is_name_alone(self, word: str) -> bool:
        """Whether some note capitalizes `word` within a sentence as a name of its own, not
        one word of a title or an address ("In Our Time", "Queen Street")."""
        return word.lower() in self.alone

    def capitalized_share(self, word: str) -> float:
        """Of the notes with `word` in any case, the share that capitalize it."""
        lower = word.lower()
        return len(self.notes.get(lower, ())) / max(1, self.anyhow.get(lower, 0))

    def add(self, n: int, text: str) -> None:
        self.total += 1
        for word in set(_WORD.findall(text.lower())):
            self.anyhow[word] += 1
        seen: set[str] = set()
        found = list(_CAPITALIZED.finditer(text))
        for i, m in enumerate(found):
            word = m.group().lower()
            if m.start() > 0 and not _SENTENCE_END.search(text[: m.start()]):
                self.inside.add(word)
                before = i > 0 and not text[found[i - 1].end() : m.start()].strip()
                after = i + 1 < len(found) and not text[m.end() : found[i + 1].start()].strip()
                if not before and not after:
                    self.alone.add(word)
            if word not in seen:
                seen.add(word)
                self.notes[word].append(n)


class NameIndex:
    """Capitalized words of the current notes, owned by `store.notes` (read under its lock)."""

    def __init__(self, store: StoreBase) -> None:
        self.store = store
        self._index: _Index | None = None
        self._mark: tuple[int, int] | None = None  # the file's change mark when last checked

    def current(self) -> _Index:
        """The index, brought up to date with the file (a mark read when nothing changed)."""
        mark = self.store.change_mark()
        if self._index is not None and mark == self._mark:
            return self._index
        self._mark = mark
        # The same signature as the vectors' (`memory.vectors`): count(*) reads the small kind
        # index, max(n) the end of the key, the superseded count a partial index.
        row = self.store.one(
            "SELECT count(*) AS c, coalesce(max(n), 0) AS m,"
            " (SELECT count(*) FROM notes WHERE superseded_by IS NOT NULL) AS s FROM notes"
        )
        signature = (int(row["c"]), int(row["m"]), int(row["s"])) if row is not None else (0, 0, 0)
        index = self._index
        if index is not None and index.signature == signature:
            return index
        if (
            index is None
            or signature[2] != index.signature[2]
            or signature[0] != index.signature[0] + self._count_after(index.signature[1])
        ):
            index = _Index()  # nothing read yet, or notes deleted or superseded: read all
        for r in self.store.all(
            "SELECT n, text FROM notes WHERE n > ? AND superseded_by IS NULL ORDER BY n",
            [index.signature[1]],
        ):
            index.add(int(r["n"]), str(r["text"]))
        index.signature = signature
        self._index = index
        return index

    def _count_after(self, n: int) -> int:
        row = self.store.one("SELECT count(*) AS c FROM notes WHERE n > ?", (n,))
        return int(row["c"]) if row is not None else 0
