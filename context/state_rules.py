"""The rules that decide whether an utterance is a status question, and which one.

Text is normalized (`context.normalize`), then a cheap keyword pass proposes candidate
intents and anchored regular expressions over the whole remaining sentence decide.
Anchoring is what sends near misses to the model: "what is pending on me" is a status
question, "what did we decide about the pending invoice" is not, because the rest of that
sentence is not allowed by any rule. When no anchored rule fits, a sentence that gives an
order or asks about the world ("remind me to ...", "how do I ...", "what does X mean") is the
model's outright; any other goes to the classifier (`context.intents`), whose verdict says
whether the state path answers alone, is unsure (the model answers, from the same state), or
leaves it to the model. The slots (the day of a schedule question, the subject of a "what do
you remember about X") are read by rules either way. Questions about the user's own mood ("how
am I feeling lately?") are placed by their own anchored rules (`context.mood_rules`) before any
other, and read back what the user said (`Match.mood`); "how are you feeling" is about Annie
and is not one. "What do you call me?" is placed the same way (`context.user_name`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from context.intent_specs import BY_NAME, SPECS, Match
from context.mood_rules import mood_question
from context.normalize import normalize, plain_words
from context.state_arguments import argued, farewell, loose_argued, somewhere
from context.state_vocab import HOUR_WORD, INTENTS, Day, Intent, day_word
from context.user_name import name_question

if TYPE_CHECKING:
    from context.intents import Verdict

__all__ = ["INTENTS", "Day", "Intent", "Match", "Routed", "match", "normalize", "route"]


def candidates(core: str) -> list[Intent]:
    """Intents worth checking, in the specs' order: those a keyword of theirs is in."""
    return [spec.name for spec in SPECS if any(w in core for w in spec.keywords)]


class Classifier(Protocol):
    def decide(self, core: str, text: str = "") -> Verdict: ...


# Orders and questions about the world: never a question about the user's own state, whatever
# words they share with one. Orders are the model's to carry out with its tools.
_ELSEWHERE = re.compile(
    r"^(?:remind me (?:to|at|in|on|about|every|that|tomorrow|tonight)|set (?:a|an|the|my|up)"
    r"|add|put|create|make (?:a|me|it)|schedule (?:a|an|my|the)|cancel|delete|remove|clear"
    r"|snooze|mark|move|reschedule|postpone|push|complete|finish|book|call|text|send|email"
    r"|respond|reply|new (?:[a-z]+ )?list$"
    r"|message|play|turn|open|start|stop|note|take a note|save|remember (?:that|to|my|the|this)"
    r"|forget|decline|reject|why|explain|define|who invented|tell me about|history of"
    r"|how (?:do|does|can|should|could|would|did) (?:i|we|you|one|people|someone|it)"
    r"|how does \w+ work|what (?:does|do) .* mean|(?:what is|what are) (?:an?|the meaning) )\b"
)


# "Remind me of my twelve o'clock meeting by half eleven" asks for a reminder at a time, not
# the schedule read that "remind me of my meetings tomorrow" is. Read before normalizing, which
# takes "remind me of" as an opener.
_REMIND_AT = re.compile(
    r"\bremind me (?:of|about) (?:this|that|it)\b"
    r"|\bremind me (?:of|about) .+ (?:(?:by|at|before|around) (?:half |quarter )?"
    rf"{HOUR_WORD}\b|(?:an?|\d+|{HOUR_WORD}|half an?) (?:minutes?|hours?|days?)"
    r" (?:before|early|ahead|beforehand|in advance)"
    rf"|in (?:an?|\d+|{HOUR_WORD}) (?:minutes?|hours?))"
)


# Orders that a schedule or list rule would read first: a new list ("fresh list", "my new work
# schedule list"), and being told when a time comes ("let me know when it is ten", read in the
# plain words, since normalizing takes "let me know" as an opener).
_NEW_LIST = re.compile(r"^(?:(?:my|a) )?(?:new|fresh) (?:[a-z]+ ){0,3}list$")
_TELL_WHEN = re.compile(r"\b(?:let me know|tell me|alert me|notify me|ping me) when it is \w")
# A recommendation: what the user might enjoy is the model's to weigh, not a read of records
# ("upcoming events I might want to go to").
_RECOMMEND = re.compile(
    r"\b(?:i|we) (?:might|may|would|could) (?:want to|like to|enjoy|be interested in)"
    r" (?:go|attend|see|visit|check out|try)\b|\brecommend|\bworth (?:going|seeing|attending)\b"
)


