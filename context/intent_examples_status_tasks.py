"""More ways people ask about their tasks, for the state path's classifier: what waits on the
user, the approvals they owe, the whole to-do list, and what is blocked or waits on others.

A second block per intent beside `context.intent_examples_status`, written the way different
people talk: terse and rambling, formal and casual, with fillers ("okay Annie", "quick
question"), indirect openings ("I wonder if", "do you happen to know"), British and American
usage (jobs list, sort out, "arvo") and speech-recognizer slips with no punctuation.
Examples are separated by " | "; `context.intent_examples` joins them to the first blocks.
"""

from __future__ import annotations

PENDING = """
okay annie what's on my side of things today | hey is there anything that's on me
quick question is there anything I need to deal with | I wonder if anything's waiting on me
can you tell me if anything needs me | do you happen to know if anything's waiting for me
remind me what's on me
um what have I not done yet that I need to | so what do I need to get on with
what should I get on with | what do I need to crack on with
anything I need to crack on with this arvo | what's mine to sort today | what have I got to sort
anything need my say so | what awaits me | what's awaiting me today | which jobs are on me
what jobs still need me | what bits do I need to do | anything I'm meant to sort out
which ones are mine to do | what's mine to do | what's my bit to do
what do I owe people | who's expecting something from me | is somebody expecting something from me
who needs something from me | who's waiting for my answer | anybody waiting to hear from me
who haven't I got back to | who do I still need to reply to | anything needing a reply from me
what replies am I behind on | what responses do I owe | what's waiting for my say
what's on me tonight | what's on me this week | anything on me before the weekend
anything I have to get through today | what do I have to get through | what must be done by me
what is left that I have to do | stuff I still have to do?
things I need to do? | anything left that I need to deal with
how many things are waiting for me | how much is waiting on me | is the ball in my court
whose court is the ball in | tell me what I need to do
so what needs doing by me today | what needs doing on my end | what needs handling by me
what do I need to handle today | anything for me to handle | anything requiring my input
anything that needs my input | anything that needs my eyes on it | what needs my eyes
does anything need a look from me | what needs a decision | any decisions for me to make
what do I need to make a call on | anything I need to weigh in on | what do I need to weigh in on
hello annie anything need me | hiya anything waiting on me | morning, anything for me today
evening annie is there anything I should handle before bed | anything I should do before bed
before I log off is there anything on me | before I head out anything I need to do
before I go is there anything waiting on me | anything I need to do before the weekend
anything I need to sort before Friday | what do I need to get done this week
what have I got to get done today | what have I got to do for people | what jobs need my attention
are there jobs waiting on me | any jobs on my side | what tasks are mine | which tasks are mine
which tasks need me | what tasks need my attention | which items need my attention | any tasks on me
any items on me | anything on my shoulders | anything hanging over me | what's been left for me
what have you left for me | what have you passed to me | what have you handed back to me
what did you hand over to me | what's been handed to me
what's waiting on my side | anything waiting at my end | what's pending my end
pending items on my side | anything pending my side | what's penning on me | what spending on my end
what is pendin for me | anything pendng | what's appending on me | what spending for me
is there anything pending on me at all | what am I supposed to do today
what am I supposed to be handling | am I supposed to do anything | am I meant to do anything today
is there something I'm meant to be doing | what am I expected to do | what's expected of me today
anything expected of me | what do you need me to do today | do you need me to do anything
is there anything you need me to do | is there something you're waiting on me for
are you waiting for something from me | what are you waiting to hear from me
what do you need to hear from me | have I left you hanging on anything
am I keeping you waiting on anything | is anything waiting on my answer
which questions am I yet to answer | what have I not answered yet | what haven't I replied to
what have I left unanswered | did I forget to answer anything
have I missed anything I was supposed to do | anything I was supposed to do today
is there something I've not got round to | anything I keep putting off
what have I been putting off | what am I putting off | what am I avoiding
what have I been avoiding | what's been sitting on me a while
what's been waiting on me the longest | what's the oldest thing waiting on me
anything been waiting on me for ages | what's waiting on me that's urgent
what's most urgent on my side | what's top of my pile | what should I tackle first
where should I start today | what's next for me to do
what do I need to do next | what's my next job | what's the next thing I need to do
what's the next thing on me | what's the first thing I should do | what's on me to do first
give me the things waiting on me | run me through what's on me | can you go over what needs me
go through what I need to do | list what I need to do | list what's waiting on me
tell me everything that's on me | what's on my to do for other people
what have I committed to doing | did I say I'd do anything | what did I promise people
what promises have I got to keep | anything I agreed to do | what have I agreed to do
any favours I owe | do I owe anyone a favour | anyone I owe something to
who have I not got back to yet | who am I meant to ring back | who do I need to call back
anyone I need to ring | any calls I need to return today | anything I need to reply to today
what's outstanding for me today | what's outstanding from me | anything outstanding from me
have I got anything outstanding | any outstanding bits for me | any loose ends I need to tie up
what loose ends are on me | any open items on my side | what's open on my side
anything still open for me | what's still open that needs me | what's unresolved
anything I still need to resolve | what do I need to resolve | what needs resolving by me
anything awaiting my input | anything awaiting my decision | anything awaiting a reply from me
awaiting me? | on me? | anything on me | nothing on me right | am I clear | am I all clear
am I clear for today | have I done everything I need to | is everything done on my end
am I up to date | am I on top of everything | am I caught up
am I falling behind | am I on track | is there anything I'm late with | what am I late on
am I late with anything | just curious is anything waiting on me
I guess I should ask what's on me today | yeah so what needs me | yep anything on my side
honestly is there anything I need to do | seriously what do I still have to do
literally anything waiting on me | quickly what needs me | what's on me whatever it is
pardon me but is anything waiting on me | do you mind telling me what I need to do
mind telling me what's on me | sorry to bother you but is anything waiting for me
dear annie anything for me to handle | okay buddy what do I need to do | tbh what have I got to do
anything I need to attend to | what needs attending to | what do I need to address
anything I need to address today | what should I address first | anything they're waiting on me for
are they waiting on me for anything | is everyone waiting on me | is nobody waiting on me
anything earlier I didn't get to | what did I not get to earlier
what kind of things are waiting on me | what do I need to pick up today
are you sure nothing's waiting on me | are you sure there's nothing on me | any pings for me
anything I need to catch up on | what do I need to catch up on | cheers annie and what's on me
right then what's on my plate to deal with | what's for me to do anyway
which tasks am I holding up | what am I holding up for other people
is there anything I'm holding up for someone | what's held up because of me
what's stuck because of me | am I the one holding things up
what's everyone waiting on me for | what's waiting on my answer | any tasks waiting on my reply
are there things waiting on my response | items waiting on my answer?
is there stuff waiting for my answer | which things are waiting for my reply
anything waiting on my response | do I have to do anything | do I have to deal with anything today
have I got to do anything today | must I do anything today | do I need to handle anything today
have I got to sort anything today | what jobs are down to me | what's down to me
is anything down to me today | what falls to me | what's fallen to me
anything that falls on me this week | what's up to me | is anything up to me to do
what's my responsibility this week | what am I responsible for right now
what am I sorting out this week | what have I got to sort out this week
what am I supposed to sort out | what am I meant to be sorting | anything landed on me
anything landed on my desk | what's landed on my plate that needs me
"""

