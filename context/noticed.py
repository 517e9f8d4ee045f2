"""What the user states about their life, noticed by rules: typed notes without the model.

After each turn, the user's words are read for statements worth keeping beyond the session: a
fact ("I work nights as a nurse"), a preference ("I don't eat pork", "keep your answers
short"), a person ("my sister Kemi is a dentist in Lagos"), a plan ("I'm flying to Lisbon on
Friday") or a date ("my son's birthday is April 19th"). Each becomes a note in the user's own
words, the sentence as said with its fillers stripped; a day said relative to now is written
out beside it ("on friday (Friday 13 March 2026)"), since "friday" means nothing next month.

Only statements are read. Questions, requests and commands, wishes and suppositions ("if I
lived in Paris", "I'd love to", "maybe someday"), passing states ("I'm starving", "my head's
killing me today"), what is not about the user's own life, sarcasm and anything the user
takes back ("no wait, forget that") give nothing: a wrong note is worse than none, and the
words are still kept as an episode for recall. A note noticed here is trusted less than one
the user or the model confirmed (`memory.provenance.NOTICED`); the turn runner writes it
(`bot.turn.noticing`), where duplicates supersede and contradictions are raised by the same
subject-and-value rule as a saved note's (`memory.provenance`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Literal

from context.clocks import day_named
from context.user_name import name_in

Kind = Literal["fact", "preference", "person", "plan", "date"]
KINDS: tuple[Kind, ...] = ("fact", "preference", "person", "plan", "date")


@dataclass(frozen=True)
class Noticed:
    """One note the user's words state: its kind, its text, and whether it is a secret."""

    kind: Kind
    text: str
    private: bool = False
    # A plan's last day: the note is of no use after it (None: no day named, or not a plan).
    until: date | None = None


# --- what a sentence is, before what it says -------------------------------------------------

# Sentences: what the recognizer or the keyboard ended with . ! ? or ;.
_SENTENCE = re.compile(r"[^.!?;\n]+[.!?]*")
# Openers that carry no statement: hesitations, "oh and", "just so you know", "remember that".
_LEAD = re.compile(
    r"^(?:(?:um+|uh+|er+|erm|hmm+|oh|ok|okay|so|well|yeah|yes|right|anyway|anyways|alright"
    r"|and|also|plus|but|actually|honestly|basically|like|hey|hi|annie|btw|fyi|by the way"
    r"|just so you know|just to let you know|for the record|for your information"
    r"|before i forget|oh before i forget|i forgot to (?:say|mention|tell you)"
    r"|i (?:should|meant to|wanted to|want to) (?:mention|say|tell you)|you should know"
    r"|(?:please )?(?:remember|note|keep in mind|bear in mind)(?: that)?|i want you to know"
    r"|(?:just )?so)\b[\s,]*)+"
)
# Tails that close a sentence without adding to it.
_TAIL = re.compile(
    r"(?:[\s,]+\b(?:so|too|though|anyway|anyways|like|lol|haha|by the way|you know|okay|ok"
    r"|right|yeah|as well|either|now|just so you know|don't let me forget(?: it)?"
    r"|remember that|please)\b)+[\s,.!?]*$"
)
# A sentence that asks, supposes, wishes, hedges or guesses states nothing to keep.
_ASKS = re.compile(
    r"^(?:do|does|did|am|is|are|was|were|can|could|would|will|should|shall|have|has|what|when"
    r"|where|who|whom|why|how|which|whose|any|anything|tell me|remind|let me|let's|lets)\b"
)
_UNSURE = re.compile(
    r"\b(?:if|wish|wished|would(?! rather)|could|might|maybe|perhaps|someday|some day|one day"
    r"|suppose|imagine|pretend|probably|guess|i think|i thought|not sure|hopefully|hope"
    r"|supposedly|apparently|they say|somebody said|someone said|my friend thinks"
    r"|i'?d (?:love|like|want))\b"
)
# Requests and commands: the sentence starts with what Annie is to do.
_COMMAND = re.compile(
    r"^(?:please |can you |could you |would you |will you )?(?:remind|add|set|put|tell|show"
    r"|play|call|text|message|email|send|book|schedule|cancel|delete|remove|turn|switch|open"
    r"|find|search|look|check|read|give|make|create|start|stop|pause|resume|write|save|help"
    r"|wake|take|get|order|buy|find|note down|mark|tick|snooze|repeat|say|spell|translate"
    r"|don'?t|do not|never mind|forget|ignore|scratch|cancel)\b"
)
# The user taking back what they said: nothing in the message is kept.
_TAKEN_BACK = re.compile(
    r"\b(?:(?<!let me )(?<!to )forget (?:that|it|what i said)|never ?mind|scratch that|no wait"
    r"|ignore (?:that|me)"
    r"|just kidding|only kidding|i'?m kidding|i was joking|jk|not really|that'?s not (?:my|true)"
    r"|i was reading)\b"
)
# Sarcasm's usual openers: "oh great, I just love ...".
_SARCASM = re.compile(
    r"^(?:oh |yeah |well )*(?:great|joy|wonderful|fantastic|brilliant|perfect|sure)\b"
    r"|^(?:oh )?yeah,? (?:i|right)\b|^oh (?:yeah|great|joy)\b|\byeah right\b"
)
# Words of the moment: what holds only now is no note ("my head's killing me today").
_NOW_ONLY = re.compile(
    r"\b(?:right now|at the moment|today|tonight|this morning|this afternoon|this evening"
    r"|just now|currently feeling|again)\b"
)
# How the user feels, or is, at this moment.
_PASSING = re.compile(
    r"\b(?:tired|exhausted|knackered|hungry|starving|thirsty|bored|late|sick|ill|cold|hot"
    r"|sleepy|stressed|annoyed|grumpy|sad|happy|excited|nervous|worried|busy|fine|okay|ok"
    r"|killing me|dying|broken|dead|stuck|lost|confused|done|back|home|here|ready|awake|up"
    r"|out|off|away|at|asleep|on)\b"
)

