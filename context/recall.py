"""Per-turn recall: the notes related to what the user just said, for the evidence lane.

Before each model turn the request is run through the store's hybrid search, and the best
few notes whose cosine similarity to it reaches a floor become evidence items. The floor is
what keeps this from padding every turn with the nearest note: fused search scores are
ranks, so only the similarity says whether a note is relevant at all. With all-MiniLM-L6-v2,
paraphrased questions about a note score about 0.4-0.9 and unrelated requests ("tell me a
joke", "set a timer") under 0.32. The assembler then skips notes already in view (the
briefing, earlier evidence) and keeps the lane within its budget.

A question tied to a time ("what did I tell you last Tuesday about the boiler?", "before the
trip") is searched without its time phrase, first among the notes written in the window it
names (`context/when.py`; an event is dated by the note that mentions it), and those notes
rank ahead of any from other times, which only fill the places left. So the Tuesday note wins
over a newer one on the same subject, and a slightly wrong date still finds the note.

A question that names someone or something the notes mention ("what should I pour for
Mia?") looks first among the notes that mention it, and ranks those by what the question asks
about that person rather than by the name: the name's own direction is taken out of the
question's and each note's embedding before they are compared. A name weighs so much in a
short sentence's embedding that otherwise every note about Mia scores alike, and "Mia is
coming over on Friday for dinner" outranks "Mia always asks for rooibos".

The lane is filled by maximal marginal relevance: each next note is the best by score less a
share of its similarity to the notes already taken, so five places do not go to five
rewordings of one kind of note ("coming over on Tuesday", "... on Friday", ...) while the
note asked about waits sixth.

Whether the lane holds what was asked or only notes near it is judged last
(`context.certainty`): when it is not sure, each note says it is only related, and the model
uses such a note only when it says what was asked.
"""

from __future__ import annotations

import logging
import re
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

import numpy as np
import numpy.typing as npt

from config import Settings
from context.certainty import inside, sure, windowed, without
from context.inputs import Evidence
from context.when import When, parse
from memory.episodes import ROLES, EpisodeInfo
from memory.fts import STOPWORDS
from memory.rows import EPISODE_KINDS, Hit, from_iso
from memory.search import EmbedderLike
from memory.store import Store

log = logging.getLogger(__name__)

# Added to the fused score of a note written in the window the question names, so it ranks
# (and the evidence lane, which orders by score, admits it) ahead of every note from another
# time; scores are at most 1 + LEXICAL_WEIGHT, so a bonus over that would do.
IN_WINDOW_BONUS = 2.0
# Notes are ordered by cosine similarity plus this share of their relative bm25 (see
# `Notes.search`): enough to lift an exact name or number, too little to outvote the meaning.
LEXICAL_WEIGHT = 0.1
# A note this close (cosine) to one already recalled, none of whose words the recalled note
# lacks, adds nothing the lane does not hold: it is passed over, and the place goes to the next
# note. Closeness alone is not enough: "Mia is coming over on Tuesday for dinner" and "... on
# Friday ..." score above 0.9 and differ in the one word that matters, and recalling only one
# of them would be a confident wrong answer.
NEAR_DUPLICATE = 0.9
_WORD = re.compile(r"[a-z0-9]+")
# How many more candidates a search takes to make up for the asking conversation's own
# episodes, which it leaves out.
SKIP_DEPTH = 40
# Words a spoken question starts with when no question mark was written down.
# fmt: off
_ASKING = frozenset([
    "what", "when", "where", "who", "whom", "whose", "why", "how", "which", "is", "are", "do",
    "does", "did", "can", "could", "would", "will", "should", "shall", "have", "has", "was",
    "were",
])
# fmt: on
_SENTENCES = re.compile(r"[^.!?]+[.!?]*")
# Words of statement, besides its questions, that make a turn tell something.
TELLS = 4
# The cosine at which a turn that asks is the same question asked again.
SAME_QUESTION = 0.8
# The turns shown around a recalled turn of a conversation, before and after it.
EXCERPT_BEFORE = 0
EXCERPT_AFTER = 1
# How far under the floor a note written in an event's window may score.
EVENT_FLOOR_MARGIN = 0.1
# Candidates searched per place in the lane, so passing over near-duplicates still fills it.
POOL = 3
# Maximal marginal relevance: the share of a candidate's highest similarity to a note already
# in the lane that is taken off its score. At 0.5 a rewording (similarity 0.95) loses about
# 0.48, enough for a different note about the same person to pass it; a note that is the other
# answer ("... on Friday" beside "... on Tuesday") still passes a weaker, unrelated one.
DIVERSITY = 0.5
# Added to the score of a note that mentions a name the question says: below the time
# window's bonus (a named note from another time comes after the window's notes), above
# every plain score (at most 1 + LEXICAL_WEIGHT).
NAMED_BONUS = 1.2
# How far under the floor a note that says the name asked about may score ("When should I
# send Ines a card for turning a year older?" is 0.33 from "Ines was born on October 21.").
NAMED_FLOOR_MARGIN = 0.1
# A word the question says in lower case is a name when at least this share of the notes
# that have it capitalize it.
CAPITALIZED_SHARE = 0.8
# Notes read per name (the newest): more than any one person's notes in a large memory.
NAMED_POOL = 400
_WORDS = re.compile(r"\b\w[\w'\u2019-]*")
_SENTENCE_START = re.compile(r"(?:^|[.!?]\s+)$")
# Capitalized at the start of a sentence, never a name there ("Will" is one elsewhere).
# fmt: off
_NOT_NAMES = frozenset([
    "a", "after", "also", "and", "any", "anything", "are", "before", "but", "can", "could",
    "did", "do", "does", "during", "for", "had", "has", "have", "how", "i", "if", "in", "is",
    "it", "last", "may", "might", "must", "on", "or", "remind", "shall", "should", "so", "tell",
    "that", "the", "then", "there", "this", "was", "what", "when", "where", "which", "who",
    "whom", "whose", "why", "will", "with", "would", "yes", "yesterday", "you",
])
# Days and months are times (`context.when` reads them), never names, wherever they stand.
_NEVER_NAMES = frozenset([
    "i", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
    "january", "february", "march", "april", "may", "june", "july", "august", "september",
    "october", "november", "december",
])
# fmt: on
# The embedding of each name said alone, per embedder (computed with the question's).
_NAME_VECTORS: weakref.WeakKeyDictionary[object, dict[str, npt.NDArray[np.float32]]] = (
    weakref.WeakKeyDictionary()
)


