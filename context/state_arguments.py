"""Status questions that carry an argument: an item looked up in the records, a running
timer, the clock in another place, a date counted from today.

"Is laundry on my list", "when is my meeting with Ann", "how long is left on the pasta timer",
"what time is it in Dallas", "what's the date in five days": each names the thing it asks
about, so each is read by an anchored pattern that captures the argument as a slot
(`context.state_rules` tries these before the argument-free rules). The argument is what the
answer is about; the answers themselves are in `context.lookup` and `context.clocks`. A
sentence that only looks like one of these ("is milk on my shopping list": Annie keeps one
to-do list, not a shopping list) matches no pattern and is the model's. So is a read of what
goes on at a place, asked of no one's own records (`somewhere`: "events in Milan").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from context.clocks import (
    DAY_REF,
    date_phrase,
    day_named,
    hours_asked,
    span_in,
    span_named,
    zones_for,
)
from context.state_vocab import HOUR_WORD, NUMBERS, Intent

# Where an item may be looked for: the one to-do list, the reminders, the schedule.
_LIST = r"(?:todo list|todo|todos|task list|tasks|list|list of things todo)"
_REMINDERS = r"(?:reminders?|reminder list|list of reminders|alarms?|timers?)"
_SCHEDULE = r"(?:schedule|calendar|agenda|diary|plans?)"
_WHERE = (
    rf"(?:on|in|to|into|onto) (?:my|the|our) (?:(?P<list>{_LIST})|(?P<reminders>{_REMINDERS})"
    rf"|(?P<schedule>{_SCHEDULE}))"
)
# The item: a few words, never a bare pronoun or a word that asks ("anything", "what").
_ITEM = (
    r"(?P<item>(?!(?:it|that|this|anything|something|everything|what|there|any)(?: |$))"
    r"[a-z0-9][a-z0-9 ]{0,60}?)"
)
_DAY = r"(?: (?P<day>today|tomorrow|tonight|this week|this morning|this afternoon|this evening))?"
_KIND = r"(?:task|item|reminder|todo|entry|thing|note|event|appointment|meeting)s?"
_NAMED = r"(?:called|named|about|for|to|that says|saying|with|titled|labell?ed)"

MEMBERSHIP = [
    re.compile(rf"(?:is|are) {_ITEM} (?:still )?{_WHERE}{_DAY}"),
    re.compile(rf"(?:is|are) there {_ITEM} {_WHERE}{_DAY}"),
    re.compile(
        rf"(?:did|have) i (?:already )?(?:put|add|added|write|written|include|included|save"
        rf"|saved|set|jot|jotted|get|got) {_ITEM}(?: down)? {_WHERE}"
    ),
    re.compile(
        rf"(?:do i have|have i got|is there|are there|i have|you have|do you have|have you got)"
        rf" (?:a |an |any |the )?{_KIND} {_NAMED} {_ITEM}(?: {_WHERE})?{_DAY}"
    ),
    re.compile(rf"(?:do i have|have i got|do you have) {_ITEM} {_WHERE}{_DAY}"),
    re.compile(rf"(?:is|are) {_ITEM} (?:one of|among) my (?:tasks|todos|reminders)"),
    # The item said first: "buying wool, is that on my list", "dry cleaning, is there a
    # reminder", "tax stuff for the accountant, is that a task".
    re.compile(rf"{_ITEM} (?:is|are) (?:that|it|this|those|they) (?:still )?{_WHERE}{_DAY}"),
    re.compile(
        rf"{_ITEM} (?:is there|are there|do i have|have i got|did i (?:set|make|add|put))"
        rf" (?:a |an |any )?(?:(?P<reminders>reminders?)|(?P<list>tasks?|todos?))"
        rf"(?: (?:for|about|on) (?:that|it|this))?"
    ),
    re.compile(
        rf"{_ITEM} (?:is|are) (?:that|it|this) (?:a|an|one of my|on my) (?:(?P<list>tasks?|todos?)"
        rf"|(?P<reminders>reminders?))"
    ),
]
# An event looked up in the schedule by what it is: "when is my meeting with Ann", "what time
# is the dentist appointment", "is the meeting with Lisa today". The item must name an event
# of the user's ("my ...", or "the" and an event word), so "when is the super bowl" is not one.
_EVENT = (
    r"(?:meeting|appointment|appt|call|interview|session|class|lesson|dinner|lunch|breakfast"
    r"|party|flight|visit|checkup|check up|practice|rehearsal|date|reservation|booking"
    r"|deadline|review|standup|stand up|sync|catch up|catchup|event|trip|shift|exam|test)"
)
# "The evening meeting I have with John": said as the user's by "I have" after the event, and
# looked up without those words.
_HAVE = r"(?:i|we) (?:have got|have|got|ve got|had)"
_HELD = rf"(?: {_HAVE})?"
_HELD_WORDS = re.compile(rf"\b({_EVENT}) {_HAVE}\b")
_EVENTS_OWNED = (
    rf"(?:my|our) [a-z0-9 ]{{1,50}}?|the (?:[a-z0-9]+ ){{0,3}}{_EVENT}{_HELD}"
    rf"(?: (?:with|for|at|about) [a-z0-9 ]{{1,30}}?)?|(?:a|an|any) (?:[a-z0-9]+ ){{0,2}}{_EVENT}"
    rf"(?: (?:with|for|at|about) [a-z0-9 ]{{1,30}}?)?"
)
_OWN_EVENT = rf"(?P<item>{_EVENTS_OWNED})"
# Asked whether it falls on a day, someone's birthday or party is the user's calendar's to say
# ("is it true that Susan's birthday is on March 1st", "is Mary's party tonight"); "when is
# Jacob's birthday" alone is as often the address book's, which Annie does not keep.
_DAY_CHECKED = (
    rf"(?P<item>{_EVENTS_OWNED}|[a-z]+ s (?:[a-z]+ ){{0,2}}(?:birthday|anniversary|wedding"
    rf"|{_EVENT})(?: (?:party|dinner|celebration))?)"
)
# "Is my haircut on Friday", "is it true that my anniversary is on March 1st": the day asked
# about, a word of the schedule's own or a weekday or date (`context.clocks.day_named`).
_ASKED_DAY = rf"(?:(?P<day>today|tomorrow|tonight|this week)|(?P<on>{DAY_REF}))"
# How long until an event is ("how many days till my flight"): said as how long, then when,
# and only where a record holds it (`Argued.loose`). The item must name an event: counting
# down to a day ("how many days until my birthday") is arithmetic on a date the records may not
# hold, and "birthday" in "order Mia's birthday cake" is not the user's.
_UNTIL = re.compile(
    rf"(?:how long|how many (?:days|weeks|hours|minutes)|how much (?:longer|time))"
    rf"(?: is it| is there| is left| do i have| have i got| left)?"
    rf" (?:until|till|til|before|to) (?P<item>(?:my|our|the) (?:[a-z0-9]+ ){{0,3}}{_EVENT}"
    rf"(?: (?:with|for|at|about|to) [a-z0-9 ]{{1,30}}?)?){_DAY}"
)
LOOKUP = [
    re.compile(
        rf"(?:when|what time|what day|what date|which day|at what time|how soon) (?:is|are|was)"
        rf" {_OWN_EVENT}(?: (?:scheduled|set|booked|planned|due|happening))?(?: for)?{_DAY}"
    ),
    _UNTIL,
    re.compile(
        rf"(?:is|are) {_DAY_CHECKED} (?:still )?(?:on |scheduled |set |booked )?(?:for |on )?"
        rf"{_ASKED_DAY}(?: (?:right|true|correct))?"
    ),
    re.compile(
        rf"(?:is it true|am i right) (?:that |in thinking )?{_DAY_CHECKED} (?:is|are) (?:still )?"
        rf"(?:on |scheduled |set |booked )?(?:for |on )?{_ASKED_DAY}"
    ),
    # The day said first: "March 1st is Susan's birthday, right".
    re.compile(
        rf"(?:(?:on|is it) )?(?P<on>{DAY_REF}) (?:is|it is|is it) {_DAY_CHECKED}"
        rf" (?:right|true|correct|isn t it|is that right)"
    ),
    re.compile(rf"(?:do i have|have i got|is there) {_OWN_EVENT}{_DAY}"),
    re.compile(rf"(?:what is )?the (?:date|day|time) (?:of|for) {_OWN_EVENT}{_DAY}"),
    # "What time do I have the dentist on Friday", "when do I have my meeting with John".
    re.compile(
        rf"(?:when|what time|what day|which day) (?:do|will) i have {_OWN_EVENT}"
        rf"(?: (?:on |for )?{_ASKED_DAY})?"
    ),
    # When it starts, or the day it is on: "what time does the dinner party start tonight",
    # "what day is the meeting on". Never when it ends: the records hold when events start.
    re.compile(
        rf"(?:when|what time|what day|which day|at what time)(?: (?:does|do|will|is|did))?"
        rf" {_OWN_EVENT} (?:start|starts|begin|begins|kick off|kicks off|on){_DAY}"
    ),
]
# A contact, an email address or a phone number is the address book's, which Annie does not
# keep: "is there a contact named Allen in my list" is not an item of the to-do list.
_ADDRESS_BOOK = re.compile(
    r"(?:(?:a|an|the|any) )?(?:contacts?|(?:email|e mail|mail) (?:ids?|address(?:es)?)"
    r"|(?:phone|mobile|cell|telephone) numbers?|numbers? for|address(?:es)? for)\b"
)
_ARRIVING = re.compile(
    r" (?:going to |gonna |expected to |supposed to |meant to |due to |set to )?(?:get here"
    r"|be here|arrive|arriving|come|coming|turn up|show up|be ready|ready|be delivered"
    r"|delivered|being delivered|land|landing|get in|pull in|leave|leaving|depart|departing"
    r"|gets here|arrives|comes|turns up|shows up|lands|gets in|leaves|departs)"
    r"(?: here| in| at| today| tonight)?$"
)
# Things brought or run by others ("how long until my takeaway", "when is my ride"): a shop's
# or a driver's to say, so the records answer only where one holds them.
_BROUGHT = re.compile(
    r"\b(?:order|orders|takeaway|takeout|take out|delivery|deliveries|package|parcel|food"
    r"|pizza|groceries|shopping|ride|uber|lyft|taxi|cab|bus|train|tram|shuttle)$"
)
# The schedule of one named day: "anything on my calendar for the 21st", "what do I have on
# Friday", "what's on the agenda for March 8th". The day must be a weekday or a date
# (`context.clocks.day_named`); today, tomorrow and this week are the schedule rules' own.
AGENDA = [
    re.compile(
        # Longer openers first: "what is" would take "happening on the 25th" as the day.
        rf"(?:what is happening|what is going on|what is planned|what(?: have| ve) i got"
        rf"|what do i have|do i have anything|have i got anything|is there anything|anything"
        rf"|what is"
        rf"|am i free|am i busy|is my (?:{_SCHEDULE}) (?:free|clear|busy))"
        rf"(?: (?:on|in) (?:my|the) (?:{_SCHEDULE}))?(?: (?:for|on))? (?P<when>[a-z0-9 ]+)"
    ),
    re.compile(r"(?:what does|how does) (?:my )?(?P<when>[a-z0-9 ]+?) look like"),
    # "How is my Friday looking", "tell me about my upcoming week", "what is next week like".
    re.compile(
        r"(?:tell me about|about|how is|what about) (?:my |the )?(?P<when>[a-z0-9 ]+?)"
        r"(?: looking| look| looking like| like| shaping up)?"
    ),
    re.compile(
        r"what is (?:my |the )?(?P<when>[a-z0-9 ]+?) (?:looking|looking like|like|shaping up)"
    ),
    re.compile(rf"(?:my |the )?(?:{_SCHEDULE}) (?:for|on) (?P<when>[a-z0-9 ]+)"),
]
# The schedule asked about in any words: a sentence about the user's meetings, appointments or
# events that reads rather than changes ("list out my meetings today", "do I have a dentist
# appointment on Monday", "show me my events"). A weekday or a date in it narrows it to that
# day; "today", "tomorrow" and "this week" are the schedule's own day words.
_EVENTS = re.compile(
    r"\b(?:meetings?|appointments?|appts?|events?|calendar|schedule|schedules|agenda|plans?"
    r"|parties|get togethers?|engagements?|commitments?|bookings?|reservations?|scheduled"
    r"|planned|booked)\b"
)
_EVENT_CHANGE = re.compile(
    r"\b(?:add|added|adding|set up|setup|book|cancel|cancelled|delete|remove|move|reschedule"
    r"|rescheduled|create|put|invite|accept|decline|make|clear|block|change|update|edit|send|share|sync"
    r"|postpone|push|organi[sz]e|arrange|prepare|should|would you|how do|how to|why|define"
    r"|meaning|around me|around here|near me|nearby|in town|in the city|happening around|best"
    r"|app|apps|application|software|tool|recommend|tips|ideas?|history|invented|kind of"
    r"|type of|word|spell|translate|mean|you|your|remind|forget|notif\w*|erase|updated|local"
    r"|area|town|city|location|hometown|neighbou?rhood|close by|venue|near|around|celebrity"
    r"|news|latest|tickets?|train|cab|meetups?|public|concerts?|festivals?|in [a-z]+ city"
    r"|deleted|erased|games?|shows|(?:a|the) show|exhibits?|rail|station|bus|transit|ferry"
    r"|tv|channel|planning|to plan|plan (?:my|a|an|the|our|for|out|it|this|that))\b"
    # Wanting to do something is not asking what is: "I want to plan my sister's birthday".
    r"|^(?:i|we) (?:want|need|would like|have|am going|are going|plan|hope) to (?!know|see|hear)"
)
_SCHEDULE_READ = re.compile(
    r"^(?:what|which|when|where|who|how many|how soon|is|are|am|do|does|did|have|has|any"
    r"|anything|if|whether|about|my|all|next|upcoming|show|list|list out|read|open|pull up"
    r"|search|tell|give|let me|see|review|check|confirm)\b"
)
_WEEK_WORDS = re.compile(
    r"\b(?P<day>today|tonight|tomorrow|this week|this morning|this afternoon|this evening)\b"
)
_ON_DAY = re.compile(
    r"\b(?:(?:this|next|coming|on|for) )?(?P<weekday>monday|tuesday|wednesday|thursday|friday"
    r"|saturday|sunday)\b|\b(?P<date>(?:january|february|march|april|may|june|july|august"
    r"|september|october|november|december) (?:the )?[a-z0-9]+(?: [a-z]+)?|(?:the )?[a-z0-9]+"
    r" of (?:january|february|march|april|may|june|july|august|september|october|november"
    r"|december))\b"
)


# Whether the user is taken at some hours: "do I have anything at five", "am I free between 2
# and 4" (the hours narrow the schedule's answer: `context.clocks.hours_asked`).
_HOURS_READ = re.compile(
    r"^(?:(?:do|will) i have(?! to\b)|have i got(?! to\b)|am i (?:free|busy|booked|doing)"
    r"|what do i have|what have i got|what is on|what am i doing|what am i up to"
    r"|(?:is there|are there|anything|any thing)(?: anything| something)?"
    r" (?:on|planned|scheduled|booked|going on|happening)"
    # "What's going on from two till four": the hours make it the user's (`hours_asked`
    # reads no hours in "between the two parties").
    r"|what is (?:going on|happening|planned|scheduled|booked)(?: today| tomorrow| tonight)?"
    r"(?= (?:between|from)\b)"
    # Events asked of some hours, without "my": "any events from three to five", "if there
    # are meetings between two and four".
    r"|(?:(?:if |whether )?(?:is|are) there |(?:if|whether) there (?:is|are) )?(?:any )?"
    r"(?:events?|meetings?|appointments?)"
    r"(?: happening| on| scheduled| planned| booked)?(?= (?:between|from)\b))\b"
)

# How full a day is: "do I have a busy day today", "is it a quiet day tomorrow", "am I having
# a packed Friday" (without a day, today's).
_BUSY = re.compile(
    r"(?:do i have|have i got|will i have|is it|will it be|am i having|is it going to be)"
    r" (?:a |an )?(?:busy|full|packed|heavy|hectic|light|quiet|free|long|big|easy|slow)"
    r" (?:day|one|schedule)(?: (?:on |for )?(?P<when>[a-z0-9 ]+))?"
)


# Words only a person's own schedule uses: with them, "my" may go unsaid.
_PERSONAL = re.compile(
    r"\b(?:meetings?|meting|appointments?|appts?|schedule|scheduled|agenda|calendar|planned"
    r"|booked)\b"
)
_USER_DAY = re.compile(
    r"\b(?:today|tonight|tomorrow|this (?:week|weekend|morning|afternoon|evening)|upcoming"
    r"|coming up|next|monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b"
)
_OF_ANOTHER = re.compile(r"\b(?:of|at|for|in) (?:the|a|an) (?!day\b|week\b|weekend\b|morning\b)")
_OWN = re.compile(r"\b(?:my|i|me|mine|our|we|i am|am i)\b")
_WHEN_ONE = re.compile(r"\b(?:when|what time|what date|what day|the date of|the time of)\b")


# Lookups that hold a schedule word: whether something was done ("did I email Baldur the
# outage schedule yet") or one person's or place's events ("do I have plans with Hrafn").
_ONE_LOOKUP = re.compile(
    r"\b(?:yet|already)$|^(?:did|have) i already\b|\b(?:anyone|someone) from\b"
    r"|\b(?:plans?|meetings?|appointments?|appts?|events?) (?:with|at) (?!(?:the |my )?(?:office"
    r"|work|home)\b)"
)


# Another's schedule: "what's on jess's schedule today" (normalized "jess s schedule"); a day's
# own ("today's schedule", "monday's agenda") is the user's.
_ANOTHERS = re.compile(
    r"\b(?!(?:today|tomorrow|tonight|week|weekend|day|morning|afternoon|evening|month|monday"
    r"|tuesday|wednesday|thursday|friday|saturday|sunday|s)\b)[a-z]+ s (?:schedule|calendar"
    r"|agenda|diary|plans?|day|week|meetings?|appointments?)\b"
)


def _schedule_read(core: str) -> Argued | None:
    """A schedule read in free words, or None."""
    asked = _ASKING.sub("", core)
    if not _EVENTS.search(core) or _EVENT_CHANGE.search(core) or _ONE_LOOKUP.search(core):
        return None
    if _ANOTHERS.search(core):
        return None
    # When one event is: a lookup by name (`LOOKUP`), never the whole schedule read out.
    if _WHEN_ONE.search(core) and _ON_DAY.search(core) is None:
        return None
    if asked == core and not _SCHEDULE_READ.match(core):
        return None
    # The user's own schedule, said so: "any events this weekend" may be the town's.
    # Without "my", only a word of a person's own schedule and a day of theirs will do
    # ("what are meetings scheduled for today"); "the schedule of the Tour de France", "what's
    # a lunar calendar" and "what calendar do the Chinese use" are about the world.
    today = _now().date()
    # A span of days ("next week", "in March", "the next three months") is a day of the
    # user's, and its words ("for the next") are not another's.
    span = span_in(core, today)
    unspanned = core.replace(span.phrase, " ") if span is not None else core
    if _OWN.search(core) is None and (
        _PERSONAL.search(core) is None
        or (_USER_DAY.search(core) is None and span is None)
        or _OF_ANOTHER.search(unspanned) is not None
    ):
        return None
    if span is not None:
        return Argued("agenda", item=span.phrase)
    # A date before a weekday: "saturday march twenty fifth" is the date's day.
    on = next((m for m in _ON_DAY.finditer(core) if m.group("date")), None) or _ON_DAY.search(core)
    if on is not None:
        phrase = on.group("date") or on.group("weekday")
        words = phrase.split()
        # "march twenty fifth two thousand ..." reads as far as it names a day.
        for cut in range(len(words), 0, -1):
            day = day_named(" ".join(words[:cut]), today)
            if day is not None:
                return Argued("agenda", item=" ".join(words[:cut]))
        return None  # a day named that is not one: not this rule's to guess
    found = _WEEK_WORDS.search(core)
    return Argued("schedule", day=found.group("day") if found else "")


# The to-do list asked for in few words: "open my list", "pull up list", "to do list for
# today please". Annie keeps one list, so a bare "list" is it (other lists: `OTHER_LIST`).
LIST_READ = re.compile(
    r"(?:open|pull up|bring up|show|find|display|read|recite|speak|give|provide the contents of"
    r"|what is on|what s on|whats on)?(?: me)? ?(?:my |the |your )?(?:todo )?list"
    r"(?: for today| for to day| right now| please| now)*"
)


# Running timers and how long is left: "how long's left on the timer", "is my pasta timer
# still running", "what timers do I have". Alarms set through Annie are reminders.
TIMERS = [
    re.compile(
        r"how (?:long|much time|many minutes|many seconds) (?:is |do i have )?(?:left|remaining)"
        r"(?: on| for| in)? (?:my|the|our) (?:(?P<item>[a-z]+(?: [a-z]+)?) )?timers?"
    ),
    re.compile(
        r"how (?:long|much time|many minutes) (?:until|till|til|before|unt) (?:my|the|our) "
        r"(?:(?P<item>[a-z]+(?: [a-z]+)?) )?timers? (?:goes off|go off|is done|ends|rings"
        r"|runs out|finishes|is up|dings)"
    ),
    re.compile(
        r"(?:is|are) (?:my|the|our) (?:(?P<item>[a-z]+(?: [a-z]+)?) )?timers? (?:still )?"
        r"(?:running|going|on|set|ticking|active)"
    ),
    re.compile(
        r"(?:what|which|any|are there any|do i have any|do i have a|is there a|is there any) "
        r"timers?(?: (?:do i have|have i got|are|is))?(?: (?:still )?(?:running|set|going|on"
        r"|active))?"
    ),
    re.compile(r"(?:check|show|show me|list) (?:my|the) timers?|(?:my|the) timers?"),
    re.compile(r"time left on (?:my|the) (?:(?P<item>[a-z]+) )?timer"),
]
ALARMS = [
    re.compile(
        r"(?:what|which|any|are there any|do i have any|list|show|show me|read|tell me) "
        r"(?:my |the |all my |all )?alarms?(?: (?:do i have|have i got|are|is))?"
        r"(?: (?:set|on|running|for (?:today|tomorrow|the morning)))?"
    ),
    re.compile(r"(?:when|what time) (?:is|will) my (?:next )?alarm(?: set for| go off| for)?"),
    re.compile(r"(?:do i have|have i got|is there) an alarm(?: set)?(?: for)?(?: \w+){0,3}"),
]
# The clock somewhere else. "In" must lead to a place: "what time is it in the morning" is
# not one, and a place no table knows goes to the model (`context.clocks`).
CLOCK = [
    re.compile(
        r"(?:what|what is the|what is the current|what is the local|the|current|local) time"
        r"(?: is it)?(?: right now| now| currently)? (?:in|at|over in|down in|out in|up in) "
        r"(?P<place>[a-z][a-z ]{1,40})"
    ),
    re.compile(
        r"what time is it (?:right now |now |currently )?(?:in|over in) "
        r"(?P<place>[a-z][a-z ]{1,40})"
    ),
    re.compile(r"time (?:in|at) (?P<place>[a-z][a-z ]{1,40})"),
    re.compile(r"what is the time (?:difference )?(?:in|at) (?P<place>[a-z][a-z ]{1,40})"),
    re.compile(r"what time do they have in (?P<place>[a-z][a-z ]{1,40})"),
]
# The clock somewhere else asked as a conversion or a guess: "convert the current time from
# IST to EST", "change this time to IST", "if I was in the eastern time zone what time would
# it be", "is it noon in Paris". The place asked for is the one said last (or the one said
# with "in"); it must be one the table knows, and the answer is its time now.
CONVERT = [
    re.compile(
        # "Change the time zone to Moscow" sets the clock; "change this time to IST" reads one.
        r"(?:(?:convert|translate)(?: the| this| my| our)?(?: current| local)? time(?: zone)?"
        r"|(?:change|switch|turn)(?: the| this| my| our)?(?: current| local)? time)"
        r"(?: from [a-z .]{1,40}?)? (?:to|into|in) (?P<place>[a-z][a-z .+]{1,40}?)"
    ),
    re.compile(
        r"(?:if|when|say) i (?:was|were|am|m|went|flew) (?:in|to) (?P<place>[a-z][a-z .+]{1,40}?)"
        r" what time (?:would|will|is) it(?: be)?(?: there)?(?: now| right now)?"
    ),
    re.compile(
        r"what time (?:would|will) it be (?:in|over in) (?P<place>[a-z][a-z .+]{1,40}?)"
        r"(?: now| right now)?"
    ),
    re.compile(
        r"is it (?:(?:already|still|past|after|before|nearly|almost) )?(?:noon|midday|midnight"
        r"|morning|afternoon|evening|night|nighttime|daytime|dark|light|late|early|lunchtime"
        r"|bedtime|(?:\d{1,2}|[a-z]+) (?:o ?clock|am|pm))(?: yet| already)?"
        r" (?:in|over in|out in) (?P<place>[a-z][a-z .+]{1,40}?)(?: now| right now| yet)?"
    ),
]
# The clock here, asked as if of a place: "what's the time in this time zone".
HERE = re.compile(
    r"(?:this|my|our|the local|the current|local|current) (?:time ?zone|city|town|place|zone)"
    r"|here|where i am|where i live"
)
# The clock asked in fewer words, once a request's opening ("give me", "tell me") is off:
# "the time in london", "new york time", "current time new york", "boston s current time".
_TIME_WORDS = r"(?:the )?(?:current |local |exact |present |actual )?(?:time|date|time and date)"
LOOSE_CLOCK = [
    re.compile(
        rf"(?:what is |what s |what will be |what )?{_TIME_WORDS}(?: of day)?"
        r"(?: is it| it is| is| now| right now| currently)*"
        r" (?:in|at|for|of|over in|on) (?P<place>[a-z][a-z .]{1,40}?)"
        r"(?: now| right now| currently| at the moment| today| please)?"
    ),
    re.compile(
        r"(?:what is |what s )?(?:the )?(?:current )?(?P<place>(?!(?:what|the|is|it|your|my|a|an"
        r"|this|that|any|some|every|next|last|first|same|free|spare|bed|lunch|dinner|tea|break"
        r"|play|screen|quality|family|prime|half|full|part|real|run|down|up|over|standard)\b)"
        r"[a-z][a-z .]{1,30}?)(?: s)? (?:current |local )?(?:time|date)(?: now| right now)?"
    ),
    re.compile(rf"{_TIME_WORDS} (?P<place>[a-z][a-z .]{{1,30}}?)"),
    re.compile(r"what time is it (?P<place>eastern|central|mountain|pacific)(?: time)?"),
]
# A request's opening that only says "tell me"; the alarm and clock rules read what follows.
_ASKING = re.compile(
    r"^(?:(?:hey|ok|okay|olly|so|just|now|please|kindly) )*"
    r"(?:(?:can|could|would|will) you (?:please )?|please )?"
    r"(?:tell me|show me|give me|let me know|let me see|i want to know|i would like to know"
    r"|would like to know|i want to see|i need to know|may i know|can i know|do you know"
    r"|find out|find|check|confirm|review|report|mention|read me|read out|read|list|display"
    r"|provide|see|look up|pull up|bring up|how me|show|i want|i need|i would like)"
    r"(?: (?:about|if|whether|for me|me|to me|out|please|all|of))*(?: |$)"
)
# Alarms asked about in any words ("please list active alarms", "when does my alarm go off"),
# unless the sentence sets, changes or stops one.
_ALARM = re.compile(
    r"\b(?:alarms?|wake ?up (?:time|call)s?|waking up|my alerts?)\b"
    # Alerts are the alarms only when said to be the user's: "weather alerts" are the world's.
    r"|\balerts? (?:i|you) (?:have |ve )?set\b"
)
# Words that change an alarm, anywhere in the sentence: such a sentence is never a read.
_ALARM_CHANGE = re.compile(
    r"\b(?:set up|setup|reset|add|create|make|put|schedule|cancel|delete|remove|removed|clear"
    r"|turn|switch|stop|disable|enable|snooze|change|move|edit|update|shut|silence"
    # "Wake me at seven" sets one; "what alarm will wake me up" reads them.
    r"|(?<!will )(?<!would )(?<!is going to )(?<!alarm )(?<!alarms )wake me"
    r"|silenced|dismiss|new|modify|adjust|activate|deactivate|unset|erase|get rid|forget"
    r"|take away|take off|do not want|dont want|no longer|do not need|fix|place|arrange|ring"
    r"|repeat|alarm me|need an?|want an?|define|meaning|how do|how does|how to|why|to set"
    r"|deleted|erased|in general|generally)\b|^(?:please )?wake me"
    r"|(?<!did i )(?<!have i )(?<!did you )(?<!have you )(?<!i have )(?<!i ve )(?<!you have )"
    r"\bset (?:an?|another) (?:new )?alarm"
)
# A read: a question, or a request to be told, or the alarms named ("my alarms").
_ALARM_READ = re.compile(
    r"^(?:what|which|when|how many|how much|is|are|do|does|did|have|has|had|any|am|at what"
    r"|if|whether|about|my|all|next|the|upcoming|active|current|alarm status|alarms"
    r"|to see if|to confirm|to check|tell about)\b"
)
# Words after "in" or "at" that are no place, though a town may have the name ("Time", Norway).
_NOT_PLACE = re.compile(
    r"^(?:the )?(?:morning|afternoon|evening|night|day|future|past|meantime|meanwhile"
    r"|general|total|minutes?|hours?|seconds?|a row|my (?:day|week)|time|all|work|home"
    r"|school"
    # An hour is not a place: "what's the time at ten" (the city table holds a "Ten").
    rf"|{HOUR_WORD})\b"
)
# Goodbyes and thanks close a conversation: never a status question, whatever the classifier
# makes of a short "later" or "signing off".
FAREWELL = re.compile(
    r"(?:(?:ok|okay|alright|right) )?(?:bye|bye bye|goodbye|good bye|good night|goodnight"
    r"|see you|see ya|see you later|later|laters|catch you later|talk to you later|talk later"
    r"|ttyl|signing off|i am signing off|i am off|i am out|i am done for (?:today|the day|now)"
    r"|that is all|that is it|that will be all|nothing else|thanks|thank you|cheers|peace out"
    r"|take care|have a good (?:one|day|night))(?: (?:annie|for now|then|bye))*"
)


# Replies, not questions: any choice is fine ("anything is ok with me"), or check what was just
# said ("please confirm what I just said"): the conversation's, never a status read.
REPLY = re.compile(
    r"(?:(?:any ?one|anything|whatever|either|either one|any of them|both|whichever)"
    r"(?: of them| one)? (?:is|are|will be|would be|sounds?|works?|seems?)"
    r"(?: (?:fine|ok|okay|good|great|alright|cool|perfect|with|for|to|by|me|olly|annie"
    r"|totally|really|just|all|right|also)){0,5}"
    r"|(?:i )?(?:have|got) no idea(?: \w+){0,6}|i do not (?:care|mind)(?: \w+){0,4})"
    r"|(?:\w+ ){0,6}(?:confirm|check|repeat)(?: and (?:confirm|check|repeat))? (?:the )?"
    r"(?:what (?:i|you) (?:just |last )?said|details?|the last thing (?:i|you) said"
    r"|last thing (?:i|you) said|what just said|what last said)(?: \w+){0,2}"
)
# Lists Annie does not keep: she keeps one to-do list, so "my shopping list", "my playlists"
# and "what lists do I have" are the model's to answer (it can say what she keeps).
OTHER_LIST = re.compile(
    r"\b(?:(?:shopping|grocery|groceries|play|wish|reading|packing|guest|gift|movie|bucket"
    r"|contacts?|music|song|work|office|party|christmas|birthday|holiday|book|film|watch)"
    r" lists?|playlists?|lists)\b"
)


@dataclass(frozen=True)
class Argued:
    """What an argument-bearing question asks: its intent and slots."""

    intent: Intent  # "find" | "timers" | "clock" | "dates" | "agenda" | "schedule" | "list"
    item: str = ""
    # "list" | "reminders" | "schedule" | "" (everywhere): asked whether it is there;
    # "when": asked when it is ("when is my meeting with Ann"), "until": how long until it is;
    # "done": whether it is done.
    within: str = ""
    day: str = ""  # "agenda": the day's words are `item`, read against the time asked
    date: str = ""  # "find": the one day asked about, ISO ("is my haircut on Friday")
    place: str = ""
    alarms: bool = False
    # Asked in words that may be about the world ("when is physio", "did I save the 529
    # thing"): answered from the records only when one holds every word of the item.
    loose: bool = False


def argued(core: str) -> Argued | None:
    """The argument-bearing status question normalized `core` asks, or None."""
    if LIST_READ.fullmatch(core) is not None:
        return Argued("list")
    for rule in TIMERS:
        m = rule.fullmatch(core)
        if m is not None:
            return Argued("timers", item=_clean(m.groupdict().get("item") or ""))
    for rule in ALARMS:
        if rule.fullmatch(core) is not None:
            return Argued("timers", alarms=True)
    asked = _ASKING.sub("", core)
    if (
        _ALARM.search(core)
        and not _ALARM_CHANGE.search(core)
        and (asked != core or _ALARM_READ.match(core))
    ):
        return Argued("timers", alarms=True)
    for rule in CLOCK:
        m = rule.fullmatch(core)
        if m is not None and HERE.fullmatch(m.group("place").strip()):
            return Argued("time")
        if m is not None and _NOT_PLACE.match(m.group("place")) is None:
            return Argued("clock", place=m.group("place").strip())
    for rule in CONVERT:
        m = rule.fullmatch(asked)
        place = m.group("place") if m is not None else ""
        if place and zones_for(place, _now()):
            return Argued("clock", place=place.strip())
    for rule in LOOSE_CLOCK:
        m = rule.fullmatch(asked)
        # Fewer words, so the place must be one the table knows (its first read loads it).
        place = m.group("place") if m is not None else ""
        if place and HERE.fullmatch(place.strip()):
            return Argued("time")
        if place and _NOT_PLACE.match(place) is None and zones_for(place, _now()):
            return Argued("clock", place=place.strip())
    for rule in MEMBERSHIP:
        m = rule.fullmatch(core)
        if m is not None:
            groups = m.groupdict()
            within = next((k for k in ("list", "reminders", "schedule") if groups.get(k)), "")
            item = _clean(groups["item"])
            if item and _ADDRESS_BOOK.match(item) is None:
                return Argued("find", item=item, within=within, day=groups.get("day") or "")
    for rule in LOOKUP:
        m = rule.fullmatch(core)
        if m is not None:
            item = _clean(_HELD_WORDS.sub(r"\1", _OWNER.sub(r"\1's ", m.group("item"))))
            # When something arrives ("my order", "my train") may be a shop's or a timetable's
            # to say: the records answer only where one holds it.
            arriving = _ARRIVING.search(item)
            if arriving is not None:
                item = item[: arriving.start()]
            brought = _BROUGHT.search(item) is not None
            named = None
            if m.groupdict().get("on"):
                named = day_named(m.group("on"), _now().date())
                if named is None:
                    continue  # words that name no day: not this rule's to guess
            if item:
                return Argued(
                    "find",
                    item=item,
                    within="until" if rule is _UNTIL else "when",
                    day=m.groupdict().get("day") or "",
                    date=named.isoformat() if named is not None else "",
                    loose=arriving is not None or brought or rule is _UNTIL,
                )
    today = _now().date()
    for rule in AGENDA:
        m = rule.fullmatch(core)
        if m is not None:
            on = day_named(m.group("when"), today)
            if on is not None:
                return Argued("agenda", item=m.group("when"))
            span = span_named(m.group("when"), today)
            if span is not None:
                return Argued("agenda", item=span.phrase)
    busy = _BUSY.fullmatch(core)
    if busy is not None:
        when = busy.group("when") or "today"
        if _WEEK_WORDS.fullmatch(when):
            return Argued("schedule", day=when)
        on = day_named(when, today)
        if on is not None:
            return Argued("agenda", item=when)
    if date_phrase(core, _now()) is not None:
        return Argued("dates")
    hours_read = _HOURS_READ.match(_ASKING.sub("", core)) and not _EVENT_CHANGE.search(core)
    if hours_read and hours_asked(core) is not None:
        found = _WEEK_WORDS.search(core)
        return Argued("schedule", day=found.group("day") if found else "")
    return _schedule_read(core)


# Questions that name an item without saying it is the user's ("when is physio", "is the dry
# cleaning on there", "did I already do the gas bill", "when am I seeing Sam"). Each could be
# about the world, or another's plans, so each is answered from the records only where one holds
# every word of the item (`Argued.loose`), and is otherwise the model's. Tried after every
# other state rule, so the argument-free ones ("when is my next reminder") keep theirs.
_VERB_ADD = (
    r"(?:add|added|put|write|written|wrote|save|saved|jot|jotted|note|noted|make|made|set"
    r"|include|included|log|logged|enter|entered|list|listed|get|got)"
)
_DONE_VERB = (
    r"(?:do|done|finish|finished|complete|completed|handle|handled|sort|sorted|take care of"
    r"|taken care of|deal with|dealt with|check off|checked off|tick off|ticked off|cross off"
    r"|crossed off|mark off|marked off|get to|got to)"
)
_THERE = r"(?:on there|in there|on it|on the list|on my list|in the list|in my list)"
_TODO_WORDS = r"(?:tasks?|todos?|todo list|list|reminders?)"
_ANY_THING = r"(?:anything|something|a thing|stuff|an item|a task|a reminder|a note)"
# A time said after the item; only the schedule's own day words narrow the answer ("is my call
# with Dan today": yes or not today), the rest are heard and the answer says when it is.
_DAY_WORDS = (
    r"(?P<day>today|tomorrow|tonight|this week|this morning|this afternoon|this evening)"
    r"|next week|this weekend|next weekend|this month|next month|on [a-z]+|soon|coming up"
    r"|before the end of the (?:week|month)|after today|any ?time soon|later|later today"
    r"|this year|again"
)
_DAY_AFTER = rf"(?: (?:{_DAY_WORDS}))?"
_DAY_NEEDED = rf" (?:{_DAY_WORDS})"
_SEEING = (
    r"(?:meeting|seeing|visiting|having (?:lunch|dinner|breakfast|coffee|drinks|a call) with"
    r"|catching up with|calling|going to|over at|going over to|with)"
)
LOOSE_MEMBERSHIP = [
    # The list named before what it is about: "is there anything on my list about the
    # gutters", "on my reminders, do I have something for the bike".
    re.compile(
        rf"(?:(?:is|are) there|do i have|have i got|(?:did|have) i (?:already )?{_VERB_ADD})"
        rf" {_ANY_THING} (?:in|on) (?:my|the) {_TODO_WORDS} (?:about|for|regarding|to do with)"
        rf" {_ITEM}"
    ),
    re.compile(
        rf"(?:in|on) (?:my|the) {_TODO_WORDS} (?:is there|are there|do i have|have i got"
        rf"|(?:did|have) i (?:already )?{_VERB_ADD}) {_ANY_THING} (?:about|for|regarding"
        rf"|to do with) {_ITEM}"
    ),
    re.compile(rf"(?:is|are) {_ITEM} (?:still )?{_THERE}"),
    re.compile(rf"{_ITEM} (?:is|are) (?:that|it|this|those|they) (?:still )?{_THERE}"),
    re.compile(rf"{_ITEM} {_THERE}"),
    re.compile(
        rf"(?:did|have) i (?:already )?{_VERB_ADD}(?: down)? {_ANY_THING} (?:about|for|on|to"
        rf"|regarding|to do with) {_ITEM}(?: (?:in|on) (?:my|the) {_TODO_WORDS})?"
    ),
    re.compile(
        rf"(?:(?:is|are) there|do i have|have i got) {_ANY_THING} (?:about|for|on|to|regarding"
        rf"|to do with) {_ITEM}(?: (?:in|on) (?:my|the) {_TODO_WORDS})?"
    ),
    re.compile(rf"(?:did|have) i (?:already )?{_VERB_ADD}(?: down)? {_ITEM}(?: down)?"),
    re.compile(rf"{_ITEM} (?:did|have) i (?:already )?{_VERB_ADD} (?:that|it|this)(?: down)?"),
]
LOOSE_REMINDERS = [
    re.compile(
        rf"(?:did|have) i (?:already )?(?:set|make|made|create|created|add|added|put|get|got"
        rf"|schedule|scheduled)(?: up)? (?:a |an |any |the )?(?:reminders?|alarms?) (?:to|about"
        rf"|for|that|of|re) {_ITEM}"
    ),
    re.compile(rf"(?:did|have) i (?:remind|reminded) (?:myself|me) (?:to|about|of) {_ITEM}"),
    re.compile(
        rf"(?:do i have|have i got|is there) (?:a |an |any )?reminders? (?:to|about|for) {_ITEM}"
    ),
]
DONE = [
    re.compile(rf"(?:did|have) i (?:already |ever )?{_DONE_VERB} {_ITEM}(?: yet| already)?"),
    re.compile(
        rf"(?:did|have) i (?:already )?(?:mark|marked|check|checked|tick|ticked|cross|crossed)"
        rf" {_ITEM} (?:off|as done|done|as complete|complete|as finished)(?: yet| already)?"
    ),
    re.compile(
        rf"{_ITEM} (?:did|have) i (?:already )?(?:{_DONE_VERB}|check|checked|tick|ticked|cross"
        rf"|crossed|mark|marked) (?:that|it|this)(?: off)?(?: yet| already)?"
    ),
    re.compile(rf"(?:is|are) {_ITEM} (?:done|finished|complete|completed|ticked off|checked off)"),
]
# Whether a task was done, asked with the task's own verb: "did I already pay the heating
# bill", "have I planted the potatoes yet", "did I renew the pool pass". The item is the whole
# phrase, verb and all. Tried last of all: "did I add ...", "did I set a reminder ..." and
# "did I see Sam" are the rules above.
_NOT_DONE_VERB = rf"(?!(?:{_VERB_ADD}|remind|reminded|have|see|saw|meet|met|tell|told|say|said)\b)"
DONE_BY_VERB = [
    re.compile(rf"(?:did|have) i (?:already )?{_NOT_DONE_VERB}{_ITEM} (?:yet|already)"),
    re.compile(rf"(?:did|have) i already {_NOT_DONE_VERB}{_ITEM}"),
    re.compile(rf"did i {_NOT_DONE_VERB}{_ITEM}"),
    # "have I renewed the van insurance": a past participle says it is about being done.
    re.compile(rf"have i {_NOT_DONE_VERB}(?=[a-z]+(?:ed|en|wn|ught|aid|ent|one) ){_ITEM}"),
    re.compile(
        rf"{_ITEM} (?:did|have) i (?:already )?{_NOT_DONE_VERB}[a-z]+(?: off)? (?:that|it|this)"
        rf"(?: off)?(?: yet| already)?"
    ),
]
_ANYONE = (
    r"(?:anything|anyone|something|plans|a plan|a meeting|meetings|an appointment|lunch|dinner"
    r"|coffee|drinks|a call|a date)"
)
_ONE_THING = r"(?:thing|meeting|event|appointment|call)"
# "Where is" asks of an event only when it names one: "where is my phone" asks of a thing (and
# "phone" is a task's "call").
_AN_EVENT = (
    r"(?:[a-z0-9]+ ){0,6}?(?:lunch|dinner|breakfast|brunch|party|meeting|appointment|appt"
    r"|interview|class|lesson|course|session|practice|rehearsal|game|match|concert|gig|show"
    r"|performance|recital|wedding|funeral|reception|ceremony|fundraiser|demo|talk|lecture"
    r"|seminar|workshop|conference|event|date|drinks|coffee|celebration|festival|fair|market"
    r"|tournament|race|trip|outing|tour|visit|booking|reservation|service|checkup|check up"
    r"|exam|test|screening|viewing|pickup|drop off|meetup|catch up|get together|gathering"
    r"|ceilidh|dance|birthday|anniversary|shower|graduation|barbecue|bbq|picnic)s?(?: |$)"
)
# Where or with whom a person is ("where are you", "who is he with") is no record's.
_NO_ONE = r"(?!(?:you|u|me|i|we|us|they|he|she|him|her|them|everyone|everybody)(?: |$))"
LOOSE_WHEN = [
    re.compile(rf"(?:when|what time|what day) am i {_SEEING} {_ITEM}{_DAY_AFTER}"),
    re.compile(
        rf"(?:when|what time|what day|which day|what date|at what time) (?:is|are|was) {_ITEM}"
        rf"(?: (?:due|scheduled|happening|booked|planned|set|on|start|starting))?{_DAY_AFTER}"
    ),
    re.compile(
        rf"(?:when|what time|what day|which day|what date) (?:do|does|did|should|must|am|was|will)"
        rf" (?:i|we) (?:need to |have to |got to |gotta |supposed to |meant to |going to |get to )?"
        rf"(?:be |see |meet |visit )?{_ITEM}{_DAY_AFTER}"
    ),
    # Not when it ends or finishes: the answer says when an event starts.
    re.compile(
        rf"(?:when|what time|what day) (?:do|does) {_ITEM} (?:start|begin|happen"
        r"|go off|ring|fire|pop up|come up|be due)"
    ),
    re.compile(rf"(?:am i|are we) {_SEEING} {_ITEM}{_DAY_AFTER}"),
    re.compile(
        rf"(?:do|did) i (?:have|see|meet|have got) {_ANYONE} (?:with|for|at) {_ITEM}{_DAY_AFTER}"
    ),
    re.compile(rf"(?:have i got|is there|are there) {_ANYONE} (?:with|at) {_ITEM}{_DAY_AFTER}"),
    re.compile(rf"(?:am i|are we) (?:meeting|seeing) (?:anyone|someone) from {_ITEM}{_DAY_AFTER}"),
    re.compile(rf"(?:anything|something) (?:with|at) {_ITEM}{_DAY_AFTER}"),
    # The item said first: "team lunch, when is that", "the vet, what time".
    re.compile(rf"{_ITEM} (?:when|what time|what day)(?: is (?:that|it))?"),
    re.compile(rf"what is (?:my|our) next {_ONE_THING} with {_ITEM}{_DAY_AFTER}"),
    re.compile(rf"(?:is|are) (?:my |the |our )?{_ITEM}{_DAY_NEEDED}"),
    re.compile(rf"{_ITEM} (?:is|are) (?:that|it|this){_DAY_NEEDED}"),
    # Where or with whom an event is: the record's own words say it where they hold it ("Lunch
    # @ the Harbour Cafe w/ Sam"), and say when in any case.
    re.compile(
        rf"where (?:is|are|was) {_NO_ONE}(?={_AN_EVENT}){_ITEM}"
        rf"(?: (?:held|happening|taking place))?{_DAY_AFTER}"
    ),
    re.compile(
        rf"who (?:am i|are we|was i|were we) (?:going|having|doing|meeting for|seeing for)"
        rf" {_ITEM} with{_DAY_AFTER}"
    ),
    re.compile(rf"who (?:is|was) {_NO_ONE}{_ITEM} with{_DAY_AFTER}"),
]


def loose_argued(core: str) -> Argued | None:
    """An item asked about in words that may be about the world (`Argued.loose`), or None.
    Called only when no other state rule fits."""
    for rules, within in ((DONE, "done"), (LOOSE_REMINDERS, "reminders"),
                          (LOOSE_MEMBERSHIP, ""), (LOOSE_WHEN, "when"),
                          (DONE_BY_VERB, "done")):  # fmt: skip
        for rule in rules:
            m = rule.fullmatch(core)
            if m is None:
                continue
            item = _clean(m.group("item"))
            if item:
                day = (m.groupdict().get("day") or "") if within == "when" else ""
                return Argued("find", item=item, within=within, day=day, loose=True)
    return None


def _now() -> datetime:
    return datetime.now().astimezone()


# What goes on somewhere, asked of no one's own records ("what's happening around me", "show
# me events in Sacramento"): the world's events, the model's to answer. Said with the user's
# own words ("do I have meetings in Boston"), it stays a read of the records.
_NEARBY = re.compile(
    r"\b(?:near|around|close to|round) (?:me|here|us|town|this area)\b|\bnearby\b|\bnear here\b"
    r"|^(?:what is|whats|what s) around(?: tonight| this weekend| today)?$"
    r"|\b(?:events?|things? to do|anything|something) (?:going on |happening )?around"
    r"(?: tonight| this weekend| today)?$"
    r"|\bin (?:the|this|my) (?:area|neighbou?rhood)\b|\b(?:in|around) town\b"
    r"|\blocal(?:ly)? (?:events?|happenings?|shows?|concerts?)\b"
)
# A place said after "in" or "at", up to a word of time or the end ("events in Milan today").
_IN_PLACE = re.compile(
    r"\b(?:in|at) (?P<place>[a-z]+(?: [a-z]+){0,2}?)(?= (?:this|next|today|tonight|tomorrow"
    r"|on|for|at|right|now|please|over|during|around)\b|$)"
)


# Events at the end of a sentence "in" or "at" something: a place, unless it is a time or
# the user's calendar ("events in the morning", "in the next two weeks", "in May").
_EVENTS_IN = re.compile(
    r"\b(?:events?|concerts?|festivals?|shows?)\b(?: [a-z]+){0,3} (?:in|at)"
    r" (?P<place>(?:the )?[a-z]+(?: [a-z]+){0,2})$"
)
_NOT_THERE = re.compile(
    r"^(?:the |a |an )?(?:next|coming|following|this|these|last|past|few|couple|week|weeks"
    r"|weekend|month|months|year|days?|calendar|diary|schedule|agenda|office|january|february"
    r"|march|april|may|june|july|august|september|october|november|december|monday|tuesday"
    r"|wednesday|thursday|friday|saturday|sunday)\b"
)


def somewhere(core: str) -> bool:
    """Whether normalized `core` asks what goes on at a place, not in the user's records."""
    # The user's own words, once the request's opening and "near me" are off.
    rest = _NEARBY.sub(" ", _ASKING.sub("", core))
    if _OWN.search(rest):
        return False
    if _NEARBY.search(core):
        return True
    events = _EVENTS_IN.search(core)
    place = events.group("place") if events is not None else ""
    if place and _may_be_place(place) and _NOT_THERE.match(place) is None:
        return True
    now = _now()
    return any(
        _may_be_place(m.group("place")) and bool(zones_for(m.group("place"), now))
        for m in _IN_PLACE.finditer(core)
    )


