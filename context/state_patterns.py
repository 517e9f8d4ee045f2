"""The anchored patterns of the status questions: a keyword pass per intent, then the regular
expressions that must match the whole normalized sentence (`context.state_rules` routes with
them). A sentence no pattern allows is not answered by a rule, whatever words it shares with
one: that is what sends near misses to the model.
"""

from __future__ import annotations

import re

from context.state_vocab import Intent

# Keyword pass: cheap candidates before the anchored rules (and the hook for a classifier).
KEYWORDS: dict[Intent, tuple[str, ...]] = {
    # First: "anything waiting for my approval?" is also a pending question, and the answer
    # it needs names the waiting actions, not the tasks.
    "approvals": ("approv", "confirm", "sign off", "say yes", "my ok", "go ahead", "say so"),
    # Before "pending": "what is waiting on someone else" is about others, not the user.
    "blocked": ("block", "stuck", "held up", "stalled", "waiting", "pending", "working on"),
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
        "week",
        "overdue",
        "look like",
        "my day",
    ),
    "time": ("time",),
    "date": ("date", "day", "today", "month", "year"),
    "context": ("context", "memory"),
    "remember": ("remember", "recall", "know about", "told you", "tell you", "notes", "memory",
                 "saved", "noted", " on ", "say about", "about me", "about my", "learn", "written",
                 "wrote", "stored", "kept", "keep", "record", "file", "picked up", "gathered",
                 "know of", "you know", "about"),
}  # fmt: skip

_ME = r"(?:me|my (?:input|answer|reply|approval|decision|response|attention|go ahead|ok|okay))"
_ITEM = r"(?:tasks?|items?|things?|work|stuff|todos?|actions?|requests?)"
_PEND = r"(?:pending|waiting|outstanding|awaiting)"
_DAY = (
    r"(?P<day>today|tomorrow|tonight|this (?:morning|afternoon|evening|week)|my week|the week"
    r"|my day)"
)
_BLOCKED = r"(?:blocked|stuck|held up|stalled)"
_OTHERS = r"(?:someone else|somebody else|others|other people|anyone else|you)"
# The thing a "remember" question names: a few words, never a bare time ("about yesterday"),
# and never one ending on a time ("about the plumber yesterday" asks what was said when).
_THING = (
    r"(?P<subject>(?!(?:today|tomorrow|yesterday|tonight)$)(?!(?:file|record)(?: |$))"
    r"[a-z0-9][a-z0-9 ]{0,60}?"
    r"(?<!yesterday)(?<!earlier)(?<!today)(?<!last week)(?<!this morning))"
)

# How Annie came to hold something about a subject: "what have you noted / learned / got on
# file about me". Only questions: "note that ..." and "remember that ..." are orders.
_KEPT = (
    r"(?:noted(?: down)?|learned|learnt|written(?: down)?|wrote(?: down)?|write down|jotted down"
    r"|note down|jot down|saved|save|stored|store|kept|keep|recorded|record|logged|log"
    r"|picked up|pick up|gathered|gather|collected|found out|find out|figured out|learn"
    r"|remembered|memori[sz]ed|(?:got|have|keep)(?: \w+)? (?:on file|on record|in your notes"
    r"|noted|saved|stored|written down|in memory|down))"
)
_HOLD = rf"(?:{_KEPT}|have|got|know|remember|recall)"
_SO_FAR = r"(?: so far| yet| by now| until now| up to now| over time)?"

_ASK = r"(?:approve|confirm|okay|ok|sign off on|say yes to)"
_APPROVAL = r"(?:approval|confirmation|ok|okay|go ahead|yes|sign off|sign-off|say so)"
_SOME = r"(?:anything|something|any \w+|some \w+)"
# How a question about open items opens: "are there ...", "show me the ...".
_ASKING = r"(?:are there |is there |do i have |have i got |got )?"
_SHOWING = (
    r"(?:do i have |have i got |are there |show |list |read |give |what are )?(?:me )?"
    r"(?:any |the |my |all )?"
)