# What "is doing" may say of a life rather than a moment: "my daughter is studying law".
_LASTING = frozenset(["studying", "training", "living", "working", "teaching", "learning"])
# A liking or a habit that points at the moment instead of naming something.
_POINTING = re.compile(
    r"^i (?:\w+ )?(?:love|like|adore|hate|enjoy|dislike|can'?t stand)"
    r" (?:it|that|this|you|them|those|these|him|her|one|the idea|how you)\b"
    r"|^i (?:always|never|usually) (?:\w+ed|said|did|went|had|was|were|got|made|thought|knew"
    r"|told|saw|came|forgot|left|lost)\b"
)

# The word after "is": "I'm so hungry" gives "hungry".
_STATE_WORD = re.compile(
    r"\b(?:is|are|'s|'m|am|was)\s+(?:so |really |very |a bit |kind of |just )*(\w+)"
)

# --- what a sentence says --------------------------------------------------------------------

_I = r"(?:i|we)"
# "I've got", "we have", "I got": the verb glued to its subject or not.
_HAVE = r"(?:'ve got| have got|'ve| have| got)"
_IM = r"(?:i'?m|i am|we'?re|we are)"
_ADV = r"(?:(?:really|absolutely|just|totally|genuinely|honestly|seriously|truly|also|still"
_ADV += r"|actually|definitely|do|kind of|kinda|sort of|pretty much|always|usually|mostly) )*"
_PEOPLE = (
    r"(?:wife|husband|partner|girlfriend|boyfriend|fianc[eé]e?|spouse|son|daughter|kids?"
    r"|children|child|baby|boys|girls|twins|stepson|stepdaughter|mum|mom|mother|mam|dad|father"
    r"|parents|brother|sister|siblings?|grandma|granny|nan|nana|grandmother|grandpa|grandad"
    r"|granddad|grandfather|grandson|granddaughter|grandkids|grandchildren|aunt|auntie|uncle"
    r"|cousin|niece|nephew|in-laws|mother-in-law|father-in-law|sister-in-law|brother-in-law"
    r"|friend|best friend|best mate|mate|flatmate|roommate|housemate|neighbou?r|boss|manager"
    r"|colleague|coworker|co-worker|assistant|doctor|gp|dentist|therapist|vet|landlord"
    r"|landlady|tutor|teacher|coach|dog|cat|puppy|kitten|pet)"
)
_OCCASION = (
    r"(?:birthday|bday|anniversary|wedding|graduation|due date|deadline|exam|exams|surgery"
    r"|operation|funeral|christening|baptism|recital|final|finals|dissertation|thesis|essay"
    r"|visa|passport|licen[cs]e|lease|contract|mortgage|insurance|membership|subscription"
    r"|project|launch|go live|results|appointment|interview|court date|closing|move|trial"
    r"|school|term|holiday|vacation|half term|inset day|training day|no school|day off|shift)"
)
# Dates that name no day number.
_HOLIDAYS = {
    "christmas eve": (12, 24), "christmas day": (12, 25), "christmas": (12, 25),
    "boxing day": (12, 26), "new year's eve": (12, 31), "new years eve": (12, 31),
    "new year's day": (1, 1), "new years day": (1, 1), "valentine's day": (2, 14),
    "valentines day": (2, 14), "valentine's": (2, 14), "halloween": (10, 31),
    "st patrick's day": (3, 17), "st. patrick's day": (3, 17), "bonfire night": (11, 5),
}  # fmt: skip
_MONTHS = [
    "january", "february", "march", "april", "may", "june", "july", "august", "september",
    "october", "november", "december",
]  # fmt: skip
_MONTH = r"(?:" + "|".join(_MONTHS) + r"|jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec)"
_ORDINAL_WORDS = [
    "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth",
    "eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth", "sixteenth", "seventeenth",
    "eighteenth", "nineteenth", "twentieth", "thirtieth",
]  # fmt: skip
_ORD = (
    r"(?:\d{1,2}(?:st|nd|rd|th)|(?:twenty |thirty )?(?:"
    + "|".join(sorted(_ORDINAL_WORDS, key=len, reverse=True))
    + "))"
)
_WEEKDAY = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
_NUMBER = {
    "a": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "couple of": 2, "few": 3,
}  # fmt: skip
# A day in the words, relative or not. Order matters: the longest reading first.
_DAY = re.compile(
    r"\b(?:"
    rf"(?P<md>{_MONTH} (?:the )?(?:{_ORD}|\d{{1,2}})\b(?:,? \d{{4}})?)"
    rf"|(?P<dm>(?:the )?(?:{_ORD}|\d{{1,2}}) (?:of )?{_MONTH}\b(?:,? \d{{4}})?)"
    # A bare "the 16th" is a day only after a word that leads to one ("the fourth floor" is not).
    r"|(?:(?<=\bon )|(?<=\bby )|(?<=until )|(?<=\btill )|(?<=before )|(?<=after )|(?<=from )"
    r"|(?<=since )|(?<=\bfor )|(?<=\bis )|(?<='s )|(?<=\bdue ))"
    rf"(?P<ord>the {_ORD})(?! (?:floor|time|grade|year|row|place|century|round|day|week|month"
    r"|attempt|try|child|kid|baby|book|chapter|page|street|avenue|house|door|stop|lap|game"
    r"|match|period|class|birthday|anniversary|edition|season|episode|generation|level|step"
    r"|person|one|hole|inning|quarter|half|largest|biggest|best|most))"
    r"|(?P<rel>the day after tomorrow|tomorrow)"
    rf"|(?P<wd>(?:(?:next|this|this coming|coming) )?{_WEEKDAY})(?!s)"
    r"|(?P<in>in (?:a|one|two|three|four|five|six|seven|eight|nine|ten|a couple of|a few|\d+)"
    r" (?:days?|weeks?|months?))"
    r"|(?P<hol>" + "|".join(re.escape(h) for h in sorted(_HOLIDAYS, key=len, reverse=True)) + ")"
    r")(?P<part> (?:morning|afternoon|evening|night|lunch|lunchtime))?"
)
# A time ahead that is not a day: a plan may name one.
_AHEAD = re.compile(
    r"\b(?:next (?:week|month|year|weekend|spring|summer|autumn|fall|winter|term)|this (?:week"
    r"|weekend|summer|spring|autumn|fall|winter|month|year)|at the weekend|over (?:the )?"
    r"(?:weekend|summer|holidays|christmas|easter)|end of (?:the )?(?:week|month|year|"
    + _MONTH
    + r")|in "
    + _MONTH
    + r"|for (?:two|three|a|\d+) (?:days|weeks|nights))\b"
)