def _reminder_asked(text: str) -> bool:
    """Whether `text` asks to be reminded of something at a time, or of "this" or "that": a
    command, never a read."""
    return _REMIND_AT.search(text.lower()) is not None


def _not_a_read(text: str, core: str) -> bool:
    """Orders and requests that some read's words would otherwise claim, checked before any
    rule: a reminder at a time, a new list, being told when a time comes, a recommendation, a
    sum, and hearing the last thing again (read in the plain words: normalizing drops "again" as a
    filler, "I need to hear again")."""
    plain = plain_words(text)
    return (
        _reminder_asked(text)
        or _NEW_LIST.search(core) is not None
        or _RECOMMEND.search(core) is not None
        or _ARITHMETIC.search(core) is not None
        or any(p.search(plain) is not None for p in (_TELL_WHEN, _SAY_AGAIN))
    )


# Sums: "what is ten times ten" (a recognizer's "nine time ten") holds a time read's words.
_NUMBER = (
    r"(?:\d+|zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen"
    r"|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty"
    r"|seventy|eighty|ninety|hundred|thousand)"
)
_ARITHMETIC = re.compile(
    rf"\b{_NUMBER} (?:times|time|multiplied by|divided by|plus|minus|squared|cubed)"
    rf"(?: {_NUMBER}|$)"
)


# Asking for a judgement ("what should I tackle first", "what would you do if you were me") or
# for something to repeat ("... every hour"): the model's to weigh or to set up with its tools,
# whatever status words the sentence holds. Status questions ask what is, once.
_JUDGEMENT = re.compile(
    r"\b(?:(?:what|which)(?: \w+)? (?:should|shall|would|do) (?:i|you) (?:do|tackle|start|begin"
    r"|pick|choose|prioriti[sz]e|focus on|work on|go for|get on with)(?: \w+)? (?:first|next)"
    r"|if you were me|in (?:what|which) order should i)\b"
)
_REPEAT = re.compile(
    r"\bevery (?:single )?(?:other |few |couple of |\d+ |two |three |five |ten |fifteen )?"
    r"(?:minutes?|hours?|days?|mornings?|evenings?|nights?|weeks?|months?|weekdays?|weekends?"
    r"|monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b"
)

# Asked to say the last thing again: the conversation's, whatever the last thing was.
_SAY_AGAIN = re.compile(
    r"\bwhat you (?:just )?(?:said|say|ve said|have said|told me)\b"
    r"|\bwhat did you (?:just )?say\b"
    r"|\b(?:hear|say|repeat) (?:(?:it|that|this|what) )?(?:again|once more)\b"
    r"|^(?:pardon|come again|sorry what)\b"
)


@dataclass(frozen=True)
class Routed:
    """How the state path placed one sentence: `match` when it answers; `how` says which
    stage decided ("rule", "classifier", "unsure", "elsewhere", "model"), `verdict` what the
    classifier made of it when it was asked."""

    match: Match | None
    how: str
    verdict: Verdict | None = None
    why: str = ""  # what turned it away, where a rule did after placing it


# Reads of what the user has on, which a place turns into a question about the world.
_AT_HOME: frozenset[Intent] = frozenset(["schedule", "agenda", "pending", "blocked", "list"])


def route(text: str, classifier: Classifier | None = None, *, loose: bool = True) -> Routed:
    """Where `text` goes (`_route`), except that what goes on at a place, asked of no one's
    own records ("events in Milan", "what's around me"), is the model's."""
    routed = _route(text, classifier, loose=loose)
    if routed.match is not None and routed.match.intent in _AT_HOME and somewhere(normalize(text)):
        why = f"what goes on at a place, not the user's {routed.match.intent}"
        return Routed(None, "elsewhere", routed.verdict, why)
    return routed


