"""More ways people ask about their days and Annie's context, for the state path's classifier:
reminders, due and overdue items and what is coming up; the time; the date; and how full the
conversation's context window is.

A second block per intent beside `context.intent_examples_status`, written the way different
people talk: terse and rambling, formal and casual, with fillers ("okay Annie", "quick
question"), indirect openings ("I wonder if", "do you happen to know"), British and American
usage (diary, fortnight, "arvo") and speech-recognizer slips with no punctuation.
Examples are separated by " | "; `context.intent_examples` joins them to the first blocks.
"""

from __future__ import annotations

SCHEDULE = """
I wonder what I've got on this week
do you happen to know what's on tomorrow | remind me what's on today | remind me what's due
remind me what reminders I've got | what did I ask you to remind me about
what have I asked you to remind me about | what are you reminding me about today
what are you going to remind me about | what will you remind me about tomorrow
did I set any reminders | have I set any reminders | what reminders did I set
what reminders have I set up | what reminders are there | reminders? | reminders please
read me my reminders for tomorrow | what reminders are due today | which reminders are due
any reminders going off today | when's my next reminder due | next reminder? | what's my next alert
when does my next reminder go off | what's the next thing you'll remind me of
is there a reminder coming up | anything you're due to remind me of
anything you need to remind me of | what's coming up today | what's coming up later
what's coming up soon | what's coming up next week
anything coming up this weekend | anything coming up I should know about
anything coming up in the next hour | what's in the next few hours | what's on in the next hour
what's coming up in the next few days | anything in the next couple of days
what's on over the next few days | anything this fortnight | what's on this fortnight
what's on in the next fortnight | anything due this fortnight | what have I got over the weekend
what's on Saturday | anything on Sunday | what have I got on Monday | what's on Friday
am I free on Saturday | am I busy on Friday | anything booked for the weekend
anything on this arvo | what have I got on this arvo | am I free this arvo | what's the plan tonight
what am I doing tonight | what am I doing later | what am I doing this evening
what am I doing this weekend | what's happening later on | what's happening this afternoon
what's happening over the weekend | anything happening this week
anything happening later | what's in the diary | what's in my diary | what's in the diary today
diary for tomorrow? | anything in the diary this week | what does the diary say | check my diary
check the diary for tomorrow | what does my diary look like | how's my diary looking
how's my diary this week | is my diary free | what's on my calendar | check my calendar
check my calendar for today | calendar for tomorrow | what's my calendar look like
what's on the calendar today | anything on the calendar | anything in my calendar
what's in my calendar this week | how does my calendar look | schedule? | schedule for today
today's schedule | tomorrow's schedule | this week's schedule | what's on the schedule today
what's on my schedule | how's my schedule today | how's my schedule tomorrow
how's tomorrow shaping up | what's tomorrow looking like | what's today looking like
what's the day look like | what's the week ahead look like | what's the week ahead
what's ahead this week | what's ahead today | what's ahead of me | anything ahead of me today
what's in store today | what's in store tomorrow | what's due | what's due next week
anything due tonight
anything due by the end of the day | what's due by end of day
what's due before Monday | anything due over the weekend | what's due first thing tomorrow
when is stuff due | when are things due
which deadline is next | what deadline is coming up | any deadlines soon | deadlines?
any deadlines today | deadlines this week? | what deadlines are coming up
what's got a deadline soon | overdue? | overdue stuff | any overdue stuff
overdue tasks | overdue items | anything overdue on my list
which things are overdue | which reminders are overdue | have any reminders gone past
what's gone past its due date | what's past its deadline | anything past its deadline
anything late | what have I missed today | did I miss any reminders today
have I missed anything today | what did I miss | anything I missed | what slipped past
what did I forget | did I forget anything today | anything I've forgotten
anything I should remember today | what should I remember today | what should I remember tomorrow
anything I need to remember this week | anything to remember | stuff to remember today
what's next for today | what's next today | what's next on today
what's next in my day | what's next on the agenda | what's the next thing | next thing?
what's the next appointment | when's my next thing today | next up? | where am I next
anything on the agenda | agenda please | today's agenda | agenda for tomorrow | tomorrow's agenda
what's the agenda today | what's on the agenda this week | any appointments | appointments today?
any appointments tomorrow | appointments this week | what appointments do I have today
when's my next appointment then | do I have an appointment today | any meetings tomorrow
meetings today? | what meetings have I got | do I have meetings this week
am I busy | am I free | am I busy later | am I free later today
am I busy this evening | am I free tomorrow afternoon
am I busy at the weekend | is tomorrow busy | is today busy | is this week busy
is the weekend free | is my weekend free | do I have time today | have I got time this afternoon
how much free time have I got today | have I got a free afternoon | any free time tomorrow
when am I free this week | how busy is today | how busy is tomorrow | how busy's my week
how packed is tomorrow | how full is my day | how full is tomorrow | how full's my week
is my week full | what's the plan for tomorrow | what's the plan this week | what's planned
anything planned | anything planned today | anything planned this weekend | what have I planned
what have I planned for today | what have I got planned this week | what's on for today
what's on for next week | what's on later
what's on in the morning | what's on first thing | what have I got first thing | what's first today
what's the first thing today | what's first up | what's the last thing today | what's last today
when's my last thing | anything after six | anything this morning then
what have I got this morning | morning schedule | what do I have going on this week
what have I got going on tomorrow | what's going on later | what's going on this weekend
anything going on today | what's going on for me today | so what's my day like | what's my day like
what's tomorrow like | what's my week like | hows my day | hows tomorrow | hows my week
how's the rest of my day | rest of the day? | what's left for today | what's left this week
anything left today | what else today | what's on the rest of today | what else have I got today
what else is coming up | what's scheduled today | what's scheduled this afternoon
what's scheduled for the weekend | anything scheduled tomorrow | anything scheduled this week
scheduled stuff today | what's booked | what's booked today | anything booked today
what have I got booked this week | any bookings today | any plans | any plans today
any plans tomorrow | plans for tonight? | what plans do I have | what plans have I got this weekend
what are my plans | what's on my schedual | what's on my skedule | what's on my schedule two day
what's on my calander | whats on 2day | whats on tomoro | what's on to morrow | what's on tomorow
what's do today | what's jew today | what's dew tomorrow | any remindas | any remineders
what's on the cal | cal for today | sched for tomorrow | what's my sched | my sched today
just curious what's on today | I guess what have I got tomorrow | yeah what's on later
yep anything today | honestly how busy am I tomorrow | seriously what's on this week
quickly what's next | do you mind telling me what's on today | mind telling me what's coming up
sorry what's on tomorrow | pardon what's on this afternoon | anything shortly
what's coming up shortly | anything due shortly | what's happening shortly | what did I miss earlier
anything earlier I missed | any reminders earlier I missed | give me a recap of today
recap of tomorrow please | a quick recap of my week | give me a glance at today
a quick peek at tomorrow | let's have a look at the week | whatever's on today
cheers what's on tomorrow | how crammed is my day | is my day crammed | am I swamped today
am I swamped this week | is today rammed | is tomorrow chock a block | what's my midday look like
anything around midday | anything at midday | what's on at lunchtime | the short version of today
today in short | is my morning clear | is this afternoon clear | is tomorrow clear
is my evening clear | have I got a clear afternoon | is the rest of my day clear
is my afternoon open | is tomorrow morning open | is my weekend clear
have I got a clear diary tomorrow | is friday clear | is my calendar clear this week
"""