_STYLE = re.compile(
    r"\b(?:(?:keep|make) (?:your |the |it |them )?(?:answers?|replies|responses|it|things)?"
    r" ?(?:short|shorter|brief|simple|quick|snappy)"
    r"|(?:use|in|give me) (?:celsius|centigrade|fahrenheit|metric|imperial|kilomet(?:er|re)s"
    r"|miles|(?:24|twenty four)[- ]hour)"
    r"|(?:from now on|going forward|in future|in the future)\b.{4,})"
)
# fmt: off
_RULES: list[tuple[Kind, re.Pattern[str]]] = [
    # Someone's day: "my son's birthday is april 19th", "our anniversary is september 14th".
    ("date", re.compile(
        rf"^(?:(?:my|our|the) (?:\w+ )?(?:{_PEOPLE}'?s? )?|\w+'s )(?:\w+ ){{0,2}}?{_OCCASION}"
        r"\b(?!.*\b(?:was|went|got cancelled)\b)"
    )),
    ("date", re.compile(
        rf"^(?:(?:we|i) (?:met|got married|were married|got engaged)|{_IM} getting married"
        rf"|(?:my|our) (?:\w+ )?{_PEOPLE} (?:passed|died|was born|were born|got married))\b"
    )),
    ("date", re.compile(rf"^(?:my|our|the) (?:{_PEOPLE}) (?:have|has|had)? ?no {_OCCASION}")),
    # Plans: what the user will do, or has booked, on a day ahead.
    ("plan", re.compile(
        rf"^{_IM} {_ADV}(?:going|flying|driving|heading|travell?ing|moving|starting|leaving"
        r"|visiting|meeting|seeing|having|getting|taking|running|doing|hosting|attending"
        r"|throwing|celebrating|spending|staying|off|away|out|back|coming|picking|dropping"
        r"|playing|working|retiring|changing|switching|selling|buying|renovating|training"
        r"|competing|presenting|speaking|giving|joining|quitting|catching|booked|signed)\b"
    )),
    ("plan", re.compile(
        rf"^{_I}(?:'ll| {_ADV}(?:will|shall|start|begin|leave|fly|go|move|retire|booked"
        r"|signed up|arranged|plan to|intend to|decided to|said i'?d|promised)"
        rf"|{_HAVE} (?:just |already )?(?:booked|signed up|arranged|decided to|got)|{_HAVE})\b"
    )),
    ("plan", re.compile(
        rf"^(?:the |my |our )?(?:\w+ )?{_PEOPLE}'?s? (?:is|are) (?:coming|visiting)"
    )),
    ("plan", re.compile(
        r"^the (?:team|office|family|club|band|church|school)'?s? (?:doing|having)"
    )),
    # Preferences: likes, diets, allergies, habits, how to be answered.
    ("preference", re.compile(
        rf"^i {_ADV}(?:love|like|adore|enjoy|prefer|hate|dislike|detest|loathe|can'?t stand"
        r"|cannot stand|can not stand|don'?t like|do not like|don'?t care for|don'?t eat"
        r"|do not eat|don'?t drink|do not drink|don'?t do|can'?t eat|cannot eat|can'?t have"
        r"|never eat|never drink|never|only eat|only drink|always|usually|avoid|'d rather"
        r"|would rather)\b"
    )),
    ("preference", re.compile(
        rf"^{_IM} {_ADV}(?:allergic|intolerant|vegetarian|vegan|pescatarian|gluten[- ]free"
        r"|lactose intolerant|teetotal|kosher|halal|coeliac|celiac|(?:a |an |not a )?(?:big |huge"
        r" )?fan of|into|not into|a (?:morning|night|early) (?:person|bird|owl))\b"
    )),
    ("preference", re.compile(r"^(?:my|our) (?:all[- ]time )?(?:favou?rite|fave|preferred)\b")),
    ("preference", re.compile(
        r"^\w+(?: \w+){0,3} is my (?:all[- ]time )?(?:favou?rite|fave)\b"
    )),
    ("preference", re.compile(r"^.{2,40}that'?s how i (?:like|take|want|have) (?:it|them|mine)")),
    # People in the user's life.
    ("person", re.compile(
        rf"^(?:my|our) (?:\w+ )?{_PEOPLE}(?:'s (?=a |an |\d|\w+ing\b|in |at |from |on |off "
        r"|back|away|married|divorced|retired|pregnant|called|named|been|got|gone|just|still"
        r"|also|always|never|really|very|so |now|currently|nearly|almost|only)|\b(?!'s)"
        r"(?:,? \w+,?)?(?: \w+)? (?:is|are|was|just|lives|works|turned|has|had|loves|hates|can'?t"
        r"|doesn'?t|got|started|moved|goes|studies|plays|teaches|runs|owns|drives|watches"
        r"|looks after|helps|speaks|she'?s|he'?s|they'?re|who|called|named)\b)"
    )),
    ("person", re.compile(rf"^\w+(?: \w+)? (?:is|'s) my (?:\w+ )?{_PEOPLE}\b")),
    ("person", re.compile(
        rf"^{_I}{_HAVE} (?:a |an |two |three |four |five |\d+ )"
        rf"(?:\w+ )?(?:{_PEOPLE}|boys|girls|sons|daughters|brothers|sisters)\b"
    )),
    # Facts: home, work, languages, health, what the user owns or is.
    ("fact", re.compile(
        rf"^(?:{_I}|{_IM}) {_ADV}(?:live|living|based|reside|moved|relocated|work|working"
        r"|teach|teaching|speak|drive|ride|own|run|study|studying|studied|grew up|was born"
        r"|retired|volunteer|volunteering|coach|play|originally from|from|'ve lived|have lived"
        r"|'ve been (?:living|working|in)|have been (?:living|working|in))\b"
    )),
    ("fact", re.compile(
        rf"^{_IM} (?:in|living in) (?:a|an|the) (?:\w+ ){{0,2}}(?:flat|house|apartment|bungalow"
        r"|cottage|condo|studio|terrace|semi|farmhouse|caravan|houseboat)\b"
    )),
    ("fact", re.compile(
        rf"^{_IM} {_ADV}(?:a|an) (?!(?:bit|little|lot|mess|wreck|fan|big fan|huge fan|idiot|genius"
        r"|fool|disaster|legend|nightmare|moron|dummy|nervous wreck|total|complete)\b)\w+"
    )),
    ("fact", re.compile(
        rf"^{_IM} {_ADV}(?:\d+|\w+(?:[- ]\w+)?) years? old|^{_IM} {_ADV}(?:married|divorced"
        r"|single|engaged|widowed|retired|pregnant|left[- ]handed|right[- ]handed"
        r"|colou?r ?blind|(?:red[- ]green )?colou?r[- ]?blind|deaf|diabetic|asthmatic"
        r"|epileptic|dyslexic|autistic|short[- ]sighted|long[- ]sighted|self[- ]employed"
        r"|unemployed|a student|registered|on (?:medication|insulin))\b"
    )),
    ("fact", re.compile(
        rf"^{_I}{_HAVE} {_ADV}(?:a |an )?(?:\w+ ){{0,2}}?(?:diabetes"
        r"|asthma|arthritis|epilepsy|migraines|allergies|allergy|condition|adhd|anxiety"
        r"|depression|celiac|coeliac|a heart condition|high blood pressure|dog|cat|car|van"
        r"|bike|house|flat|apartment|garden|allotment|boat|degree|phd|masters)\b"
    )),
    ("fact", re.compile(
        r"^(?:my|our) (?:\w+ )?(?:address|postcode|post code|zip code|zip|blood type|car|bike"
        r"|van|house|flat|apartment|home|office|job|company|school|gym|shoe size|size|height"
        r"|phone number|number|email|wifi password|password|pin|passcode|code|team|church"
        r"|surgery|bank|insurance|allergy|diet|degree|first language|native language|language"
        r"|star sign)s?\b(?:'s| is| are)"
    )),
]
# fmt: on
# Secrets: a note that holds one is private (it never reaches a tool that sends data out).
_SECRET = re.compile(
    r"\b(?:password|passcode|pin|pin number|code|combination|social security|ssn|account number"
    r"|card number|sort code|security question)\b"
)


