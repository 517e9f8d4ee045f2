"""The rules that decide whether an utterance is a status question, and which one.

Text is normalized (lower case, contractions expanded, punctuation dropped, polite openers
and closers stripped), then a cheap keyword pass proposes candidate intents and anchored
regular expressions over the whole remaining sentence decide. Anchoring is what sends near
misses to the model: "what is pending on me" is a status question, "what did we decide
about the pending invoice" is not, because the rest of that sentence is not allowed by any
rule. A classifier may only add candidates; it never decides.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

Intent = Literal["approvals", "pending", "list", "schedule", "time", "date", "context"]
Day = Literal["today", "tomorrow", "upcoming"]


@dataclass(frozen=True)
class Match:
    intent: Intent
    day: Day = "upcoming"


_CONTRACTIONS = {
    "what's": "what is",
    "whats": "what is",
    "what're": "what are",
    "where's": "where is",
    "how's": "how is",
    "there's": "there is",
    "theres": "there is",
    "it's": "it is",
    "i've": "i have",
    "i'm": "i am",
    "don't": "do not",
    "dont": "do not",
    "doesn't": "does not",
    "isn't": "is not",
    "aren't": "are not",
    "who's": "who is",
    "anything's": "anything is",
    "to-do": "todo",
    "to-dos": "todos",
    "to do": "todo",
    "to dos": "todos",
}
_CONTRACTION_RE = re.compile(
    r"\b(" + "|".join(re.escape(k) for k in sorted(_CONTRACTIONS, key=len, reverse=True)) + r")\b"
)

_OPENERS = re.compile(
    r"^(?:(?:hey|hi|hello|ok|okay|so|um+|uh+|er+|annie|please|quick question|excuse me|"
    r"(?:can|could|would|will) you (?:please )?(?:tell|let) me|(?:can|could|would|will) you "
    r"(?:please )?(?:check|say)|(?:please )?tell me|do you know|i (?:want|would like|need) to know|"
    r"let me know|(?:please )?check|remind me of|just|and|but|also)\b ?)+"
)
_CLOSERS = re.compile(
    r"(?: ?\b(?:please|annie|thanks|thank you|right now|at the moment|currently|then|now|"
    r"for me|again|exactly|roughly|approximately))+$"
)

# Keyword pass: cheap candidates before the anchored rules (and the hook for a classifier).
_KEYWORDS: dict[Intent, tuple[str, ...]] = {
    # First: "anything waiting for my approval?" is also a pending question, and the answer
    # it needs names the waiting actions, not the tasks.
    "approvals": ("approv", "confirm", "sign off", "say yes"),
    "pending": (
        "pending",
        "waiting",
        "outstanding",
        "need",
        "blocking",
        "blocked",
        "await",
        "on me",
    ),
    "list": ("list", "task", "todo", "plate", "to do", "have to do", "need to do"),
    "schedule": (
        "schedule",
        "calendar",
        "agenda",
        "reminder",
        "today",
        "tomorrow",
        "tonight",
        "coming up",
        "next",
        "planned",
        "due",
    ),
    "time": ("time",),
    "date": ("date", "day", "today", "month", "year"),
    "context": ("context",),
}

_ME = r"(?:me|my (?:input|answer|reply|approval|decision|response|attention|go ahead|ok|okay))"
_ITEM = r"(?:tasks?|items?|things?|work|stuff|todos?|actions?|requests?)"
_PEND = r"(?:pending|waiting|outstanding|awaiting)"
_DAY = r"(?P<day>today|tomorrow|tonight|this (?:morning|afternoon|evening))"

_ASK = r"(?:approve|confirm|okay|ok|sign off on|say yes to)"
_APPROVAL = r"(?:approval|confirmation|ok|okay|go ahead|yes|sign off|sign-off)"
_SOME = r"(?:anything|something|any \w+|some \w+)"
# How a question about open items opens: "are there ...", "show me the ...".
_ASKING = r"(?:are there |is there |do i have |have i got |got )?"
_SHOWING = (
    r"(?:do i have |have i got |are there |show |list |read |give |what are )?(?:me )?"
    r"(?:any |the |my |all )?"
)

_RULES: dict[Intent, list[re.Pattern[str]]] = {
    "approvals": [
        re.compile(
            rf"{_ASKING}(?:{_SOME} )?(?:still )?"
            rf"(?:waiting|pending|awaiting|that needs?|needing|needs?|requiring|requires?)"
            rf"(?: (?:on|for))? my {_APPROVAL}"
        ),
        re.compile(
            rf"(?:what|which \w+) (?:is |are )?(?:still )?(?:waiting|pending|awaiting)"
            rf"(?: (?:on|for))? my {_APPROVAL}"
        ),
        re.compile(rf"(?:what|which \w+) (?:needs?|requires?) my {_APPROVAL}"),
        re.compile(
            rf"(?:what|which \w+|is there {_SOME}|are there any \w+|do i have {_SOME}|{_SOME})"
            rf" (?:do |should |must )?i (?:still )?(?:need to|have to|must|should|got to) {_ASK}"
        ),
        re.compile(rf"(?:is there |are there |do i have )?{_SOME} (?:for me )?to {_ASK}"),
        re.compile(
            rf"{_SHOWING}(?:open |pending |outstanding |waiting )?"
            r"(?:approvals?|approval requests?|confirmations?)"
            r"(?: (?:pending|waiting|open|outstanding|for me))?"
        ),
    ],
    "pending": [
        re.compile(
            rf"{_ASKING}(?:any|anything) "
            rf"(?:{_ITEM} )?(?:still )?{_PEND}(?: (?:on|for) {_ME})?"
        ),
        re.compile(rf"(?:{_ITEM} )?(?:still )?{_PEND} (?:on|for) {_ME}"),
        re.compile(rf"{_SHOWING}{_PEND} {_ITEM}"),
        re.compile(rf"(?:is anything|are any {_ITEM}) (?:still )?{_PEND}(?: (?:on|for) {_ME})?"),
        re.compile(
            rf"(?:what|which|how many) (?:{_ITEM} )?(?:is|are)(?: still)? {_PEND}"
            rf"(?: (?:on|for) {_ME})?"
        ),
        re.compile(
            rf"(?:what|which {_ITEM}|anything|does anything|do any {_ITEM}|is anything"
            rf"|is there anything|are there any {_ITEM}) (?:needs?|requires?|still needs?"
            rf"|waits? (?:on|for)|(?:is|are) waiting (?:on|for)|(?:is|are) blocked on"
            rf"|(?:is|are) pending on) {_ME}"
        ),
        re.compile(
            r"what do you need from me|do you need anything from me|what are you waiting on"
            r"|what are you waiting for|what am i blocking|am i blocking anything|what is on me"
            r"|is anything on me|what needs my attention|what needs me"
            r"|what do i need to (?:answer|approve|decide)"
        ),
    ],
    "list": [
        re.compile(
            r"what is (?:left |still )?on my (?:todo |task )?(?:list|plate)(?: (?:for )?today)?"
        ),
        re.compile(
            r"(?:what are|what is|list|show|show me|read|read me|give me|tell me) (?:all )?my"
            r" (?:open |current |active |remaining )?(?:tasks|todos|todo list|task list|list)"
        ),
        re.compile(r"(?:what|which) (?:open |current )?tasks (?:do i have|have i got)(?: open)?"),
        re.compile(
            r"how many (?:open |current )?tasks (?:do i have|have i got|are (?:there|open))"
        ),
        re.compile(
            r"what do i (?:still )?(?:have|need) todo(?: today)?"
            r"|what (?:else )?is on (?:the|my) list"
        ),
        re.compile(r"(?:my )?(?:open )?(?:tasks|todo list|task list|todos)|my list"),
    ],
    "schedule": [
        re.compile(
            rf"what is (?:on )?(?:my|the) (?:schedule|calendar|agenda|plan)(?: (?:for|on))? {_DAY}"
        ),
        re.compile(
            rf"(?:what is|what does) {_DAY}(?: s)? (?:schedule|agenda|calendar|plan)(?: look like)?"
        ),
        re.compile(
            rf"(?:what|anything) (?:do i have|have i got|is) (?:on |planned |scheduled )?"
            rf"(?:for )?{_DAY}"
        ),
        re.compile(
            rf"(?:do i have |are there |have i got )?any reminders"
            rf"(?: (?:for|on))?(?: {_DAY})?"
        ),
        re.compile(
            rf"(?:what are|what is|list|show|show me|read|read me) my (?:reminders|schedule|agenda)"
            rf"(?: (?:for|on))?(?: {_DAY})?"
        ),
        re.compile(rf"what reminders do i have(?: (?:for|on))?(?: {_DAY})?"),
        re.compile(rf"what is (?:happening|planned|scheduled|on|coming up)(?: (?:for|on))? {_DAY}"),
        re.compile(r"what is (?:next|coming up)(?: on my (?:schedule|calendar|agenda))?"),
        re.compile(rf"(?:what is|is anything|anything|what tasks are) due {_DAY}"),
        re.compile(rf"(?:my )?(?:schedule|agenda|reminders)(?: (?:for|on))?(?: {_DAY})?"),
    ],
    "time": [
        re.compile(r"what time is it|what is the time|(?:the )?time|do you have the time"),
        re.compile(r"what is the current time|(?:what is )?the time (?:right )?now"),
    ],
    "date": [
        re.compile(r"what is (?:the )?(?:date|day)(?: today)?|what is today s date|today s date"),
        re.compile(r"what day (?:is it|is today|of the week is it)|what is today"),
        re.compile(r"what (?:is the )?date is it(?: today)?|the date(?: today)?|date today"),
        re.compile(r"which day is (?:it|today)|what month is it|what year is it"),
    ],
    "context": [
        re.compile(
            r"how (?:full|big|large|much used) is (?:the |your |my |our )?context(?: window)?"
        ),
        re.compile(
            r"how much (?:of )?(?:the |your |our )?context(?: window)? (?:is |have you |have we )?"
            r"(?:left|used|remaining|in use|free|available)"
        ),
        re.compile(
            r"(?:what is )?(?:the |your |our )?context (?:window )?"
            r"(?:usage|use|size|fill|level|fullness)"
        ),
        re.compile(
            r"how much (?:room|space) is (?:left )?in (?:the |your |our )?context(?: window)?"
        ),
    ],
}


def normalize(text: str) -> str:
    """Lower case, contractions expanded, punctuation dropped, fillers stripped."""
    low = text.lower().replace("\u2019", "'").replace("\u2018", "'").strip()
    low = _CONTRACTION_RE.sub(lambda m: _CONTRACTIONS[m.group(1)], low)
    low = re.sub(r"[^a-z0-9' ]+", " ", low)
    low = low.replace("'", " ")
    low = re.sub(r"\s+", " ", low).strip()
    # Contractions again: "to-do" became "to do" only once the hyphen was dropped.
    low = _CONTRACTION_RE.sub(lambda m: _CONTRACTIONS[m.group(1)], low)
    prev = None
    while prev != low:
        prev = low
        low = _OPENERS.sub("", low).strip()
        low = _CLOSERS.sub("", low).strip()
    return low


def candidates(core: str, extra: Iterable[Intent] = ()) -> list[Intent]:
    """Intents worth checking: keyword hits, plus any a classifier proposes."""
    found: list[Intent] = [i for i, words in _KEYWORDS.items() if any(w in core for w in words)]
    for intent in extra:
        if intent not in found and intent in _RULES:
            found.append(intent)
    return found


def match(text: str, extra: Iterable[Intent] = ()) -> Match | None:
    """The status intent `text` asks for, or None when it is not a status question."""
    core = normalize(text)
    if not core:
        return None
    for intent in candidates(core, extra):
        for rule in _RULES[intent]:
            m = rule.fullmatch(core)
            if m is None:
                continue
            day_text = m.groupdict().get("day") or ""
            day: Day = "tomorrow" if day_text == "tomorrow" else "today" if day_text else "upcoming"
            return Match(intent, day)
    return None