TIME = """
I wonder what time it is | do you happen to know the time | remind me what time it is
what time is it love | what time is it mate | what time do you reckon it is
what's the time do you know | any idea what time it is | have you any idea of the time
got any idea what the time is
say the time | quick time check please | can I have the time | may I have the time | what's the hour
which hour are we in | what's o'clock | is it ten yet | is it past ten | is it gone eleven
has it gone midnight yet | is it after midnight | is it before noon | is it after noon
is it afternoon | is it the afternoon yet | is it still afternoon | is it evening | is it night
is it nighttime | is it early still | is it really that late | how early is it now
it feels late what time is it | I've lost track of time what time is it | wats the time
what's the tim | what's thee time | what times it | what time is et | what time is it know
what tyme is it | what time is it rite now | what time we got
what time are we at | where are we time wise | how's the time | how are we for time
how are we doing for time | how am I doing for time | what time is it right this second
tell me the current time | give me the current time | clock?
what's the clock at | what's the clock | what's it say on the clock | what's the time here
what time is it locally | local time? | is it three o'clock yet
is it half six yet | is it quarter to yet | how many minutes past the hour
how many minutes till the hour | is it on the hour | nearly what time is it | what time near enough
roughly what's the time | about what time is it | give me the time roughly
just curious what time is it | yeah what's the time | yep time please | honestly what time is it
seriously what's the time | quickly what time is it | do you mind telling me the time
mind telling me what time it is | pardon what time did you say it is
what time is it precisely | what's the time precisely | is it midday yet | is it past midday
is it before midday | cheers what's the time | real quick what's the time | what time is it whatever
give me a time check
"""