def notice(text: str, now: datetime) -> list[Noticed]:
    """The notes `text` states, one per sentence at most, in order; [] when it states none.

    `now` dates the days said relative to it ("friday", "the 16th", "in two weeks")."""
    low = _lower(text)
    if _TAKEN_BACK.search(low) or _SARCASM.search(low.strip()):
        return []
    found: list[Noticed] = []
    for m in _SENTENCE.finditer(low):
        noticed = _sentence(text, m.start(), m.end(), now)
        if noticed is not None:
            found.append(noticed)
    return found


def _sentence(text: str, start: int, end: int, now: datetime) -> Noticed | None:
    low = _lower(text[start:end])
    if low.rstrip().endswith("?"):
        return None
    lead = _LEAD.match(low)
    skip = lead.end() if lead else 0
    tail = _TAIL.search(low)
    stop = tail.start() if tail else len(low.rstrip(" .!"))
    core = low[skip:stop].strip(" ,")
    if len(core.split()) < 2 or _UNSURE.search(core):
        return None
    if _ASKS.match(core) and _STYLE.search(core) is None:
        return None  # "when you tell me the temperature, use celsius" is a standing request
    days = list(_DAY.finditer(core))
    kind = next((k for k in _kinds(core) if _holds(k, core, days)), None)
    if kind is None:
        return None
    said = text[start + skip : start + stop].strip(" ,")
    today = now.date()
    dated = [d for m in days if not m.group("hol") and (d := _date_of(m, today)) is not None]
    until = max(dated) if kind == "plan" and dated else None
    return Noticed(kind, _written(said, days, today), bool(_SECRET.search(core)), until)


