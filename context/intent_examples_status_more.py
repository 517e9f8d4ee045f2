"""More ways to ask the state path's status questions: idioms and indirect phrasings.

The "plate" and "left to do" idioms, what Annie has proposed and waits for the user's word on,
asking to hear a list read aloud, and a day part ("tomorrow morning") on a schedule question.
Written from what each intent means; parsed by `context.intent_examples` like the other blocks.
"""

from __future__ import annotations

# What is still the user's to do: jobs, chores and loose ends that remain.
PENDING = """
what jobs are still left for me | which jobs remain for me | any jobs left over for me
how many jobs have I still got | what chores have I still got | any chores remaining for me
what have I still got to get done | what have I still got to finish | what's left for me to finish
what am I yet to do | what have I yet to get done | anything I've yet to finish
remind me what's left for me | remind me what I still have to get done | remind me of my loose ends
remind me what's still on me | can you remind me what I've got left | remind me what I owe you
what loose ends have I got | any loose ends for me | what's hanging over me
is there still stuff for me to get through | what have I got left to get through
what's still on my plate for me to deal with | is anything still sitting on my plate
anything still left on my plate | what's sitting on my desk for me
anything I haven't got to yet | what haven't I finished | what have I left undone
what's unfinished on my side | what's undone on my end | anything I still owe
how much have I still got to do | how much is left for me | how much work is still on me
what work is still mine | what's still mine to do | which bits are still mine
what have I got remaining | what remains on my side
what's my workload like | how heavy is my load right now | what's my backlog
what's open on my side | anything unfinished that's down to me | which things are open for me to do
what's undone that falls to me | what's incomplete on my end | anything incomplete that's mine
what do you need off me this morning | anything you want from me this afternoon
what are you after from me today | what do I owe you by tonight | what's on me this evening
what must I get done today | anything I've got to finish today | what's still for me to do today
"""

# What Annie proposed and is holding until the user says yes.
APPROVALS = """
what proposals need my yes | any proposals for me to accept | what proposals of yours need me
which of your proposals am I yet to accept | anything you proposed that needs my yes
what suggestions of yours need my yes | any suggestions of yours waiting for my ok
which suggestions are you waiting for me to accept | anything you suggested that I haven't okayed
anything you need my permission for
what needs my permission | what's waiting on my permission
what's waiting for my blessing | anything that needs my blessing | what needs my nod
anything waiting for my nod | what needs my thumbs up | anything awaiting my thumbs up
what are you waiting for me to green light | anything I need to green light
what needs my green light | which actions need my sign-off | what actions await my yes
which of your actions need my say | what have you queued up for my approval
what have you lined up that needs my yes | what are you holding until I say yes
what won't you do until I say so | what are you holding off on until I agree
anything you won't do without my word | what needs my word before you go ahead
which of your plans need me to agree | what plans of yours need my agreement
any changes you want me to accept | what changes are you asking me to accept
what do you want me to authorise | anything for me to authorize | what needs my authorisation
what are you asking me to allow | anything I have to allow | what requests of yours need my answer
which of your proposals are waiting for me | any proposals of yours sitting with me
what have you proposed that's waiting for me | what proposed actions are pending on me
which of your ideas need me to decide | your suggestions that I still have to decide on
what suggestions have you made that I need to rule on | any recommendations of yours awaiting me
what are you asking me to decide on | what are you waiting for me to decide about
which of the things you offered to do need my answer | anything you offered to do that waits on me
what are you proposing that needs me | what have you put forward for me to decide
"""

# Asking to hear or see the task list itself.
LIST = """
could I hear my task list | I'd like to hear my list
let me hear my to do list | let me hear what's on my list | can I hear what's on my list
play back my task list | can you play me my list | say my tasks out loud
can you say my to dos | could you speak my list aloud | I want to hear my todos
could I have my to dos read to me | I'd like my tasks read out | can I get my list read out
can you recite my tasks | recite my to do list | list off my to dos
what's written on my to do list | what's written on my task list | what have I put on my list
"""

# A day, or part of one, on a schedule question: "on my plate" then means planned, not owed.
SCHEDULE = """
what's on my plate tomorrow | what's on my plate tomorrow afternoon | what's on my plate tonight
what have I got on my plate this evening | anything on my plate for tomorrow
what's on my plate this week | what's on my plate for the weekend | what's on my plate monday
what's on my plate on friday | anything on my plate friday morning
what have I got tomorrow morning | anything happening tomorrow morning | what's on tomorrow morning
what am I doing tomorrow morning | what's planned for tomorrow afternoon
what have I got this afternoon
what's on this evening | what's happening this afternoon | what's booked for tomorrow evening
what's lined up for tomorrow | what's lined up this week | what's lined up for this afternoon
anything booked in for tomorrow | what's booked in for friday | what have I got booked tomorrow
am I busy tomorrow morning | am I free tomorrow afternoon | how busy is tomorrow
how packed is my day tomorrow | how full is my week | what does my morning look like tomorrow
"""

# What Annie keeps about the user: the notes are the answer (`remember` with the subject "me").
# A named subject ("what did I tell you about my sister") is a slot only the anchored rules read,
# so these examples ask about the user alone.
REMEMBER = """
what have you got about me
what have you kept on me
what's in your notes on me | read me what you've got on me
what do you have on file about me | what have you stored on me | what have you saved on me
what have you written about me | what's written down about me
what personal stuff have you kept about me | what personal things do you know about me
what details have you kept about me | what details do you hold on me | what facts have you got on me
what have you picked up about me | what have you gathered about me | what have I told you about me
what have I shared with you about myself | what have I said about myself
how much do you know about me | how much have you got on me
tell me what you've noted about me | show me your notes on me | read back your notes on me
read out what you know about me
what's in my profile | what does my profile say | what have you got in your notes about me
remind me what you know about me
anything you remember about me | what do you keep about me
what have you clocked about me | what have you worked out about me
what things about me do you know
what have you kept track of about me
what's in your head about me | what does your memory hold on me | what have you logged about me
what have you recorded about me | give me a rundown of what you know about me
what's the sum of what you know about me | any notes about me | your notes on me please
what have you found out about me | what have you figured out about me
what do you know about me mate
"""