APPROVALS = """
hey do you need me to approve something
quick question is there anything for me to approve | I wonder if you're waiting on my approval
can you tell me what needs approving | do you happen to know if anything needs my ok
remind me what I need to approve | remind me what you asked me to okay
what did you want me to okay | what did you ask me to sign off | what were you asking permission for
what have you proposed | what are you proposing | any proposals for me | what proposals are waiting
what proposals need my answer | anything you've proposed that I haven't answered
what have you suggested that needs my ok | any suggestions waiting for my yes
what did you suggest doing | what actions have you proposed | what actions are you proposing
what are you asking to do | what do you want to do | is there something you want to do
anything you'd like to do if I agree | what would you do if I said yes
anything you're waiting to do until I say so | what are you waiting to go ahead with
what are you holding off on | what are you holding back until I approve
what's queued for my approval | any queued actions | what actions are queued
what actions are waiting | any actions waiting | are there actions waiting on me
any actions waiting for me to say yes | what needs a yes or no from me
yes or no questions for me? | anything I need to say yes to
anything I need to say no to | what should I say yes or no to | any decisions on your suggestions
what do you want my decision on | what needs my nod | anything waiting for my nod
anything need my blessing | what needs my blessing | what do you need my blessing for
do you need my blessing on anything | anything you need my go-ahead for | give me the approvals
read me the approvals | read out the approvals | go through the approvals
run me through the approvals | what approvals are outstanding
any outstanding approvals | any approvals outstanding | are there outstanding approvals
how many approvals have I got | how many approvals are pending | approvals count
number of approvals waiting | open approvals? | approvals waiting? | anything to approve?
to approve? | stuff to approve | things to approve | things waiting for approval
stuff waiting for my ok | things waiting on my ok | what's waiting for sign off
what's awaiting sign off | what needs sign off today | anything to sign off
anything to sign off today | any sign offs waiting | sign offs? | what needs my signoff
anything you need a signature for | what do you need me to sign | what needs signing
anything to okay | anything for me to okay | what do I need to okay | what needs okaying
what needs ok-ing | anything to rubber stamp | anything waiting on my say so
what do you need my say so for | anything you need a thumbs up for | what needs my thumbs up
anything waiting for a thumbs up | what needs green lighting | anything needing a green light
anything that needs my permission | what's waiting for my permission | any permission requests
what permissions are you waiting for
are you asking permission for anything | did you want permission for something
anything you need me to agree to | what am I being asked to agree to | anything to agree to
what do you need me to accept or reject | anything I need to accept or decline
anything to accept or decline | anything to approve or reject | what can I approve
what's up for my approval | anything up for approval | what's up for sign off
what's up for me to confirm | anything for me to confirm | what do you want me to confirm
what needs confirming from me | any confirmations for me | what confirmations are waiting
any confirmations outstanding | confirmations? | pending confirmations
what's waiting for confirmation | anything waiting for confirmation | what needs a confirm
is there anything you need a confirm on | did you need my confirmation on something
anything you need my authorisation for | any authorisations waiting | authorizations?
what needs authorization | what needs my authorization | anything to authorize
any requests waiting for my approval | what requests need my approval | requests for approval?
what approval requests are there | what approval requests are waiting
what are you waiting for a go ahead on | any go aheads waiting | what's waiting for the go ahead
have I approved everything you asked | have I answered all your approvals
is there anything I haven't okayed | anything I've not signed off yet | what haven't I signed off
what haven't I okayed | what have I not approved | which approvals are still waiting
which approvals need me | which actions need my approval | which requests need my ok
is anything waiting for me to say go | any actions on hold for me
what actions are on hold for my ok | what actions are waiting for my answer
is there an action waiting on me | what's waiting to run when I approve
what will you do once I approve | what a proves are waiting | anything to a prove
any approvals waitin | approvels? | any approovals | what needs my aproval | what needs my approve
do I need to approve any actions | do I need to okay anything | do I need to sign off anything
do I need to give permission for anything | do I need to authorise anything
do you need a decision from me on anything you proposed | what have you asked me for
what are you asking me | any asks for me | what asks have you got for me
what do you need me to agree on | is there a request from you waiting on me
so do you need my ok on anything | um anything you need me to approve today
just curious do you need my approval on anything | yeah anything to approve | yep any approvals
honestly do you need my ok for anything | quickly anything to sign off
do you mind telling me what needs approving | mind telling me what I need to approve
is everything approved | has everything been approved | is anything still unapproved
anything unapproved | any unapproved actions | what haven't I approved yet
anything earlier you wanted me to approve | what did you ask me to approve earlier
any pings for my approval | approvals whatever's waiting | tbh anything need my sign off
what needs my thumbs up this morning | anything that wants a thumbs up from me
thumbs up needed on anything
"""

