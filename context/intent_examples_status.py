"""Ways people ask the state path's status questions, one block per intent, for the classifier.

Written from what each intent means, not from any evaluation set: plain and casual register,
short and long, hesitant, indirect, British and American usage, and the slips a speech
recognizer makes ("spending on me", "contacts window"). Examples are separated by " | ".
`context.intent_examples` parses them; the near misses are in `context.intent_examples_none`.
"""

from __future__ import annotations

# What waits on the user: tasks pending on them, and the approvals they owe an answer.
PENDING = """
anything I need to do before lunch | what must I get done before lunch
anything unanswered on my side | anything unresolved that needs me | what's unresolved on my end
what's still unanswered by me | anything critical for me | anything critical waiting on me
what do I need to do asap | anything I should do asap | what calls do I need to make
any calls I have to return | what are my duties today | what duties are waiting on me
what are my priorities | what's my top priority | what's most important for me to do
anything important waiting on me | what's the highest priority thing on me | any chores I need to do
what chores are waiting for me | any errands I need to run | what errands have I got
what are my commitments | what obligations have I got | anything I promised to do
what did I say I'd do | anything I committed to | any updates you need from me
is there any item waiting on me | what item needs me | anything for me to review
what do I need to review | what needs reviewing by me | what have I got to take care of today
anything I need to take care of | what's on me to take care of | anything waiting for my response
any replies I owe | who am I supposed to get back to | what needs my reply
what do I need to respond to today | anything that needs a decision from me
what decisions am I sitting on | what are you waiting for my answer on
what do you still need me to answer | anything you still need from me
are there things only I can do | what can only I do | what's on my shoulders
what's my responsibility right now | anything with my name on it | what's got my name on it
what's assigned to me | what's been assigned to me | any jobs waiting for me | what jobs need me
am I holding things up | whats pendin on me | what's pending on mee
wots waiting on me | is anything pending from my side | what's waiting for me to act
anything awaiting action from me | what do I need to action | anything to action
what needs me right now | what do I still have to deal with | is there something I need to do
anything left for me to handle | what's still open on my end | do I owe you an answer on anything
am I blocking anybody | status of my pending items
does anything require my attention | anything requiring action from me
what needs action from me | is there anything I need to act on | what are my action items
any action items for me | what's waiting for my input | anything waiting on my reply
anything I need to respond to | what do I need to get back to you on | are you waiting on me
are you waiting for me to do something | what are you waiting for me to do
is the ball in my court on anything
what's on my side | is there anything on my side | anything for me to do
got anything for me | is there anything for me to do | anything need doing on my end
anything I should be doing | what should I be working on | what do I still need to do
what's left on my end | anything remaining for me
what's still waiting for me | anything still waiting on me | what's awaiting my response
what's awaiting my decision | is there a decision I need to make | any decisions waiting on me
do I need to decide anything | do I owe anybody a reply
is anyone waiting on me | is anybody waiting for me | who am I keeping waiting
am I keeping anyone waiting | am I the bottleneck on anything | what's stuck waiting for me
what's pending on my side | pending on me? | my pending stuff | pending? | outstanding items for me
anything outstanding | anything I haven't dealt with
what haven't I dealt with yet | what haven't I got round to yet | anything urgent for me
is there anything urgent I need to handle | what's urgent for me | anything I need to sort out
what do I need to sort out | what needs sorting on my end | is there anything I forgot to do
have I forgotten to do anything | anything I'm forgetting to do
anything slipping through the cracks | have I dropped the ball on anything
what needs a response from me | who needs an answer from me | what's in my queue
what's in the queue for me | what do you need me to do | is there something you need from me
do you need me for anything | need anything from me? | anything pending for me today
what must I do today | what ought I to be doing
anything that requires me | what requires my input | anything I need to look at
what's most pressing for me | what's the most urgent thing I have to do | what needs doing by me
is there stuff waiting for me | things waiting on me? | my pending tasks | my outstanding tasks
what's pending on my and | what do I need two do
is there anything I'm supposed to do | what am I meant to be doing | anything I was meant to do
is there anything I owe you | any loose ends for me | what loose ends have I got
any open loops on me | what's hanging over me | what do I need to follow up on
anything I need to follow up on | any follow ups for me | so um is there like anything I need to do
right, what's on me today | okay what have I got to deal with | what's waiting for my answer
anything awaiting my reply | is anything waiting on me to decide
what's pending for me this evening | what do I still owe you | which of my things are waiting on me
how many things are waiting on me | how many things need me
what's sat on my desk waiting | what's stuck with me | anything stuck on me
what needs my input today | anything you're blocked on because of me
what are you blocked on me for
"""