def _may_be_place(words: str) -> bool:
    """Whether words said after "in" or "at" may name a place: not a number ("in May", "on
    Friday" hold one) nor a part of the day, work or home."""
    return words.split()[-1] not in NUMBERS and _NOT_PLACE.match(words) is None


def farewell(core: str) -> bool:
    """Whether normalized `core` is a goodbye, a thanks or a reply, or asks about a list Annie
    does not keep: the conversation's, never a status read."""
    return (
        FAREWELL.fullmatch(core) is not None
        or REPLY.fullmatch(core) is not None
        or (OTHER_LIST.search(core) is not None and "todo" not in core)
    )


# "My next physio" names the physio; which one is the answer's to say (the next to come).
_LEADING = re.compile(r"^(?:(?:my|our|the|a|an|any|some|called|named|item|task|next|upcoming) )+")
# Words after the item that say what kind of thing it is, not which ("the 529 thing").
_TRAILING = re.compile(r"(?: (?:thing|stuff|one|task|item|bit|business))+$")
# A possessive's "s" once normalized ("noah s present"): the name carries it.
_POSSESSIVE = re.compile(r"(?<=[a-z]) s\b")
# Someone else's event keeps its owner ("susan s birthday" is "susan's birthday"), so it is
# said back as theirs; `_POSSESSIVE` then leaves it be.
_OWNER = re.compile(r"^(?!(?:my|our|the|a|an|any) )([a-z]+) s ")


def _clean(item: str) -> str:
    """The item as it would be written: articles and possessives off the front, "thing" off
    the end, a possessive's "s" off its name."""
    item = _POSSESSIVE.sub("", item.strip())
    return _TRAILING.sub("", _LEADING.sub("", item).strip()).strip()