def recall(
    store: Store,
    text: str,
    settings: Settings,
    embedder: Callable[[], EmbedderLike | None],
    now: datetime | None = None,
    session_id: str | None = None,
) -> list[Evidence]:
    """Evidence for `text`, best first; empty when recall is off, nothing is stored, or it fails.

    `embedder` is asked for only when there are notes, so a store without any never loads
    one. Blocking (it embeds the query): call it from a worker thread on the voice path. A
    failure is logged and costs only the recall, never the turn. `now` (aware; the machine's
    local time by default) is what "yesterday" and "last Tuesday" count back from.
    `session_id`: the conversation asking, whose own episodes are left out: they are in its
    conversation lane or its checkpoint already, and the question is never its own evidence.
    """
    ctx = settings.context
    if ctx.evidence_hits <= 0 or not text.strip():
        return []
    try:
        if not store.episodes.any_outside(session_id):
            return []
        model = store.notes.embedder or embedder()
        if model is None:
            return []  # no similarity, no relevance floor: search_memory still works
        asked = Asked.of(store, text, now or datetime.now().astimezone())
        vector, focus = asked.embed(model)
        skip = store.episodes.in_session(session_id) if session_id else set()
        hits = asked.search(
            store,
            vector,
            focus,
            limit=ctx.evidence_hits,
            floor=ctx.evidence_min_similarity,
            skip=skip,
        )
        vectors = store.notes.embeddings([h.id for h in hits], vector.size) if hits else None
        certain = vectors is not None and sure(
            hits,
            vectors,
            vector,
            asked.directions(model),
            asked.when,
            said=hits[0].kind in EPISODE_KINDS,
        )
        said = store.episodes.info([h.id for h in hits if h.kind in EPISODE_KINDS])
        top = said.get(hits[0].id) if hits else None
        if certain and (not spoken_by_asked(top, asked.names) or (top and is_question(hits[0]))):
            certain = False
    except Exception as exc:
        log.warning("recall for the evidence lane failed: %s", exc)
        return []
    found = [_evidence(hit, said.get(hit.id), text, certain) for hit in hits]
    try:
        return _in_context(store, found)
    except Exception as exc:
        log.warning("the turns around recalled episodes could not be read: %s", exc)
        return found