# Actions Annie proposed that wait for the user's yes or no.
APPROVALS = """
anything you need a greenlight for | what needs greenlighting | anything waiting to be greenlit
anything you need me to accept | what do I need to accept | anything for me to review and approve
is there something you need me to agree to | what needs my agreement | any approval item waiting
what's waiting for me to sign | anything needing my signature today | any pending sign-offs
any confirmation requests | what needs my confirmation | anything you need my consent for
what needs my consent | is there anything you need me to allow | what do you need me to allow
are you waiting for my go ahead on anything | what are you holding for my OK
any actions on hold until I say yes | what's held for my approval
what are you not allowed to do until I agree | is there an approval you're waiting for
what do I need to rubber stamp | anything needing my signature | what do you want permission for
did you ask for permission for something | anything I need to give the OK on
anything waiting for my OK | are there approvals open
is anything awaiting my sign off | any requests for approval
approvals please | show me the approvals | anything I need to sign off on
what do I need to sign off | anything needing sign-off | what needs signing off
anything awaiting my go-ahead | are you waiting for a go ahead from me
what are you waiting for my permission on
anything you need permission for | what needs my permission | is there something you want me to okay
anything you want me to OK
is there anything I have to say yes or no to | any yes or no questions waiting for me
what's waiting on a yes from me | any confirmations needed | anything need confirming
what needs confirming | do I need to confirm anything | is there anything to confirm
any actions waiting for approval | what actions need my approval
what did you ask me to approve | what was I supposed to approve
did you ask me to approve something | is there an approval waiting
is there a request waiting for me to approve | anything waiting on my authorization
what needs authorizing | anything to authorise | what needs my authorisation
anything awaiting authorisation
is anything waiting for my thumbs up | what am I meant to be approving
which approvals are still open | how many approvals are waiting | how many things need my approval
are there any approvals | approval requests? | is there something I should approve
what do I have to approve today | what approvals are pending on me | anything awaiting approval
awaiting approval?
anything pending approval | what needs my green light
does anything need a green light from me | is anything waiting for the green light
anything I need to a prove | what do I need to a prove | any approves waiting
um, do I need to approve anything | so what do you want me to okay
are there requests I haven't approved | what requests are waiting on my OK
have I approved everything | is there anything I haven't approved yet | anything left to approve
any permissions you need from me
what's waiting for me to confirm | what actions are you waiting to run | what are you waiting to do
"""

# Open tasks: the to-do list itself.
LIST = """
what's on my slate | what's on my slate today | what projects are open | what projects have I got on
what's ongoing | any assignments open | what assignments have I got | what's in my task inbox
what's in my to-do inbox | what entries are on my list | how many entries on my list
what chores are on my list | what errands are on my list | what's on my chore list
what item is next on my list | how many items have I got | list my items
what's the size of my to-do list | how big is my to-do list | anything completed yet
what have I not ticked off | what's not ticked off | what haven't I ticked off yet
any updates on my tasks | status of my tasks | what's the status of my to-do list
where am I with my tasks | what's currently on my list | what's in my list right now
what open tasks do I have | give me the open items | what items are on my list
what are my open jobs | any open jobs | how big is my backlog | what's in my to-do pile
what's in my pile | list everything I've got to do
read out the list | what's my to-do count | how many open items have I got | number of open tasks
total tasks please | what's still on the go | what have I got on the go | what am I in the middle of
what's on the go at the moment | what's underway | how many tasks are open
list my open items | open items?
what items are open | what's open | anything open | my todos
what's on the to-do list today | what's left on my to-do list | read out my list
read my list back to me | how long is my to-do list
how many things are on my to-do list
how many items are on my list | count my tasks | how many tasks | what jobs do I have
what jobs have I got on | what jobs are on my list | have I got anything on my list
is my list empty | is there anything on my list | anything on my to-do list | what's in my task list
what tasks are active | which tasks are active | active tasks | what am I currently working on
what's in progress | anything in progress | what are my tasks for today
what tasks are on for today | what do I have to do today
show all my tasks | give me a rundown of my tasks | run down my list
rundown of my to-dos | quick summary of my tasks | summarise my to-do list | summarize my task list
what does my to-do list say | what does my list say | open tasks | how full is my plate
what's my workload | what's my workload like | how much is on my plate
how much have I got on my plate | my list | the list please | what to-dos do I have
any to-dos | any to dos left | how many to-dos do I have
which of my tasks are open | what's unfinished | what haven't I finished | what's not done yet
what's still not done | anything unfinished | what's incomplete | what tasks are incomplete
what have I not finished yet | what's left to do | what's left to do on my list
what remains on my list | remaining tasks | anything else on my list
what's on my two do list | what are my tusks | what tasks have I still got
which tasks haven't I done | what are the things on my list | read out my to-dos
can you run me through my list | talk me through my tasks
what am I juggling at the moment | what have I got on at work | what's on my task board
what's on my board | what's in my backlog | how many things have I got to do
how many things are on my plate | what's still to do
"""