LIST = """
I wonder what's on my list today | do you happen to know what's on my list
remind me what's on my list | remind me what's on my to-do list
what's on the jobs list | what's on my jobs list | read me the jobs list | what's on the job list
jobs list please | what jobs are on the list | what's on my list of jobs
what have I got on my jobs list | task list?
the to-do list | my task list | my jobs | all my jobs
give me my to-dos | give me my list | give me the whole list | read me the whole list
what's on the whole list
what's the full list | the whole to-do list please
everything I've got to do | everything I have to do
what is everything I have to do | what have I got to do overall | what have I got to do in total
what's the total on my list | how many things on my to-do | how many things on the list
how many jobs have I got | how many jobs are on the list | how many jobs are open
how many to-dos are open | how many to do items | how many items are open | how many open items
how many tasks have I got left | how many tasks are left | how many tasks are still open
how many tasks still to do | how many tasks remain | how many things do I still have to do
number of tasks? | count of my tasks | task count | list count | how long's my list
how long is the list | is the list long | is my list very long | is my list getting long
how many are on my list | what's on my checklist | what's on the checklist | read me my checklist
my checklist please | what's on my list of things to do today | what's on the list of stuff to do
what stuff have I got to do | what stuff is on my list | what things are on my list
what things have I got to do | what things are on my to-do | what's in my to-dos
what to-dos have I got | what to-dos are open | any to-dos for today | to-dos for today?
what's left on the to-do | what's still on the list | what's still on my to-do list
is anything still on my list | is there anything left on my list | anything left on the list
is my list done | is everything done on my list | is my to-do list clear | is my list clear
have I finished my list | have I done everything on my list | have I ticked everything off
what have I ticked off | what have I done today | what have I finished today | what have I completed
what tasks have I completed | which tasks are done | what tasks are done | what's done
what's been done | what's finished | anything done today | what's done and what's not
which are done and which are open | what's complete | what's completed on my list | done tasks?
completed tasks | my completed tasks | my open tasks | my open to-dos | my open jobs | open jobs?
open to-dos | open items please | what items have I got | what are my items | what's open on my list
which items are open | what's outstanding on the to-do list | any tasks left | tasks left?
jobs left? | what jobs are left | what jobs are still open | any jobs left to do
what jobs are outstanding | what am I on with | what have I got going | what am I busy with
what's keeping me busy | what projects am I on | what projects have I got
what am I meant to be working on | what work have I got on | what work is on my list
what's on my plate this week | how much have I got on | how much is on my list
how much is on my to-do list | how much have I got to do | how much work have I got
how much stuff have I got to do | have I got a lot on | have I got much on my list
do I have a lot to do | do I have much to do | is there much on my list | what's my load like
how heavy is my list | walk me through my list | walk me through my tasks
take me through my to-do list | go over my list | go over my tasks | go over my to-dos
can you list my to-dos | could you list my jobs | would you read me my tasks
could you read out my to-do list | list them | list my stuff | list everything
list it all out | just the list please | list please | the list? | list? | to-dos? | todos please
the todo | my todo | what's my todo look like | what on my list
wots on my list | what's on my lust | what's on my to do lists | whats on my too do
what's on my tudu list | what's on my to-do's | what's on my tasks list | what's on my task lists
what r my tasks | wat r my tasks | what are my task | whats my tasks | what's the current list
what's currently on my to-do | what does the to-do list look like
what does my to-do look like today | how's my list looking | how's my to-do list looking
how's the list | how is my task list | status of my list | update on my list
give me an update on my tasks | give me a summary of my list | summary of my tasks
overview of my tasks | an overview of my to-do list | quick overview of my list
brief rundown of my tasks | rundown of my list | what's on today's list | today's list
today's to-dos | today's tasks | tasks for today | this week's tasks | tasks this week
what tasks have I got this week | what tasks have I got today | which tasks do I have today
which tasks have I got | which jobs have I got | which to-dos are left | which items are left
has anything changed on my list | any changes to my tasks | what's changed on my to-do list
what did I add to my list recently | what's new on my list | anything new on my to-do list
what have I added today | just curious what's on my list | yeah what's on the list
yep read me my tasks | honestly how long is my list | quickly what are my tasks
do you mind reading me my list | mind reading out my to-dos | give me a quick recap of my tasks
recap my list | quick recap of my to-dos | can I get a recap of everything I've got to do
give me a glance at my list | a quick peek at my to-do list | let's have a look at my list
whatever's on my list read it out | the entire list please | read the entire to-do list
is my list crammed | am I swamped | how swamped am I | cheers annie what's on my list
short version of my to-do list | the short version of my tasks | what's on the old to-do list
read me the old list | what's on my master list | the master to-do list | what's on my main list
my main task list | what's on the big list | the big list please
"""