def spoken_by_asked(said: EpisodeInfo | None, names: list[str]) -> bool:
    """Whether a recalled turn can answer a question about `names`: a turn another named
    person said is about that person. Asked "What did Caroline realize after her charity
    race?", Melanie's "the charity race made me realize ..." is the nearest turn of all, and
    handed over as the answer it would be a confident wrong one. Notes, the user's and
    Annie's own words, and questions that name no one are not judged here."""
    if said is None or not names or said.speaker.lower() in ROLES or not said.speaker:
        return True
    return said.speaker.lower() in {n.lower() for n in names}


def is_question(hit: Hit) -> bool:
    """Whether a turn asks rather than tells: a question states nothing, so it is never the
    sure answer to one, even to itself asked again in a later conversation."""
    words = hit.text.split(": ", 1)[-1] if hit.source.lower() not in ROLES else hit.text
    sentences = [p.strip() for p in _SENTENCES.findall(words) if p.strip()]
    if not sentences:
        return False
    if not any(p.endswith("?") for p in sentences):
        # Spoken words written down without a question mark: asked by their first word.
        return len(sentences) == 1 and sentences[0].split(" ", 1)[0].lower() in _ASKING
    # "Wow! What got you into running?" asks; "I ran a race. And you?" tells.
    told = [p for p in sentences if not p.endswith("?")]
    return sum(len(p.split()) for p in told) < TELLS


def _in_context(store: Store, found: list[Evidence]) -> list[Evidence]:
    """Each recalled turn with the turns just before and after it in its conversation, as one
    excerpt: an answer is often the turn after the one that names the subject ("How's the
    running going?" / "Great, it clears my head"). A turn an earlier excerpt already shows
    is not shown twice: its excerpt is dropped, and its neighbours go with the earlier one."""
    shown: set[str] = set()
    out: list[Evidence] = []
    for ev in found:
        if ev.kind != "episode":
            out.append(ev)
            continue
        if ev.id in shown:
            continue
        turns = [
            t
            for t in store.episodes.around(ev.id, EXCERPT_BEFORE, EXCERPT_AFTER)
            if t.id not in shown
        ]
        if not turns:
            out.append(ev)
            continue
        shown.update(t.id for t in turns)
        text = "\n".join(_line(t.speaker, t.text) for t in turns)
        out.append(replace(ev, text=text, shows=tuple(t.id for t in turns)))
    return out


def _line(speaker: str, text: str) -> str:
    """One turn of an excerpt: a named speaker's episode carries the name already."""
    return {"user": f"You: {text}", "annie": f"Annie: {text}"}.get(speaker, text)


def _evidence(hit: Hit, said: EpisodeInfo | None, query: str, certain: bool) -> Evidence:
    """A recalled row as evidence; what was said says who said it."""
    if said is None:
        kind, source_type, body = "note", f"{hit.kind} note", hit.text
        if hit.kind == "note":
            source_type = "note"
    else:
        kind = said.kind
        source_type = "conversation summary" if kind == "summary" else "conversation"
        body = hit.text if kind == "summary" else _line(said.speaker, hit.text)
    return Evidence(
        id=hit.id,
        text=body,
        source_type=source_type,
        score=hit.score,
        observed_at=from_iso(hit.timestamp).timestamp(),
        query=query,
        certain=certain,
        kind=kind,
        session_id=said.session_id if said is not None else "",
        speaker=said.speaker if said is not None else "",
    )