# Blocked tasks, and what waits on someone else or on Annie.
BLOCKED = """
what's delayed | anything delayed because of someone else | what's been delayed by other people
what am I still owed | who still owes me something | what's overdue from other people
what's waiting on an external party | anything waiting on external people
what's stuck with the vendor | what's waiting on a supplier | anything blocked externally
what's externally blocked | what depends on outside help
what can't I finish because of someone else | what's stuck on a dependency
any dependencies outstanding | what's blocked by someone else
what depends on someone else | any dependencies holding me up | what can't go ahead yet
what's waiting on a response from others | what's waiting for someone to get back to me
anything waiting on a callback | who hasn't replied to me | who do I need to hear from
whose move is it on my stuff | what's waiting on the other side | what's stuck on other people
anything stuck with others | what's frozen | what's on ice | anything on the back burner
what's gone stale | what's dragging on | what's taking forever | what's overdue from others
what am I waiting on from other people | what has stalled
what's not moving forward | what isn't progressing | what's making no progress
what tasks are on hold | what's paused
any blocked items | blockers? | what are my blockers
what's blocking progress | is anything blocking my tasks | what are the blockers | what's the holdup
what's the hold up | where are things stuck
whom am I waiting on | who are we waiting on | who do I need to hear back from
who hasn't got back to me | who owes me a reply | who owes me an answer
what am I waiting to hear back about
what depends on other people | what's out of my hands | what's in other people's hands
what's with someone else | what's waiting on outside people
anything waiting on a response from someone
what are we waiting to hear back on | what are you handling for me | what's on your side
what's on your end | what's in your court | what's waiting on Annie | what's with you right now
what are you still working on | what's still with you | what's still pending on your end
what's pending on your side | anything pending on your end | are you stuck on anything
is anything stuck on your end | blocked stuff? | is something holding things up
what's holding up my tasks | whose reply am I waiting for
whose answer are we waiting on | what am I chasing | who do I need to chase | who should I chase
what needs chasing | anything I should chase up | what do I need to chase up | who needs a nudge
anything waiting on others | is anyone holding me up | who's holding me up | who's holding things up
what's gone quiet | what's gone nowhere | what's stuck in limbo | anything in limbo
what's blocked and on who | what's waiting on an answer from someone | what's blocks
what's blogged | is anything blocked up | what's stock | what tasks can't move forward
which tasks can't I do yet | what can't I progress | what's waiting on a reply
what are you on with for me | what jobs are you doing for me | what's with the other people
what am I waiting for | what are we waiting for from them
"""