def _lower(text: str) -> str:
    """Lower case letter for letter, so a match's place is the same in the words as said ("İ"
    would lower to two characters, and stays as it is); curly apostrophes made straight."""
    low = "".join(c if len(c.lower()) != 1 else c.lower() for c in text)
    return low.replace("\u2019", "'").replace("\u2018", "'")


def _kinds(core: str) -> list[Kind]:
    """The kinds whose shape `core` has, in the order the rules are tried."""
    style = _STYLE.search(core) is not None or name_in(core) is not None
    if _COMMAND.match(core):
        return ["preference"] if style else []
    kinds = [kind for kind, rule in _RULES if rule.search(core)]
    return [*kinds, "preference"] if style else kinds


def _holds(kind: Kind, core: str, days: list[re.Match[str]]) -> bool:
    """Whether `core`, in `kind`'s shape, states something lasting."""
    if kind == "plan":
        return bool(days) or _AHEAD.search(core) is not None  # not "I'm going to the shop"
    if kind == "date":
        return bool(days) or re.search(rf"\b{_MONTH}\b", core) is not None
    return _NOW_ONLY.search(core) is None and not _passing(core, kind)


def _passing(core: str, kind: Kind) -> bool:
    """A state of the moment said in a fact's or a person's shape ("I'm so hungry", "my son is
    sick", "my wife is cooking"), or a preference that points at the moment ("I love that", "I
    hate it when you do that", "I never said that")."""
    if kind == "preference":
        return _POINTING.search(core) is not None
    if kind not in ("fact", "person"):
        return False
    m = _STATE_WORD.search(core)
    if m is None:
        return False
    word = m.group(1)
    return _PASSING.fullmatch(word) is not None or (word.endswith("ing") and word not in _LASTING)