@dataclass(frozen=True)
class Asked:
    """A question read for recall: its words without the time phrase, the time, the names."""

    query: str
    when: When | None
    names: list[str]
    # Words said as names that the notes do not (yet) use as one ("Maya" only ever starting
    # a note): not searched by, but their direction is taken out when judging certainty.
    subjects: list[str] = field(default_factory=list)

    @classmethod
    def of(cls, store: Store, text: str, now: datetime) -> Asked:
        when = parse(text, now)
        query = when.rest if when is not None and when.rest.strip() else text
        if when is not None and when.anchor:
            when = _dated(store, when)  # "before the trip": dated once, for all that reads it
        names = named(store, query)
        others = [w for w, inside in _said(query) if inside and w not in names]
        return cls(query, when, names, others)

    def embed(
        self, model: EmbedderLike
    ) -> tuple[npt.NDArray[np.float32], dict[str, npt.NDArray[np.float32]]]:
        """The query's embedding and each name's, in one call; names are kept per embedder.
        The subjects are embedded in the same call, for `directions`."""
        known = _NAME_VECTORS.setdefault(model, {})
        new = [n for n in dict.fromkeys([*self.names, *self.subjects]) if n not in known]
        vectors = model.embed([self.query, *new])
        for name, vector in zip(new, vectors[1:], strict=True):
            if len(known) >= 1024:
                known.clear()
            known[name] = vector
        return vectors[0], {n: known[n] for n in self.names}

    def directions(self, model: EmbedderLike) -> dict[str, npt.NDArray[np.float32]]:
        """Each name's and subject's embedding (after `embed`, which made them)."""
        known = _NAME_VECTORS.setdefault(model, {})
        return {w: known[w] for w in [*self.names, *self.subjects] if w in known}

    def search(
        self,
        store: Store,
        vector: npt.NDArray[np.float32],
        focus: dict[str, npt.NDArray[np.float32]],
        *,
        limit: int,
        floor: float,
        skip: set[str] | None = None,
        written_only: bool = False,
    ) -> list[Hit]:
        return search(
            store,
            self.query,
            vector,
            self.when,
            limit=limit,
            floor=floor,
            focus=focus,
            skip=skip,
            written_only=written_only,
        )


def named(store: Store, query: str) -> list[str]:
    """The names `query` says, in the order said: words the notes capitalize within a
    sentence (`memory.names`), not a question word at the start of one of the query's
    sentences. Case in the query does not matter, so a typed "what does ines drink" finds
    Ines as a transcript's "Ines" would."""
    words = [word for word, _ in _said(query)]
    if not words:
        return []
    found, _ = store.notes.names_among(words)
    out: list[str] = []
    for word in words:
        count, capitalized = found.get(word.lower(), (0, 0.0))
        # Said in lower case, a word is a name only where the notes nearly always capitalize
        # it: "time" is in "In Our Time", and far more often in "opening time".
        if count and (word[0].isupper() or capitalized >= CAPITALIZED_SHARE):
            out.append(word[0].upper() + word[1:])
    return out


def _said(query: str) -> list[tuple[str, bool]]:
    """The words of `query` that may be names, each once, and whether it is capitalized
    inside a sentence (as a transcript writes a name)."""
    words: list[tuple[str, bool]] = []
    for match in _WORDS.finditer(query):
        word = re.sub(r"['\u2019]s$", "", match.group())
        lower = word.lower()
        if len(word) < 2 or lower in _NEVER_NAMES:
            continue
        first = _SENTENCE_START.search(query[: match.start()]) is not None
        # Capitalized inside a sentence, even "Will" is a name; elsewhere a common word is not.
        if (first or not word[0].isupper()) and (lower in STOPWORDS or lower in _NOT_NAMES):
            continue
        if lower not in (w.lower() for w, _ in words):
            words.append((word, not first and word[0].isupper()))
    return words


def search(
    store: Store,
    query: str,
    vector: npt.NDArray[np.float32],
    when: When | None,
    *,
    limit: int,
    floor: float,
    focus: dict[str, npt.NDArray[np.float32]] | None = None,
    skip: set[str] | None = None,
    written_only: bool = False,
) -> list[Hit]:
    """The notes for `query` above the similarity floor, those written within `when` (an
    event's window already dated, `Asked.of`) first, then those mentioning a name in `focus`
    (name: its embedding), chosen by maximal marginal relevance with restatements of a better
    note passed over. Rows in `skip` (the asking conversation's own episodes) are left out;
    the pool is searched that much deeper, since they are the nearest rows of all.
    `written_only`: notes only, no episodes of what was said."""
    skip = skip or set()
    pool = POOL * limit + min(len(skip), SKIP_DEPTH)
    hits = _ranked(store, query, vector, when, limit=pool, floor=floor, written_only=written_only)
    if focus:
        hits = _with_named(store, hits, vector, when, focus, floor, pool)
    kept = [h for h in hits if h.id not in skip]
    if written_only:
        kept = [h for h in kept if h.kind not in EPISODE_KINDS]
    else:
        kept = _said_worth_showing(store, kept, vector)
    return _distinct(store, kept, limit)


def _said_worth_showing(
    store: Store, hits: list[Hit], vector: npt.NDArray[np.float32]
) -> list[Hit]:
    """`hits` without the turns that asked this same question before: a question being asked
    is never evidence for itself, in this conversation (left out by session) or a later one
    ("What is the capital of France?" asked every week). The answer it got is a turn of its
    own, recalled on its own merit."""
    asked = [h for h in hits if h.kind == "episode" and is_question(h)]
    if not asked:
        return hits
    cosine = store.notes.embeddings([h.id for h in asked], vector.size) @ vector
    dropped = {h.id for h, c in zip(asked, cosine, strict=True) if c >= SAME_QUESTION}
    return [h for h in hits if h.id not in dropped]