# Reminders, due dates and what is coming up: today, tomorrow, this week, next.
SCHEDULE = """
any birthdays coming up | any birthdays this week | any anniversaries this month
what's on after lunch | anything before lunch | what have I got after lunch
anything this lunchtime | what have I got before breakfast | what's on the docket
what's the lineup for today | what's my lineup this week | what's in my planner today
what does my planner say for tomorrow | what's my timetable today | what's on my timetable tomorrow
what's my roster this week | what calls have I got today | any calls scheduled
any reservations tonight | what reservations have I got | am I available this afternoon
am I available at three | how hectic is today | how hectic is my week
what's on for the remainder of the day | what have I got arranged | anything arranged for tomorrow
what's organised for this week | any entries in my diary today | anything expiring soon
anything imminent | what's imminent | what timer is running | is there a timer running
any alarm set | what alarm is set | any alerts coming up | any notifications due
anything happen today I need to know about | what's happening in my day
is anything happening tomorrow | what engagements have I got | any bookings this week
what bookings have I got | what commitments have I got this week | what's on my itinerary today
what's my itinerary | anything important today | what's important today | what's my soonest deadline
what's due first | what's the nearest deadline | what's the latest I need to do today
any deadlines coming up | what deadlines have I got | what's my next deadline
when's my next deadline | any deadlines this week | deadlines today? | what are my deadlines
anything due today or tomorrow | any events today | what events have I got this week
what's my next event | any plans for today | what are my plans for tomorrow
have I got plans tonight | do I have plans this weekend | what plans have I got
what's happening later | what's happening this evening | what have I got on next week
anything next week | what's on next | when's the next thing on my calendar
what alarms have I got set | any alarms set | what's the first thing tomorrow
what's first on tomorrow | what's my first appointment tomorrow | what's my last thing today
when am I free today | when's my next free slot | is my afternoon free | is tonight free
am I booked up tomorrow | how busy am I this week | how packed is my day
how full is my calendar today | how full is my diary this week | is my diary clear tomorrow
is my day clear | what's urgent this week | anything coming due | what's coming due soon
what falls due this week | what's running late | what tasks are late | which deadlines have I missed
any reminders tomorrow | am I busy this afternoon
what's planned for tonight | what comes next for me | what have I got next
what's my next thing | what's the next thing I have | next appointment?
when's my next appointment | when is my next thing | what's happening next | what am I doing next
where do I need to be next | do I have any reminders set
have I got any reminders set | are there any reminders
which reminders are set | upcoming reminders
what's upcoming | anything upcoming | what's coming up soon | anything coming up soon
is anything overdue | which tasks are overdue | anything past due
what have I missed | did I miss anything | have I missed any reminders | what's going on today
what's going on tomorrow | what's going on this week | what's on this evening
what's on this weekend | anything on this weekend
what's my plan for tomorrow | how's my day shaping up
how's my week shaping up | what does my afternoon look like | what does my morning look like
how's my schedule looking | how's the week looking | what's in my diary today
anything in the diary | what's in my diary this week | what's in the diary for tomorrow
what's on the cards today | am I free later | am I free tonight
am I busy tomorrow | do I have anything on | have I got anything on today
have I got anything on later | anything on later | what's on later | what's later today
anything later | what's on for this evening | any meetings today | any appointments this week
do I have any appointments | what appointments have I got | what appointments are coming up
calendar? | my calendar | what's on the schedule | what's my schedule like
what's my schedule for the rest of the day | what's left today | what's left on my schedule today
anything else today | what else is on today | is there anything else on today
what's the rest of my week look like
what's this week looking like | what's scheduled | what's scheduled for later | anything scheduled
what have I got booked | anything booked for tomorrow | what's on for tomorrow morning
what time's my next reminder | when's the next reminder going off | when will you remind me next
what timers do I have | any timers running | what's on the agenda | agenda?
agenda for the week | what's on deck | what's on deck today | what's lined up
what have I got lined up | what's lined up for tomorrow | anything lined up this week
give me a rundown of my day | what am I doing today
what am I doing tomorrow | what am I up to today | what am I up to tomorrow | what do I have on
what do I have going on | what have I got going on today | anything going on tomorrow
what's on my shed you'll | what's on my calender | uh, anything tomorrow
what's next on the calendar | what have I got this afternoon
anything this morning | what's happening this arvo | what's on this morning
anything due before the weekend | is there anything I need to remember today
have I got any reminders today | anything I should remember tomorrow
what's coming up this fortnight | what's in the calendar | what's due
"""