BLOCKED = """
I wonder what's blocked at the moment | do you happen to know what's blocked
remind me what's blocked | remind me who I'm waiting on | remind me what we're waiting on
what's waiting on other folks | what's waiting on another person
anything waiting on another person | what's waiting on them | what are we waiting on them for
what are we still waiting for | what are we still waiting on | what am I still waiting for
what's still waiting on others | anything still waiting on others
what's still stuck | what's still blocked | is anything still blocked | is anything still held up
anything held up at the moment | anything held up by other people | what's held up by others
what's held up waiting for someone | anything waiting on somebody
who's got the ball | whose court is it in | what's in someone else's court | what's in their court
what's sitting with other people | what's sitting with someone else
what's with other people right now | what are others doing for me
what are other people doing for me | what's other people's job | who owes me stuff
who owes me things | who owes me what | who owes me a response | who still owes me a reply
who do I need to hear back from | who haven't I heard from | who's gone quiet on me
who's not replied | who hasn't answered me | who hasn't responded | who's slow to reply
whose reply is outstanding | anyone I'm waiting to hear from | anyone I'm waiting on
is there anyone I'm waiting on | am I waiting on anyone | am I waiting on anything
am I waiting for anyone | am I waiting for a reply from anyone | are we waiting on anyone
anything I'm waiting to hear back on | anything I'm waiting for | what have I been waiting on
what have we been waiting on for ages | what's been waiting the longest | what's been stuck longest
what's been stuck for a while | what's been blocked for ages | anything blocked for a long time
what's dragged on | what's been dragging | anything dragging on | what's stuck in the mud
what's snagged | any snags | what's hit a snag | anything hit a wall | what's hit a wall
what's hung up | anything hung up | what's jammed | what's jammed up | what's clogged up
where's the bottleneck | any bottlenecks | what's the bottleneck
what's stopping things | what's stopping me | what's stopping my tasks | what's preventing progress
what's preventing me finishing | what can't I finish yet | what can't I start yet
what can't be done yet | what can't I do yet | what can't I get on with | what am I unable to finish
what's waiting on something | what's waiting on something else | what's dependent on others
which tasks depend on someone else | which tasks depend on others | what relies on others
what relies on someone else | what's out of my control | what's not in my hands
what's out of my hands right now | what's in someone else's hands | what's on someone else's plate
what's on other people's plates | what's stuck on someone else's desk
what's sitting on someone's desk | anything sat with others | what's sat with other people
what's sat waiting on others | what's on pause | anything on pause
what's been paused | what's been put on hold | what's been shelved | anything shelved
what's on the shelf | what's on the back burner | what's been on hold a while
which jobs are on hold | which jobs are stuck | which jobs are blocked | stuck jobs? | blocked jobs
held up jobs | stuck tasks | blocked items | held up items | stalled tasks | stalled items
paused tasks | tasks on hold | items on hold | jobs on hold | anything frozen
what's frozen right now | blocked? | stuck? | held up? | on hold? | stalled? | waiting on others?
waiting on someone? | what's waiting on a reply | what's waiting on an answer
anything waiting for an answer | what's waiting on a callback | what's awaiting a reply from someone
what's awaiting others | what's awaiting a third party | anything with a third party
anything waiting on outside people | what's with the supplier | what's waiting on the supplier
what's waiting on the contractor | what needs chasing up | anyone I should chase
who should I nudge | who do I need to nudge | who needs chasing | who needs a reminder from me
who do I need to follow up with | who should I follow up with | anyone I need to follow up
any follow ups with others | what should I follow up on with others | anything to chase
stuff to chase | what's to chase | what's blocked on you | what's stuck with you
what's held up on your side | what's on your side | what are you doing on my behalf
what are you sorting for me | what are you taking care of | what are you looking after for me
what have you got on for me | what are you handling | what's on you | what's still on you
anything on you | what's with you | what tasks are you doing | what tasks are with you
which tasks are with you | what's pending with you | what's pending on you
anything pending with you | what's waiting for you | what are you waiting for on my stuff
what are you stuck on | is anything holding you up | what's holding you up
what's slowing things down | what's slowing me down | what's slow | what's moving slowly
anything moving slowly | what's not going anywhere | what's going nowhere fast | what's not budging
what won't budge | what's blocked at the minute | what's blocked rn | what's blocd | what's bloked
whats blockd | what's stucked | what's stuk | what's blocked on my side

which of my things are blocked | anything blocked this week | anything stuck this week
anything new blocked | is anything blocked up on my tasks | what's got stuck | what's got held up
what's become stuck | what's stuck and why | what's blocked and by who | what's blocked and by whom
who's it waiting on | who's everything waiting on | who are my blockers | who's blocking me
who's blocking things | who's in the way | what's in the way | anything in the way
just curious is anything blocked | yeah anything stuck | yep anything held up
honestly what's stuck | quickly what's blocked | do you mind telling me what's stuck
mind telling me what's on hold | what are they still waiting on | has nobody got back to me
anything stuck since earlier | what got stuck earlier | what kind of things are stuck
any problems holding my tasks up | what's the problem with my stuck jobs
whatever's blocked tell me | give me a quick recap of what's stuck | recap what's blocked
who have I not heard back from | who's not got back to me yet | what haven't I heard back about
anyone I haven't heard back from | who still hasn't got back to me | who am I yet to hear back from
who should I chase this week | who needs chasing today | anyone to chase this morning
"""