def _with_named(
    store: Store,
    hits: list[Hit],
    vector: npt.NDArray[np.float32],
    when: When | None,
    focus: dict[str, npt.NDArray[np.float32]],
    floor: float,
    limit: int,
) -> list[Hit]:
    """`hits` with the notes that mention a focused name added or lifted by `NAMED_BONUS`,
    ranked among themselves by the question's meaning with the name's direction taken out."""
    scored = {h.id: h for h in hits}
    in_window = windowed(when)
    for name, direction in focus.items():
        ids = store.notes.mentioning(name)[-NAMED_POOL:]
        if not ids:
            continue
        matrix = store.notes.embeddings(ids, vector.size)
        cosine = matrix @ vector
        aspect = without(matrix, direction) @ without(vector[None, :], direction)[0]
        # The name alone does not make a note relevant: the plain similarity holds the floor,
        # lowered by a little for a note that says the name asked about.
        least = floor - NAMED_FLOOR_MARGIN
        passing = [(i, float(a)) for i, c, a in zip(ids, cosine, aspect, strict=True) if c >= least]
        if not in_window:  # only the best can place, so only they are read
            passing = sorted(passing, key=lambda p: -p[1])[:limit]
        for hit in store.notes.scored(passing):
            bonus = NAMED_BONUS + (IN_WINDOW_BONUS if inside(hit, when) else 0.0)
            score = hit.score + bonus
            if hit.id not in scored or scored[hit.id].score < score:
                scored[hit.id] = replace(hit, score=score)
    return sorted(scored.values(), key=lambda h: -h.score)[:limit]


def _distinct(store: Store, hits: list[Hit], limit: int) -> list[Hit]:
    """Up to `limit` of `hits` by maximal marginal relevance, restatements passed over."""
    if len(hits) <= 1:
        return hits[:limit]
    vectors = store.notes.embeddings([h.id for h in hits])
    similar = vectors @ vectors.T
    words = [set(_WORD.findall(h.text.lower())) for h in hits]
    left = list(range(len(hits)))
    kept: list[int] = []
    while left and len(kept) < limit:
        best = max(
            left,
            key=lambda i: (
                hits[i].score - DIVERSITY * max((float(similar[i, k]) for k in kept), default=0.0)
            ),
        )
        left.remove(best)
        close = [k for k in kept if float(similar[best, k]) >= NEAR_DUPLICATE]
        if not any(words[best] <= words[k] for k in close):
            kept.append(best)
    return [hits[i] for i in kept]


def _ranked(
    store: Store,
    query: str,
    vector: npt.NDArray[np.float32],
    when: When | None,
    *,
    limit: int,
    floor: float,
    written_only: bool = False,
) -> list[Hit]:
    if when is None or not windowed(when):
        return store.notes.search(
            query,
            limit=limit,
            vector=vector,
            min_similarity=floor,
            lexical_weight=LEXICAL_WEIGHT,
            written_only=written_only,
        )
    within = store.notes.search(
        query,
        since=when.since,
        until=when.until,
        limit=limit,
        vector=vector,
        min_similarity=floor - (EVENT_FLOOR_MARGIN if when.event else 0.0),
        lexical_weight=LEXICAL_WEIGHT,
        written_only=written_only,
    )
    hits = [replace(h, score=h.score + IN_WINDOW_BONUS) for h in within]
    if len(hits) < limit:
        seen = {h.id for h in hits}
        others = store.notes.search(
            query,
            limit=limit + len(hits),
            vector=vector,
            min_similarity=floor,
            lexical_weight=LEXICAL_WEIGHT,
            written_only=written_only,
        )
        hits += [h for h in others if h.id not in seen][: limit - len(hits)]
    return hits


def _dated(store: Store, when: When) -> When | None:
    """The window of "before the trip": the trip is dated by the note that best matches it."""
    found = store.notes.search_fts(when.anchor, limit=1)
    if not found:
        return None
    at = from_iso(found[0].timestamp)
    # "after the move" starts after the note about the move, which is not an answer itself.
    return when.bounded(at if when.relation == "before" else at + timedelta(microseconds=1))