DATE = """
I wonder what the date is | do you happen to know the date
remind me what the date is | what date's today
what date's it | the date today? | day? | what day? | date and day please
what's the day and the date | day and date | what day and date is it
what day of the month is it today | which day of the month is it | what's the day of the month
what number day is it | what's the number today | what's the date number | what's today's number
is it the third today | is it the tenth | is it the twentieth already | is today the thirty first
is it the end of the month | is it the start of the month | is it the first yet | what month is this
which month is it now | what month are we on | what's this month | what year is this
which year is it | what year are we on | is it still this year | is it friday today
is today monday | is it tuesday | is it wednesday today | is today thursday | is it saturday
is it sunday today | is it a monday | is today a friday | is today the weekend | is it weekend
is it a weekend today | is it the weekend today | is it a work day | is today a work day
is today a working day | is it a weekday or weekend | weekday or weekend | is tomorrow saturday
is tomorrow the weekend | is tomorrow a weekday | what day's tomorrow | what day will tomorrow be
what day is it tomorrow | what's the date tomorrow | what date was yesterday
what day was it yesterday | what was yesterday | what date was it yesterday
what week are we in now | which week of the month is it | what's the week number | week number?
what week is this | wats the date | what's the dat | what's the daet
whats the day | what day is is | what's the date too day | what's to days date
what date do we have | what date have we got today | what's the date say
what day does it say | which day are we on | what day are we up to
where are we in the week | just curious what's the date | yeah what day is it | yep the date
honestly what day is it | seriously what's the date today | quickly what day is it
do you mind telling me the date | mind telling me what day it is | sorry what's today's date
pardon what's the date | cheers what's the date | what's the date precisely | the full date please
what's the exact date
"""

CONTEXT = """
I wonder how full your context is
do you happen to know how full your memory is | remind me how much context you have left
how much of your memory is left
how much of your memory have I used | how much of your context have I used
how much have I filled up | how much of you is full | how much context is there left
how much context remains | context remaining? | context left | context used? | context used
context fill? | context level | context level please | your context level | context status
how's the context doing | how's the window looking
how full is the window | how full is the context window now
how full's the window | where's your context at
where are you at with context | what's your usage | usage?
what's your memory usage | memory usage please | memory used? | memory left? | memory status
your memory level | how's your memory holding up | is your memory ok | are you okay for memory
are you ok for space | are you ok for context | are you good for context
are you almost full | are you close to full | are you getting close to full
how close are you to being full | how close to capacity are you | are you at capacity
are you near capacity | are you over capacity | are you running out of room
are you running out of space | are you running low on room | are you running low on space
running out of context? | running out of room? | out of room yet? | out of context yet?
have you run out of room | have you run out of context | are you out of context
have you hit your limit | have you hit the limit | are you hitting your limit
how near the limit are we | how near are you to the limit | how near to full are you
how far from the limit are we | how far are you from full | how far from full are you
how much more can we talk | how much more chat can you take | how much longer can this chat go
how long can this conversation go on | how much longer can we go before you compact
when will you compact | will you compact soon | are you about to compact
how soon until you compact | do you need to compact | is compaction coming
how close to compaction are you | how long until you summarise | will you need to summarise soon
when do you start summarising | when will you start forgetting things | will you forget this soon
are you about to forget stuff | how much can you still remember of this chat
how much of this chat can you keep | how much of our chat is in your context
how much of our conversation fits | how much of this conversation have you got room for
is there room for more chat | is there space for more | have you got room for more
can you take much more | can you fit much more | how much more will fit | how much more fits
how much is left to fill | how many tokens left | tokens left | tokens remaining | tokens used
token count please | how many tokens so far | how many tokens have we got through
how many tokens is our chat | how many tokens have I used | how many tokens are left in the window
token budget? | token budget left | what's the token count | what's the token usage
how many tokens in context | how many tokens in your window | how many tokens can you still take
tokens? | what percentage are you at | what percent full are you | percentage used | percent full
how many percent is used | how much percent is left | what percent is left | percent left?
is it half full | are you half full | more than half full? | is your window half full
how big is your memory right now | how big is the conversation now | how long is our chat now
how much history are you holding | how much history is in your context | how much are you holding
how much are you carrying | how loaded are you | how heavy is your context
is your context close to full | is the window nearly full
is your memory close to full | is your memory filling up
is your window filling up | is the context filling up | are we filling up your context
have we used much context | have we used a lot of context | have we used much of your memory
have I used up much of your memory | did we use up much of the window | how much have we used so far
how much is used so far | how much is left so far | how much capacity is used | capacity used?
capacity left? | capacity please | what's your capacity at | how much capacity remains
how much headroom have you got | headroom? | any headroom left | how much room left | room left?
space left? | how much space left | how much space remains | how much room remains | how's your head
how full's your brain | is your head full | is your brain getting full
how much brain space is left | how much brain have you got left | how much con text is left
how full is you context | how much context is lift | how much contest is left
how much context you got left | how much contacts have we used | how's the contact window
what's your contact usage | hows ur context | how's ur memory | how much memry is left
just curious how full are you | yeah how much context is left | yep how full's the window
honestly how much room have you got | quickly how many tokens are left
do you mind telling me how full you are | mind telling me how much context you've used
sorry how much memory have you got left | how much have we used since earlier
how full were you earlier and now | whatever's left in your context how much
give me a recap of your context usage | a quick glance at your context | how crammed is your context
are you swamped with context | is your context crammed | are you stuffed full
cheers how full are you | how much of the conversation is in your window
how much of the session is used
"""