TIME = """
what's the clock showing | what does your clock say | check the clock | the current time
which hour is it | what hour have we got | is it nine o'clock yet | is it six o'clock
has it turned midnight | what minute is it | how many minutes past is it | is it quarter past yet
is it half past yet | is it nearly noon | is it morning or afternoon | is it night time yet
how late have we got | what time is it where you are | what's the time on your clock
could you give me the time | quick time check
how early is it | is it early | is it morning yet | is it past noon | is it past midnight
is it after five | is it five yet | is it lunchtime yet | is it noon | has it gone six
what time do you make it | what time do you have | what's the local time
local time please | is it evening yet
is it getting late | is it still morning | is it afternoon already | whet time is it
what thyme is it | what time isit | wot time is it | how late is it getting
can I get the time | what time is it round here | is it dinner time yet | is it bedtime yet
what's the time where I am
"""

DATE = """
which date is it | what date have we got | what's the calendar date | what date does it say today
what day have we got | which day have we got today | what weekday is it | which weekday is it today
is it a working day today | is it a school day today | what day of the week is today
is it still the weekend | is today Saturday | what month have we got | which month is it
what year have we got | what's the current year | current date
what's the date tomorrow going to be | what date will it be tomorrow
is it Saturday today | is it the weekend yet | what date is it today
what's the day | what number is it today | is it Monday
is today Wednesday | is it Thursday | is today Sunday | is it a weekend
is today a weekday | is it a weekday today | which year are we in | what year are we in
what's the month | give me the date | what date are we on | what's tomorrow's date
what date is tomorrow | what day is tomorrow | what day was yesterday | what was yesterday's date
is today the first | is it the first of the month | what week is it | what week of the year is it
what week number is it | which week are we in | what's the data | what's to day's date
sorry, what's the date | is it still Monday | is it Friday already
what's the full date | which day of the week is today
"""

# How full the conversation's context window is: tokens used and left.
CONTEXT = """
how close to the ceiling are you | how close are you to the ceiling
how much of this session have we used | how much of the session is left
what amount of context is left | what proportion of your context is used
how much of our session can you still hold | what's the size of your context
what size is your context now | how long is the conversation history | how long is our chat history
how long has this chat got | how much chat history can you hold | what's your maximum context
what's the max you can hold | how close are we to the maximum | are we close to the max
are we near the cap | how close is the conversation to overflowing | will the context overflow soon
is the chat too long for you | how much more history can you keep
what's the length of our conversation in tokens | what's your token limit and how much is used
how much context are you using | how much context have you used up
what's your memory usage right now | how much of your window are you using
how much is left in your memory | what's your token budget | how much of your token budget is left
how much token budget is left
how far through your context are we | how much longer can we talk before you forget
how long can we keep talking | can you still fit more | is there room for more in your context
are you near full | are you nearly out of memory | how's your context usage
how much have you filled up | how filled up are you | what's your fill level
how much of your brain is used | is your brain full | how full is your brain
are you running out of space | what percent of the window is used
how is your memory holding up | how much memory is left | where is the context at
how close are you to your limit | how close are you to the limit | are you near your limit
how near are you to running out | how much more can you take
how much more can you hold | how much can you still fit
how much headroom do you have | how much headroom is left | how much capacity do you have left
what's your remaining capacity | how much is left in your window | how much of your window is left
how big is your context window | how much of your context is free | context left? | tokens left?
token count | token usage | how many tokens have we used so far
how many tokens are in use | how many tokens is this conversation
how long is this conversation in tokens | how big is our conversation | how much have we used up
how much of your memory have we filled | have we filled up your memory | is your context full
is the context window full | is your context filling up | are you full yet
are you about to run out of room | will you run out of room soon | when will you run out of context
how long before you run out of memory | how long until you need to compact
will you need to compact soon | when do you start forgetting | are you going to forget things soon
is there still room in your memory | do you have room left | have you still got room
have you got space left | what's your memory at | memory usage | memory check
how's your context | how's the context window | how's your window
percent used? | how much have you used
what fraction of your context is used | how loaded is your context
how much more conversation can you fit | how many more tokens can you take
how many tokens remain | how many tokens have we burned through
how much context have we burned | how much context is used up | how much contacts is left
how full is your con text | how's your memory looking
are you running low on memory | running low on context? | low on memory?
how close is your context to full | how close are we to the context limit
how close are we to your memory limit | uh, how much room is left | so how's your memory
is your head full yet
how much more can you remember right now | how's your capacity | is your window nearly full
what's the fill level | how much of the context have we used
"""