def _written(said: str, days: list[re.Match[str]], today: date) -> str:
    """`said` as a note: "I" capitalized, a relative day written out after it, a full stop."""
    out = said
    for m in reversed(days):
        day = _date_of(m, today)
        if day is None:
            continue
        label = f"{day.day} {_MONTHS[day.month - 1].title()}"
        if m.group("md") or m.group("dm"):
            # Said with its month: written plainly, in place ("the 2nd of june": "2 June").
            year = re.search(r"\d{4}", m.group(0))
            label += f" {year.group()}" if year else ""
            out = f"{out[: m.start()]}{label}{out[m.end() :]}"
            continue
        if m.group("hol"):
            out = f"{out[: m.end()]} ({label}){out[m.end() :]}"  # a day of every year
            continue
        out = f"{out[: m.end()]} ({day:%A} {label} {day.year}){out[m.end() :]}"
    out = re.sub(r"\bi\b", "I", out)
    out = out[:1].upper() + out[1:]
    return out if out.endswith((".", "!")) else out + "."


def _date_of(m: re.Match[str], today: date) -> date | None:
    """The day a matched phrase names, the next on or after today."""
    if m.group("rel"):
        return today + timedelta(days=2 if "after" in m.group("rel") else 1)
    if m.group("in"):
        parts = m.group("in").split()
        unit = parts[-1]
        n = _NUMBER.get(" ".join(parts[1:-1]), 0) or (int(parts[1]) if parts[1].isdigit() else 0)
        if unit.startswith("day"):
            return today + timedelta(days=n)
        if unit.startswith("week"):
            return today + timedelta(weeks=n)
        month = today.month - 1 + n
        try:
            return today.replace(year=today.year + month // 12, month=month % 12 + 1)
        except ValueError:
            return None
    if m.group("hol"):
        month, day = _HOLIDAYS[m.group("hol")]
        found = date(today.year, month, day)
        return found if found >= today else date(today.year + 1, month, day)
    phrase = (m.group("md") or m.group("dm") or m.group("ord") or m.group("wd") or "").strip()
    phrase = re.sub(r",? \d{4}$", "", phrase)
    for short, full in zip(
        ("jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec"),
        ("january", "february", "march", "april", "june", "july", "august", "september",
         "september", "october", "november", "december"),
        strict=True,
    ):  # fmt: skip
        phrase = re.sub(rf"\b{short}\b", full, phrase)
    phrase = re.sub(r"\bthis coming\b|\bcoming\b", "this", phrase)
    phrase = re.sub(rf"^({_MONTH}) the ", r"\1 ", phrase)
    return day_named(phrase, today)
