"""The recall bench's memory: weeks of notes, a few hundred facts in them, and questions.

`generate(notes, facts, seed)` is deterministic for its arguments. Three kinds of planted fact,
each with one question whose words are not the note's (a synonym, another construction):

- about a person or a place ("Maya's shoe size is 38." / "What size footwear does Maya
  take?"); every other pairing of those people and places with those attributes is in memory
  too, as a distractor, so the name and the attribute must both match;
- about a household thing on a day, among its other notes weeks apart ("What did I tell you
  last Tuesday about the heating?" for one of several boiler notes), the day said as a person
  would (yesterday, on Tuesday, last week, two weeks ago, in early March);
- before or after an event ("before the trip"), with one note on each side.

The rest is everyday chatter (shopping, films, errands, meetings) in sessions over eight weeks.
The words of the templates were written once, before any figure was measured; the default seed
(2) is not the one recall was tuned on (1).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

# A Friday evening; "last Tuesday" is then three days back.
NOW = datetime(2026, 3, 27, 19, 0, tzinfo=UTC)
DAYS = 56

# fmt: off
NAMES = [
    "Maya", "Tom", "Priya", "Jonas", "Aisha", "Luca", "Hannah", "Omar", "Sofia", "Ben", "Chloe",
    "Dev", "Elena", "Felix", "Grace", "Hugo", "Ines", "Jack", "Keiko", "Leo", "Mia", "Nikhil",
    "Olivia", "Pablo", "Rosa", "Sam", "Tara", "Umar", "Vera", "Will", "Yara", "Zoe", "Aaron",
    "Bianca", "Carlos", "Dana", "Ethan", "Fatima", "George", "Helga",
]
PLACES = [
    "cabin", "office", "gym", "library", "allotment", "studio", "warehouse", "cottage", "marina",
    "community centre", "church hall", "golf club", "swimming pool", "workshop", "beach hut",
]
# attribute: (note templates, question templates, values)
PERSON: dict[str, tuple[list[str], list[str], list[str]]] = {
    "shoes": (["{n}'s shoe size is {v}.", "{n} wears size {v} shoes."],
              ["What size footwear does {n} take?", "Which size trainers should I get for {n}?"],
              [str(v) for v in range(36, 47)]),
    "birthday": (["{n}'s birthday is on {v}.", "{n} was born on {v}."],
                 ["When should I send {n} a card for turning a year older?",
                  "What date does {n} celebrate getting older?"],
                 [f"{m} {d}" for m in ("June", "July", "August", "October")
                  for d in (3, 9, 14, 21)]),
    "allergy": (["{n} is allergic to {v}.", "{n} reacts badly to {v}, never serve it."],
                ["Is there any food {n} can't have?",
                 "What must I leave off the menu when {n} comes for dinner?"],
                ["peanuts", "shellfish", "sesame", "kiwi", "eggs", "strawberries", "gluten"]),
    "drink": (["{n}'s favourite drink is {v}.", "{n} always asks for {v}."],
              ["What should I pour for {n} when they visit?",
               "Which beverage does {n} enjoy most?"],
              ["oolong tea", "ginger beer", "flat white", "rooibos", "sparkling water",
               "lemonade"]),
    "phone": (["{n}'s mobile number is {v}.", "{n} can be reached on {v}."],
              ["How do I ring {n}?", "What digits do I dial to call {n}?"],
              [f"07700 9{d:05d}" for d in range(0, 99991, 7919)]),
    "employer": (["{n} works at {v}.", "{n} has a job at {v}."],
                 ["Which company employs {n}?", "Where does {n} earn a living?"],
                 ["Northwind Logistics", "Bluebell Bakery", "the city council", "Acme Robotics",
                  "St Mary's hospital", "a law firm in Leeds"]),
    "pet": (["{n} has a {v}.", "{n}'s {v} lives with them."],
            ["What is the name of {n}'s animal?", "Does {n} keep any creature at home?"],
            ["tabby cat called Pickle", "spaniel called Rufus", "parrot called Kiwi",
             "tortoise called Sheldon", "rabbit called Clover", "greyhound called Dash"]),
    "city": (["{n} lives in {v}.", "{n}'s flat is in {v}."],
             ["Which town is {n}'s home?", "Where does {n} reside these days?"],
             ["Bristol", "Glasgow", "York", "Cardiff", "Norwich", "Brighton", "Bath", "Dundee"]),
    "gift": (["{n} would love {v} as a present.", "Gift idea for {n}: {v}."],
             ["What could I buy {n} for a surprise?", "Any thoughts on what to get {n}?"],
             ["a pottery class", "noise-cancelling headphones", "a cast-iron pan",
              "a telescope", "a board game", "a silk scarf"]),
    "partner": (["{n}'s partner is called {v}.", "{n} is married to {v}."],
                ["Who is {n}'s other half?", "What's the name of {n}'s spouse?"],
                ["Rafael", "Ingrid", "Kwame", "Lottie", "Mateo", "Sunita", "Declan", "Noor"]),
    "car": (["{n} drives a {v}.", "{n}'s car is a {v}."],
            ["What vehicle does {n} have?", "Which motor is {n}'s?"],
            ["red Fiat 500", "grey Volvo estate", "blue Golf", "white Tesla", "green Mini"]),
}
PLACE: dict[str, tuple[list[str], list[str], list[str]]] = {
    "wifi": (["The Wi-Fi password at the {n} is {v}.", "Wi-Fi at the {n}: password {v}."],
             ["What's the wireless key for the {n}?", "How do I get online at the {n}?"],
             [f"{w}{d}" for w in ("pinecone", "harbour", "maple", "comet", "otter")
              for d in (7, 42, 88)]),
    "code": (["The door code for the {n} is {v}.", "The keypad at the {n} opens with {v}."],
             ["What number unlocks the entrance of the {n}?", "How do I let myself into the {n}?"],
             [f"{d:04d}" for d in range(1234, 9999, 977)]),
    "hours": (["The {n} opens at {v} on weekdays.", "Weekday opening time at the {n} is {v}."],
              ["What time can I turn up at the {n} Monday to Friday?",
               "When are the {n}'s doors unlocked during the working week?"],
              ["6 am", "7:30", "8 am", "9:15", "10 am"]),
    "parking": (["Park on {v} when going to the {n}.", "For the {n}, leave the car on {v}."],
                ["Where do I leave the vehicle for the {n}?",
                 "Which street is best to stop at for the {n}?"],
                ["Mill Lane", "Station Road", "Queen Street", "the Tesco car park", "Elm Grove"]),
}
# Household things: the word notes use, and the words a question names it by (often the same
# word, as people say it; sometimes another).
THINGS: dict[str, list[str]] = {
    "boiler": ["the boiler", "the heating"], "fridge": ["the fridge", "the refrigerator"],
    "washing machine": ["the washing machine", "the washer"], "roof": ["the roof"],
    "dishwasher": ["the dishwasher"], "oven": ["the oven", "the cooker"],
    "laptop": ["the laptop", "my computer"], "bike": ["the bike", "my bicycle"],
    "printer": ["the printer"], "shower": ["the shower"],
    "garage door": ["the garage door", "the garage"], "lawnmower": ["the lawnmower", "the mower"],
    "router": ["the router", "the wifi box"], "tumble dryer": ["the tumble dryer", "the dryer"],
    "chimney": ["the chimney"], "doorbell": ["the doorbell"],
}
ISSUES = [
    "The {t} started making a loud clicking noise.", "Water is dripping from under the {t}.",
    "The engineer says the {t} needs a new {p}.", "Booked a repair visit for the {t} next week.",
    "The {t} is working again after a reset.", "Got a quote of {m} pounds to replace the {t}.",
    "The {t} smells of burning when it runs.", "Warranty on the {t} runs out in {mo}.",
    "Ordered a spare {p} for the {t} online.", "The {t} keeps tripping the fuse.",
]
PARTS = ["valve", "pump", "seal", "fan", "sensor", "filter", "belt", "switch", "control board"]
# event: (the note that dates it, how a question names it, and for each thing: the note
# before, the note after, how a question names the thing)
EVENTS: dict[str, tuple[str, str, list[tuple[str, str, list[str]]]]] = {
    "trip": ("Off to Lisbon tomorrow for the trip, back in nine days.", "the trip", [
        ("Asked Greta next door to water the plants.",
         "Half the plants wilted; the ferns survived.", ["the plants", "the pot plants"]),
        ("The sorting office will hold our letters until the 20th.",
         "Collected a pile of letters from the sorting office.", ["the post", "the mail"]),
        ("The cattery in Ashby takes Biscuit for 30 pounds a night.",
         "Biscuit came home from the cattery thinner than before.", ["Biscuit", "our cat"]),
    ]),
    "wedding": ("Chloe and Rafael's wedding is this Saturday in Harrogate.", "the wedding", [
        ("The navy suit needs taking in at the waist.",
         "The navy suit has a wine stain on the lapel now.", ["my suit"]),
        ("Drafted three jokes for the best man speech.",
         "The speech went well, the cake joke got the biggest laugh.",
         ["the speech", "my best man speech"]),
        ("Booked the Crown Inn for two nights near the venue.",
         "The Crown Inn charged extra for a late checkout.", ["the hotel", "where we stayed"]),
    ]),
    "operation": ("Knee operation at St Luke's is first thing tomorrow.", "the operation", [
        ("The knee aches most when climbing stairs.",
         "The knee bends to ninety degrees now, physio is pleased.", ["my knee"]),
        ("Stocked up on ibuprofen and paracetamol.",
         "Stop taking the codeine after ten days, says the nurse.",
         ["the painkillers", "the medication"]),
        ("Work needs a sick note covering two weeks.",
         "The GP extended the sick note to the end of the month.", ["the sick note"]),
    ]),
    "conference": ("Flying to Berlin for the conference in the morning.", "the conference", [
        ("The slides still need the benchmark chart.",
         "Three people asked for a copy of the slides.", ["the slides", "my presentation"]),
        ("Keep every receipt for the expenses claim.",
         "The expenses claim came to 412 pounds in the end.", ["the expenses", "my expenses"]),
    ]),
}
DATED_QUESTIONS = [
    "What did I tell you {when} about {t}?", "What was going on with {t} {when}?",
    "{When}, what did I say about {t}?", "Remind me what I noted about {t} {when}.",
]
EVENT_QUESTIONS = ["What did I note about {t} {rel} {e}?", "{Rel} {e}, what was the news on {t}?"]
CHATTER = [
    "Bought {q} {g} at {s}.", "Watched {f} with {n}; {o}.", "Idea: {i}.",
    "Remember to {c} before the weekend.", "{n} recommended the novel {b}.",
    "Spent {m} pounds on {it} at {s}.", "Meeting with {n} about {pr} went {h}.",
    "Ran {k} km along the river this morning.", "Recipe to try: {d} with {g}.",
    "{n} mentioned that {pr} is behind schedule.", "Need more {g} for the {d}.",
    "Call {n} back about {pr}.", "{n} said {f} was {o}.", "Return the {it} to {s}.",
    "Paid {m} pounds for {x}.", "{n} is coming over on {wd} for {meal}.",
    "Train to {city} at {hh}:{mm} from platform {k}.", "Walked {steps} steps today.",
    "Borrowed the {it} from {n}.", "Ran {k} km along the river in {mins} minutes.",
    "Podcast worth finishing: episode {ep} of {pod}.",
]
FILL = {
    "q": ["two", "three", "a dozen", "a bag of", "a box of", "half a kilo of"],
    "g": ["apples", "oats", "rice", "lentils", "tomatoes", "basil", "yoghurt", "coffee beans",
          "pasta", "spinach", "cheddar", "bread flour", "chickpeas", "honey", "limes"],
    "s": ["the market", "Lidl", "the corner shop", "Waitrose", "the farm shop", "Boots", "Argos"],
    "f": ["Dune", "Paddington 2", "the new Bond film", "Past Lives", "Arrival", "Amelie"],
    "o": ["too long", "brilliant", "a bit slow", "worth it", "forgettable", "very funny"],
    "i": ["a podcast about local history", "a shared tool library on the street",
          "learning to make sourdough", "a monthly board game night",
          "walking to work twice a week",
          "a photo book of the year", "planting a herb garden", "taking up bouldering"],
    "c": ["renew the library books", "pay the window cleaner", "book an eye test",
          "back up the photos",
          "sort the recycling", "top up the travel card", "buy stamps", "clean the bins"],
    "b": ["The Overstory", "Piranesi", "Klara and the Sun", "Middlemarch", "Shuggie Bain"],
    "m": ["12", "25", "40", "65", "90", "130"],
    "it": ["drill", "extension lead", "picnic blanket", "camping stove", "step ladder",
           "hedge trimmer"],
    "pr": ["the quarterly report", "the website redesign", "the budget review", "the hiring plan",
           "the school fete", "the club newsletter", "the data migration"],
    "h": ["well", "badly", "better than expected", "round in circles"],
    "k": ["4", "5", "7", "10"],
    "d": ["curry", "risotto", "stew", "salad", "soup", "pie"],
    "x": ["the concert tickets", "the taxi home", "dinner at Nando's", "the parking fine",
          "the window cleaner", "the school trip", "a new kettle", "the football tickets"],
    "wd": ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"],
    "meal": ["lunch", "dinner", "coffee", "brunch", "drinks"],
    "city": ["Leeds", "London", "Bristol", "Manchester", "Oxford", "Reading", "Derby"],
    "hh": [str(h) for h in range(6, 22)], "mm": ["05", "17", "30", "42", "55"],
    "steps": [f"{n:,}" for n in range(3000, 16000, 13)], "mins": [str(n) for n in range(18, 80)],
    "ep": [str(n) for n in range(1, 120)],
    "pod": ["In Our Time", "The Rest Is History", "Desert Island Discs", "Radiolab"],
}
# fmt: on


@dataclass(frozen=True)
class Note:
    text: str
    at: datetime


@dataclass(frozen=True)
class Question:
    text: str
    answer: str  # the right note's text (unique in the memory)
    kind: str  # "fact", "dated" or "event"


@dataclass
class Memory:
    notes: list[Note]
    questions: list[Question]
    now: datetime = NOW


def _at(rng: random.Random, days_back: int) -> datetime:
    day = NOW.replace(hour=0, minute=0) - timedelta(days=days_back)
    return day + timedelta(hours=rng.randint(7, 21), minutes=rng.randint(0, 59))


def _day_phrase(days_back: int, others: list[int], rng: random.Random) -> str | None:
    """How a person names the day a note was written, if that names it alone among `others`."""
    note_day = (NOW - timedelta(days=days_back)).date()
    if days_back == 1:
        return "yesterday"
    if 2 <= days_back <= 6:
        name = note_day.strftime("%A")
        return rng.choice([f"on {name}", f"last {name}"])
    week_start = NOW.date() - timedelta(days=NOW.weekday())
    last_week = week_start - timedelta(days=7) <= note_day < week_start
    if last_week and not any(
        week_start - timedelta(days=7) <= (NOW - timedelta(days=o)).date() < week_start
        for o in others
    ):
        return "last week"
    weeks = round(days_back / 7)
    if (
        2 <= weeks <= 6
        and abs(days_back - 7 * weeks) <= 2
        and all(abs(o - 7 * weeks) > 5 for o in others)
    ):
        return f"{('two', 'three', 'four', 'five', 'six')[weeks - 2]} weeks ago"
    month = note_day.month
    same_month = [o for o in others if (NOW - timedelta(days=o)).date().month == month]
    if note_day.day <= 10 and not [o for o in same_month if (NOW - timedelta(days=o)).day <= 11]:
        return f"in early {note_day.strftime('%B')}"
    if not same_month and note_day.month != NOW.month:
        return f"in {note_day.strftime('%B')}"
    return None


def _fill(template: str, rng: random.Random) -> str:
    values = {k: rng.choice(v) for k, v in FILL.items()}
    return template.format(n=rng.choice(NAMES), **values)


def generate(notes: int, facts: int, seed: int = 2) -> Memory:
    """About `notes` notes with `facts` planted facts among them, and one question per fact."""
    rng = random.Random(seed)
    # Questions draw from their own generator, so rewording one never changes the notes.
    ask = random.Random(f"{seed}-questions")
    out: list[Note] = []
    questions: list[Question] = []
    sides = 2 * sum(len(e[2]) for e in EVENTS.values())
    want_dated, want_event = facts // 4, min(facts // 8, sides)

    # Household things: notes 9-13 days apart, each asked about by the day it was written.
    dated: list[tuple[str, str, int, list[int]]] = []
    for thing in THINGS:
        days = []
        d = rng.randint(1, 6)
        while d < DAYS:
            days.append(d)
            d += rng.randint(9, 13)
        issues = rng.sample(ISSUES, len(days))
        for day, issue in zip(days, issues, strict=True):
            text = issue.format(t=thing, p=rng.choice(PARTS), m=rng.randint(80, 900), mo="June")
            out.append(Note(text, _at(rng, day)))
            dated.append((thing, text, day, [o for o in days if o != day]))
    rng.shuffle(dated)
    for thing, text, day, others in dated:
        if len([q for q in questions if q.kind == "dated"]) >= want_dated:
            break
        when = _day_phrase(day, others, ask)
        if when is None:
            continue
        t = ask.choice(THINGS[thing])
        q = ask.choice(DATED_QUESTIONS).format(when=when, When=when[0].upper() + when[1:], t=t)
        questions.append(Question(q, text, "dated"))

    # Events: the note that dates each, and one note on each side of it per thing.
    sided: list[tuple[str, str, str]] = []
    for word, (event_note, name, things) in EVENTS.items():
        day = rng.randint(12, DAYS - 12)
        out.append(Note(event_note, _at(rng, day)))
        for before, after, synonyms in things:
            out.append(Note(before, _at(rng, day + rng.randint(1, 9))))
            out.append(Note(after, _at(rng, day - rng.randint(1, 9))))
            t = ask.choice(synonyms)
            key = f"{t}|{name}|{word}"
            sided += [(before, "before", key), (after, "after", key)]
    ask.shuffle(sided)
    for text, rel, key in sided[:want_event]:
        t, name, _ = key.split("|")
        q = ask.choice(EVENT_QUESTIONS).format(t=t, e=name, rel=rel, Rel=rel.capitalize())
        questions.append(Question(q, text, "event"))

    # People and places: every pairing is a note; `facts` of them are asked about.
    pairs: list[tuple[str, str, tuple[list[str], list[str], list[str]]]] = [
        (n, a, spec) for n in NAMES for a, spec in PERSON.items()
    ] + [(p, a, spec) for p in PLACES for a, spec in PLACE.items()]
    rng.shuffle(pairs)
    room = max(0, notes - len(out))
    pairs = pairs[: max(facts - len(questions), min(len(pairs), room // 2))]
    for who, _, (note_forms, question_forms, values) in pairs:
        text = rng.choice(note_forms).format(n=who, v=rng.choice(values))
        out.append(Note(text, _at(rng, rng.randint(1, DAYS))))
        if len(questions) < facts:
            questions.append(Question(ask.choice(question_forms).format(n=who), text, "fact"))

    # Everyday chatter up to `notes`, every text once.
    seen = {n.text for n in out}
    misses = 0
    while len(out) < notes:
        text = _fill(rng.choice(CHATTER), rng)
        if text in seen:
            misses += 1
            if misses > 100 * notes:
                raise ValueError(f"cannot make {notes:,} different notes from the templates")
            continue
        seen.add(text)
        out.append(Note(text, _at(rng, rng.randint(1, DAYS))))
    out.sort(key=lambda n: n.at)
    return Memory(out, questions)