def _route(text: str, classifier: Classifier | None = None, *, loose: bool = True) -> Routed:
    """Where `text` goes: the anchored rules first, then, for a sentence that is neither an
    order nor a question about the world, the classifier. Only its "answer" band is
    answered; "unsure" and "model" go to the model. `loose=False` leaves out the rules for
    items named in words that may be about the world (`Match.loose`): the state path routes
    again so when no record holds the item."""
    core = normalize(text)
    if not core:
        return Routed(None, "model")
    if mood_question(core):
        return Routed(Match("remember", mood=True), "rule")
    if name_question(core):
        return Routed(Match("remember", name=True), "rule")
    if farewell(core) or _not_a_read(text, core):
        return Routed(None, "elsewhere")
    found = argued(core)
    if found is not None:
        day = day_of(found.day) if found.day else "upcoming"
        return Routed(
            Match(
                found.intent,
                day,
                item=found.item,
                within=found.within,
                place=found.place,
                alarms=found.alarms,
                date=found.date,
                loose=found.loose,
            ),
            "rule",
        )
    for intent in candidates(core):
        for rule in BY_NAME[intent].rules:
            m = rule.fullmatch(core)
            if m is not None:
                # Whether the question names the notes is read outside its subject: "what do
                # you know about the store hours" does not ask what Annie has stored.
                said = m.start("subject") if "subject" in m.re.groupindex else -1
                rest = core if said < 0 else core[:said] + " " + core[m.end("subject") :]
                return Routed(_found(intent, m.groupdict(), rest), "rule")
    # An item named without saying it is the user's ("when is physio"): last of the rules,
    # and answered only where a record holds it.
    named = loose_argued(core) if loose else None
    if named is not None:
        day = day_of(named.day) if named.day else "upcoming"
        return Routed(Match("find", day, item=named.item, within=named.within, loose=True), "rule")
    if elsewhere(core):
        return Routed(None, "elsewhere")
    if classifier is None:
        return Routed(None, "model")
    verdict = classifier.decide(core, text)
    if verdict.band != "answer" or verdict.intent is None:
        return Routed(None, "unsure" if verdict.band == "unsure" else "model", verdict)
    # The classifier's "remember" asks about the user: a named subject only the rules read.
    subject = "me" if verdict.intent == "remember" else None
    groups = {"day": day_word(core), "subject": subject}
    return Routed(_found(verdict.intent, groups, core), "classifier", verdict)


def elsewhere(core: str) -> bool:
    """Whether normalized `core` gives an order, asks about the world, asks for a judgement or
    for something to repeat, or to hear the last thing again."""
    return any(p.search(core) is not None for p in (_ELSEWHERE, _JUDGEMENT, _REPEAT, _SAY_AGAIN))


def match(text: str, classifier: Classifier | None = None) -> Match | None:
    """The status intent `text` asks for, or None when it is not the state path's to answer
    alone (`route` says why)."""
    return route(text, classifier).match


def day_of(day_text: str) -> Day:
    """A day asked about in words ("this week", "tonight") as the schedule reads it."""
    return (
        "overdue"
        if day_text in ("overdue", "past due")
        else "tomorrow"
        if day_text == "tomorrow"
        else "week"
        if "week" in day_text
        else "today"
        if day_text
        else "upcoming"
    )


def _found(intent: Intent, groups: dict[str, str | None], core: str) -> Match:
    day = day_of(groups.get("day") or "")
    subject = (groups.get("subject") or "").strip()
    if intent != "remember":
        return Match(intent, day)
    # Asked of the notes by name ("what notes do you have on X", "what have I told you about
    # X"): the notes answer even when they hold nothing. Otherwise X may be general knowledge,
    # and only notes about it make it a question about state.
    explicit = any(
        w in core
        for w in ("note", "memory", "told you", "tell you", "saved", "stored", "written", "wrote",
                  "write", "jot", "recorded", "logged", "on file", "on record", "i said", "i say",
                  "i mention")
    )  # fmt: skip
    # "About my allergies": the user's own things are not general knowledge, so the notes answer,
    # "nothing noted" included, rather than the model making something up.
    own = subject.split(" ", 1)[0] in ("my", "our", "mine")
    return Match(intent, day, subject=subject, needs_notes=not (explicit or own))