RULES: dict[Intent, list[re.Pattern[str]]] = {
    "approvals": [
        re.compile(
            rf"{_ASKING}(?:{_SOME} )?(?:still )?"
            rf"(?:waiting|pending|awaiting|that needs?|needing|needs?|requiring|requires?)"
            rf"(?: (?:on|for))? my {_APPROVAL}"
        ),
        re.compile(
            rf"(?:what|(?:what|which) \w+) (?:is |are )?(?:still )?(?:waiting|pending|awaiting)"
            rf"(?: (?:on|for))? my {_APPROVAL}"
        ),
        re.compile(rf"(?:what|(?:what|which) \w+) (?:needs?|requires?) my {_APPROVAL}"),
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
    "blocked": [
        re.compile(rf"(?:what|which {_ITEM}|what {_ITEM}) (?:is|are) (?:still )?{_BLOCKED}"),
        re.compile(rf"(?:is|are) (?:anything|any {_ITEM}|there any {_ITEM}) (?:still )?{_BLOCKED}"),
        re.compile(
            rf"(?:is there |are there |do i have )?(?:any(?:thing)? )?{_BLOCKED}(?: {_ITEM})?"
        ),
        re.compile(
            rf"(?:show|list|read|show me|read me|give me) (?:the |my |all )?{_BLOCKED} {_ITEM}"
        ),
        re.compile(
            r"(?:what|who) (?:am i|are we) (?:still )?waiting (?:on|for)"
            r"(?: from (?:others|other people|anyone|someone|anybody))?"
        ),
        re.compile(
            rf"(?:what|what {_ITEM}|anything|is anything|is there anything) "
            rf"(?:is |are )?(?:still )?(?:waiting|pending) (?:on|for|with) {_OTHERS}"
        ),
        re.compile(r"what are you (?:waiting on|working on(?: for me)?)"),
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
            r"|what are you waiting for|what am i blocking|am i blocking anything"
            r"|what is (?:still )?on me|is anything on me|what needs my attention|what needs me"
            r"|what do i need to (?:answer|approve|decide)"
            r"|is there anything (?:that )?i (?:still )?(?:need|have) todo(?: today)?"
            r"|what do i (?:still )?(?:need|have) to take care of(?: today)?"
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
            rf"(?:do i have |are there |is there |have i got )?any (?:pending |upcoming )?"
            rf"(?:reminders?|appointments?|meetings?)(?: (?:for|on))?(?: {_DAY})?"
        ),
        re.compile(
            rf"(?:do i have|have i got|is there) anything (?:on |planned |scheduled |due )?"
            rf"(?:for |on )?{_DAY}"
        ),
        re.compile(r"what (?:do i have|have i got|is) coming up(?: next)?"),
        re.compile(
            rf"(?:what are|what is|list|show|show me|read|read me) my (?:reminders|schedule|agenda)"
            rf"(?: (?:for|on))?(?: {_DAY})?"
        ),
        re.compile(rf"what reminders do i have(?: (?:for|on))?(?: {_DAY})?"),
        re.compile(rf"what is (?:happening|planned|scheduled|on|coming up)(?: (?:for|on))? {_DAY}"),
        re.compile(r"what is (?:next|coming up)(?: on my (?:schedule|calendar|agenda))?"),
        re.compile(rf"(?:what is|is anything|anything|what tasks are) due {_DAY}"),
        re.compile(
            r"(?:what is|what are|is anything|is there anything|anything|any|which tasks are"
            r"|what tasks are|are any tasks|do i have anything) (?:still )?"
            r"(?P<day>overdue|past due)(?: tasks| items| reminders)?"
        ),
        re.compile(rf"(?:my )?(?:schedule|agenda|reminders)(?: (?:for|on))?(?: {_DAY})?"),
        re.compile(rf"(?:(?:what|how) does {_DAY} look(?: like)?)"),
        re.compile(rf"how is {_DAY} looking"),
    ],
    "time": [
        re.compile(r"what time is it|what is the time|(?:the )?time|do you have the time"),
        re.compile(r"what is the current time|(?:what is )?the time (?:right )?now"),
        re.compile(r"what time it is(?: now)?"),
    ],
    "date": [
        re.compile(r"what is (?:the )?(?:date|day)(?: today)?|what is today s date|today s date"),
        re.compile(r"what day (?:is it|is today|of the week is it)(?: today)?|what is today"),
        re.compile(r"what (?:is the )?date is it(?: today)?|the date(?: today)?|date today"),
        re.compile(r"which day is (?:it|today)|what month is it|what year is it"),
    ],
    "remember": [
        re.compile(
            rf"(?:what (?:do|did|can) you|(?:remind me )?what you|do you|anything you) "
            rf"(?:remember|recall|know)"
            rf"(?: anything)? (?:about|of|regarding|on) {_THING}{_SO_FAR}"
        ),
        re.compile(
            rf"(?:(?:remind|tell) me )?(?:what|what else) (?:(?:have|did) i |i )"
            rf"(?:told|tell|said to|say to|mentioned to|mention to) you about {_THING}"
        ),
        re.compile(rf"have i (?:told|said to) you anything about {_THING}"),
        re.compile(
            rf"(?:do you remember |(?:remind|tell) me )?what (?:did |have )?i "
            rf"(?:said|say|mentioned|mention) about {_THING}"
        ),
        re.compile(
            rf"(?:what|which) (?:notes|info|information) (?:do you have|have you got)"
            rf" (?:on|about) {_THING}"
        ),
        re.compile(rf"(?:do you have )?any notes (?:on|about) {_THING}"),
        re.compile(
            rf"(?:what is|anything|is there anything) in (?:your|my) (?:notes|memory) "
            rf"about {_THING}"
        ),
        re.compile(
            rf"what (?:do you have|have you got)(?: (?:saved|noted|written down))? (?:on|about) "
            rf"{_THING}"
        ),
        re.compile(rf"what is (?:saved|noted|written down) (?:on|about) {_THING}"),
        re.compile(rf"what do (?:my|your) notes say about {_THING}"),
        re.compile(
            rf"(?:(?:tell|show|read|remind) me |read back |read out )?"
            rf"(?:what|what else|anything|how much|what things|what details|what facts"
            rf"|what info|what information|what sort of things) (?:have|ve|did|do) you "
            rf"(?:{_KEPT}|reckon you know|think you know|actually know|really know)"
            rf" (?:about|on|of|regarding) {_THING}{_SO_FAR}"
        ),
        re.compile(
            rf"(?:(?:tell|show|read|remind) me |read back |read out |read me )?"
            rf"(?:what|everything|all) you (?:have |ve )?{_HOLD} (?:about|on|of|regarding) "
            rf"{_THING}{_SO_FAR}"
        ),
        re.compile(
            rf"(?:what|which) (?:facts|details|personal details|things|info|information|notes)"
            rf" (?:about|on) {_THING} (?:do|have|did) you {_HOLD}{_SO_FAR}"
        ),
        re.compile(
            rf"(?:what|which) (?:facts|details|personal details|info|information|notes)"
            rf" (?:do|have|did) you (?:{_HOLD}) (?:about|on) {_THING}{_SO_FAR}"
        ),
        re.compile(
            rf"(?:do|have) you (?:have|got|keep|kept|saved|stored) any (?:notes|info|information"
            rf"|details|facts|records?) (?:on|about) {_THING}"
        ),
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
        re.compile(
            r"how much (?:of )?(?:your )?memory (?:are you using|have you used|is used"
            r"|do you have left|is left)"
        ),
    ],
}
