"""More near misses for the state path's classifier: questions in the status questions' own
words that ask about the world, other people, other things or Annie herself.

Beside `context.intent_examples_none`: the time, date or schedule of somewhere or something
else (a shop, a match, a train, another city), other things' status and fullness (a parcel, a
phone's memory, a car park), general knowledge about the same words, other people's plans,
questions about Annie, and small talk, with the same fillers and slips as the status examples
("okay Annie", "quick question", no punctuation). Examples are separated by " | ".
"""

from __future__ import annotations

NONE = """
what's up with you today | yo annie what's up
what's up with you lately | sup annie | what's been up with you | what's up with you these days
okay annie what time does the shop close | hey what time does the supermarket open tomorrow
quick question what time does the chemist shut | I wonder what time the pub closes tonight
can you tell me what time the bank opens | do you happen to know when the post office closes
what time does tesco close today | what time does the gym open on sunday
what time do the shops shut | what time does the library open today | when does the pool open
what time is the last bus tonight | what time is the next train to london
what time does my flight land | what time does the match kick off
what time does the game start tonight
what time is the race tomorrow | what time is the final | what time is the news on
what time is the concert tonight | what time is sunset tonight | what time does it get dark
what time is it getting light tomorrow | what's the time in sydney | what time is it in india
what's the time in dubai | what time is it in mexico city | what time is it back home in ireland
what's the time over there in australia | time in berlin? | what's the date in new zealand today
is it tomorrow in japan already
what's the time difference to spain | how many hours ahead is tokyo | is it daylight saving time now
when do the clocks go forward | what time was it an hour ago | what time will it be in three hours
what's the time plus forty minutes | what's ninety minutes from now
what time would it be in london if it's noon here | convert five pm to twenty four hour time
how many hours till the weekend | how many days until my holiday
how many weeks until summer | how long till the end of term | how many sleeps till christmas
how long is it till half term | how many days are there in a fortnight
what does arvo mean | what does fortnight mean | what is a diary entry | how do I keep a diary
what's the difference between a diary and a journal | what's a bullet journal | what's a day planner
who invented the to-do list | what's the oldest calendar | why are there seven days in a week
why is a year three hundred and sixty five days | what day of the week was I born on
what day of the week will christmas be | when is the summer solstice
what date is the next bank holiday | when is the school holiday | when does term start
what year did the titanic sink | what year did queen elizabeth die | what year was I born
how old will I be in twenty thirty | what's the date of the next election | when is the world cup
what's the fixture list this weekend | who's playing today
what's on the telly this arvo | what's on bbc one tonight | what's on the radio this morning
what's on at the pictures this weekend | what's on in the west end | what's on at the arts centre
what's happening in the city this weekend | what's happening at the festival today
what's coming out at the cinema this week | what new films are coming up | what games are coming out
what albums are coming out this week | what's new on netflix this week | anything new on disney plus
what's the next song | what's next in the queue on spotify
what's the next episode about | when's the next season out | when is the next harry potter film
what's next in this recipe | what's the next step after kneading | what do I do next with the dough
what comes next in the sequence | what's next in the alphabet after q | what comes after a billion
what's up next on the show | who's up next on stage | who's next in the queue at the deli
what's the status of my parcel | has my package been delivered
when's my delivery coming | what's the status of my ebay order
is my car ready at the garage | has the plumber confirmed | did the builder reply
has my boss approved my leave | did my manager sign off my expenses | is my holiday approved
has the council approved the extension | is the visa approved | has the mortgage gone through
is the payment still pending | why is my card payment pending | how long does a pending payment take
what does pending mean on ebay
what's a pending friend request | what's a pending order | why is my app update pending
why is my download stuck on pending | what does outstanding mean on a loan
what's an outstanding invoice | who's the most outstanding player
what does blocked mean on instagram | is my debit card blocked
why is the motorway blocked | my ears feel blocked | my toilet is blocked
my gutter is blocked | who blocked me on facebook | how do I block a number
how to unblock a website | why am I always stuck in traffic | my car is stuck in the mud
my finger is stuck in the jar | the lift is stuck | my phone is stuck on the logo
the drawer is stuck | the song is stuck in my head | what's a held up check | why is my post held up
why is the train held up | the flight is held up | what's on hold at the library
how long will I be on hold | I've been on hold for an hour | why is my account on hold
why has my order stalled | why does my engine stall | what causes a car to stall
what is a stall in aviation | what's a market stall | how much memory has my phone got left
how much ram is in my pc | how do I check my laptop's memory | how much storage is on my ipad
is my icloud full | how full is my google drive | how much space is on my sd card
how much memory does the game need | how much memory does windows need
is thirty two gigabytes of ram too much | how much memory does a goldfish have
how good is my memory | why is my memory so bad lately | how do I improve my short term memory
is my memory normal for my age | what's photographic memory | what's muscle memory
how full is the car | how full is the petrol tank | is the petrol tank nearly empty
how full is the train | how full is the stadium | is the bin full | is the wheelie bin full
how full is the washing machine | how full is the freezer | is my inbox full | is my voicemail full
my mailbox is full | the car park is full | is the restaurant full tonight
how much room is in the boot | how much room is left in the freezer | is there room on the bus
how much space do I need for a sofa | how much space is in a shipping container
how much space does a dog need | how close is the nearest petrol station | how close is the beach
how close are we to home | how close is the storm | how close to the sun is mercury
how close is the deadline for tax returns | how many tokens does gpt use
what's the context window of claude | how big is llama's context
how long can a chatgpt conversation be | how do large language models remember
what's a token limit | what's the token limit for chatgpt | how many words is a thousand tokens
how do tokens work in ai | what's context in english grammar | what's the context of this quote
put this in context for me | what's the historical context of the poem | give me context on the war
what's the context here | what's the context of the meeting | why does context matter in writing
what's a context clue | what is a list in python | how do I sort a list in python
what's a linked list | what's a bucket list | what's on your bucket list
what should be on my bucket list | what's on the menu tonight | what's on the specials board
what's on the shopping list for christmas dinner | what's on the guest list
who's on the guest list | what's on the reading list for school | what's on the syllabus
what's on the exam | what's on the test tomorrow | what's on the curriculum
what's a task in windows | what does task mean | what is a task in school | what's a taskmaster
what are the tasks in the apprentice | what are the tasks of a receptionist
what jobs are there in london | what jobs pay the most | what jobs can I do from home
any jobs going | what's the job market like | what's a good job for a teenager | what are odd jobs
what approvals do I need for a loft conversion | what approvals does a drug need
what's fda approval | what's planning permission | do I need permission to cut down a tree
what's parental consent | how do I confirm my identity | how do I confirm a paypal payment
what's a confirmation number | what's a confirmation email | where's my booking confirmation
what's an approval rating | what's my credit limit | what's the speed limit here
what's the limit on contactless | what's the weight limit | what's the age limit for the ride
what's the limit for drink driving | what's the baggage limit | what's the capacity of the o2 arena
what's the capacity of a double decker | what's the capacity of my car boot
what's due on my council tax | when's the electric bill due
when's the gas bill due | when is the mot due | when's the car insurance due
when is my tv licence due | when's my library book due back | when is the baby due
when is my assignment due at uni | what's the due date for my essay
when is the tax return due this year | when's the rent due
how do I pay an overdue fine | what happens if I'm overdue on rent
when's sunrise | when's the high tide | when's the next bin collection | when do the bins go out
which bin goes out this week | when does school break up | when is half term
when is the next strike | when's the next train strike | when's pancake day
what's the weather this arvo | is it going to rain this afternoon
will it be sunny tomorrow morning | what's the forecast for the weekend | is it cold this evening
how hot is it today | is it windy | what's the temperature outside | is it raining at the moment
is there a frost tonight | is it snowing | do I need an umbrella this arvo
should I wear a jacket today | what's the pollen count today | what's the uv index today
is the air quality bad today | will it be nice this weekend | what's the news this morning
any news today | what's in the news this week | what's trending
what's happening in the world today | what happened in the news yesterday
what's the big story today | what's going on in parliament | what's going on with the strikes
what's happening with interest rates | what's the score in the cricket | who won the rugby
what's the latest score | how did the match go
what's my husband doing tonight | when is my son's parents evening
what's my daughter's school doing this week | is my mum free tomorrow | what's my dad up to
what's my colleague working on | what's my team doing this week | what's my boss's schedule
what does my manager have on today | when is my sister free | when's my friend's birthday party
is my brother coming tomorrow | who's coming to dinner | who's waiting outside | who's at the door
who's waiting for me downstairs | is anyone waiting for me in reception
who's in the queue before me | are you busy right now | are you free
what are you working on these days | what have you been up to | what are you thinking
what's your schedule like | do you have a schedule | do you have a calendar
do you have a to-do list | what's on your to-do list | what's on your list
what's on your plate today | what tasks can you do | what jobs can you do | how much do you remember
how much can you remember | what's your memory like | do you have a good memory
how long can you remember things | do you forget things | will you forget me
do you remember yesterday | how big is your brain | how many parameters are you
how much memory do you use on my computer | how much ram are you using on my machine
how much disk space do you take up | how fast are you | are you full of yourself | are you ok
how are you feeling | are you tired | are you bored | are you happy | are you real | are you alive
are you listening to me | are you still there | how's your day been | what did you do today
what's your favourite day of the week
what's your favourite time of day | what's your favourite month | do you like mondays
do you like the weekend | what do you do at the weekend
what time do you go to bed | what time do you wake up | when's your birthday
what year were you made | where do you live | where are you from
what language do you speak | is the boiler broken | is anything broken in the kitchen
is my phone broken | is something wrong with the car | is anything wrong with my laptop
is anything damaged | is something leaking | is anything missing from the box
what's broken in the house | what's wrong with the printer | what's wrong with my wifi
is the heating broken | what comes after this step | what's after this one | what happens after this
what do we do after this bit | what's next after the chorus | what's after the adverts
what's on after the news | what's after the break | what's pending in parliament
what bills are pending in congress | what's outstanding in the league table
what's waiting for us at the hotel | what's in store for us on holiday | what's next for the team
what needs doing in the house this weekend | what needs fixing in the car
what needs replacing in the bathroom | what's due to arrive today | what's arriving tomorrow
what's being delivered this week | what's the context size of mistral
how much memory does this model use | how many tokens does a picture cost | how full is the bath
how full is the pool | how full is the gym right now | how busy is the gym now
how busy is the motorway | how busy are the shops today | is the town centre busy
is the beach packed | what time is it when it's noon in london
what's the date in the chinese calendar | what's the islamic date today
what's the date today in history | what happened on this date | what's special about this date
which day is the market | which day is the car boot sale | what day is payday
what day do the bins go | what's the time of the next high tide | what's the time of sunset in rome
what's the time on the moon | how long ago was the moon landing | how many years since the war ended
what year is it in the chinese zodiac | how's your memory of our first chat
what's your memory of last week | how's your memory of what I said yesterday
do you remember our first conversation | what do you remember from our chat last week
what's your earliest memory | how good is your memory of names | do you have a memory of me
can you remember what I had for lunch
"""
