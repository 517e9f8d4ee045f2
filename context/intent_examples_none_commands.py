"""More near misses for the state path's classifier: orders that add to or change the user's
records, questions about one named item, advice about the user's own work, and remarks.

Beside `context.intent_examples_none`: "add milk to my list", "remind me to ...", "move the
dentist to Friday" are the model's to run as tools; "when is my dentist appointment" or "what
did the plumber say" ask about one thing that recall answers; "what should I prioritise" asks
for advice, not for the record; "I've got loads on today" tells rather than asks. Written with
the same fillers and slips as the status examples. Examples are separated by " | ".
"""

from __future__ import annotations

NONE = """
okay annie add milk to my list | hey add bread to the shopping list
quick question can you add eggs to my list | put bin bags on the list
add call the vet to my to-do list | add pick up dry cleaning to my jobs list
can you add a task to renew the car tax | new to-do buy a birthday card
stick fix the shelf on my list | add wash the car to my tasks for saturday
put pay the window cleaner on my to-do | add a reminder to water the plants
remind me to ring the garage at ten | remind me at six to take my pills
remind me in twenty minutes to check the oven | remind me on friday to pay the milkman
remind me tomorrow morning about the parcel | remind me next week to book the mot
can you remind me to call my sister tonight | I need a reminder to buy stamps
set me a reminder for three | set a reminder for the bins on thursday | set an alarm for half six
put a timer on for the pasta | wake me at seven tomorrow
could you set an alarm for six thirty | schedule a call with the bank for tuesday
book me a slot with the hairdresser | pencil in lunch with sam on friday
put the school play in my diary | add the dentist to my calendar for the ninth
block out friday afternoon | clear my diary for tomorrow | cancel tomorrow's meeting
cancel all my reminders | delete the task about the bins | remove milk from my list
take the car wash off my list | cross off buy stamps | tick off the laundry | mark call mum as done
I've done the shopping, tick it off | the bins are done | I've called the plumber
done with the report | finished the ironing | that one's done | I've paid the gas bill
move my reminder to four o'clock | push the dentist reminder back an hour
change the reminder to tomorrow | snooze it for ten minutes
remind me again in an hour | not now remind me later | postpone the meeting to next week
reschedule the call with the accountant | move everything to monday | mark the lease task as blocked
the refund is waiting on the airline now | I'm waiting on the builder for a quote
I'm still waiting to hear from the school | we're waiting on the council
the paint colour is on hold | put the garden project on hold | unblock the refund task
the supplier got back to me | approve the email to the school
go ahead and send it | yes do it | reject that | decline it | I approve
okay go for it | sure go ahead | nope cancel that one | yes you can book it | confirm it | I confirm
confirmed | sounds good go ahead | let's do it
what time is my dentist tomorrow | what day is the vet appointment | when is the parents evening
what time is the plumber coming | when is the boiler man coming
when's the car going in for its service | what time is my haircut | where is my meeting tomorrow
who's my meeting with at ten | what's the address for the party on saturday | where's the dentist
what's the reminder about the bins for | what did I say about the parcel
what was the note about the garage | what's the code for the garage | where did I leave my glasses
what's my reference number | what did the landlord email about | what did the accountant need
what's the plumber's number | what did sam want | who is the meeting with | what's the meeting about
how long is the dentist appointment | how much is the plumber charging
what did the vet say about the cat | what should I prioritise today
what should I do first today, any advice | how should I plan my week
how do I organise my to-do list | how do I get through my to-do list faster
how should I tackle a long list of tasks
any tips for staying on top of my jobs | help me prioritise | what's the best way to manage my time
what's a good morning routine | how do I stop being late | how do I deal with being overwhelmed
I've got loads on today | I'm so busy this week | my list is huge | I have too much to do
I'm behind on everything | I'm drowning in work | I'm waiting for a parcel
I'm waiting for the kettle to boil | I'm stuck on level five | I'm so stuck with this essay
I'm blocked creatively | I need to approve the kids' homework | I need to sign the permission slip
I need to confirm the venue | I owe my mate a tenner | I'm off tomorrow
it's my day off | I've got the day off tomorrow | today's been long | tomorrow's going to be busy
this week has flown by | the weekend went fast | what a day | what a week | long day huh
time for bed | I should go to bed | I'm going to sleep
what should I have for tea | what should I make for dinner tonight | what's a quick lunch
what can I cook with chicken and rice | how long do I cook a jacket potato
how long does pasta take | what temperature for roast chicken | how many grams in a cup
what's a tablespoon in ml | what's two hundred divided by eight
what's the square root of a hundred and forty four | how do you spell fortnight
how do you spell calendar | what rhymes with today | what's another word for pending
what's another word for busy | what's a synonym for deadline | what's the opposite of overdue
translate reminder into french | how do you say calendar in spanish | what's the plural of cactus
is it fewer or less | what's the past tense of sit | tell me something I don't know
sing happy birthday | play the radio | turn it up | turn the volume down
pause the music | next track please | stop | stop talking | shut up | forget it
cancel | that's all | nothing | no thanks | cheers | cheers annie | nice one | brilliant
great thanks | lovely | good afternoon | good evening | morning | you alright | how are things
how's life | how's your week been | what's happening annie
are you human | can you think | do you dream | do you have a family
do you have friends | are you my friend | do you love me | what's the meaning of today
what's so special about today | is today special | is today a special day | what's today's special
what's the date of my next dentist appointment | when's my next hair appointment
when's my next doctor's appointment | when is my next eye test | when's the next parents evening
what time is my train to leeds | what time is the taxi coming
when's the delivery due | when's the food shop coming | what time is the tesco delivery
what time is the wedding on saturday | what time is the party | what time is kick off on sunday
when does the film start | when does the show start | what time does the show finish
what time should I leave for the airport | what time do I need to leave for work
when should I set off | how long will it take to drive to york | how long is the walk to the station
how long is the flight to spain | what time is it going to stop raining | when will the rain stop
when does it get warmer | is it a good time to call america | what's a good time to go to the gym
when is the best time to plant roses | how late is the chemist open | is the doctors open today
is the tip open on sunday | are the shops open tomorrow | is the library open this arvo
is the bank open on saturday | what are the opening hours for boots
how much context do you need for this | let me give you some context | here's some context
for context I'm a teacher | some context first | without context that sounds bad | out of context
remember this for me | remember my car is on level four | remember the alarm code is two two four
save this note | make a note of that | write that down | jot this down | keep a note of this
forget what I told you about the garage | delete that note | clear the list | empty my to-do list
start a new list | make a new list called holiday | create a packing list | make me a shopping list
read me a story | read me the news | read me my emails | read my messages | any texts from sam
what's my step count today | how many calories did I burn today | how did I sleep
what's my weight trend | how far did I run this week
how much have I spent this week | what's left in my budget | how much money have I got
what's my balance | when do I get paid | when's payday | how much tax do I owe this year
who am I waiting for at the station | who's picking me up | who's driving tomorrow | is my taxi here
is the food here | is the dryer done
how long left on the washing | how long till the oven is hot | how long is left on the pizza
is the bath ready | what are you keeping from me | what are you hiding from me
what are you stopping me from doing | why won't you let me do that | what are you protecting me from
what are you holding back from me | what are you not telling me | are you blocking my messages
are you blocking anything on my phone | what's open near me | is anything open late tonight
what shops are open now | what's open on a sunday | is anything open on christmas day
is the chippy open | are the pubs open yet | what's still open at this time
any word from the plumber | any news from the school | has the builder sent the quote
did the garage ring | is the dentist running late | is the train on time
is my flight on time | what's waiting in my basket | what's in the oven | what's cooking
what's left in the pot | what's left in the tank | how long have I got left on my lease
how long is left on my contract | how long left on my phone contract | when's payday this month
when's my next pay cheque | when does my subscription renew | when does my trial end
anything good on the telly later | what's on channel four later | what's on the box tonight
anything on iplayer | who's free for lunch | is anyone free tomorrow | is my friend free this arvo
who can cover my shift | what's coming up in the garden this month | what's flowering now
what's in season this week | what's the next bus home | when's the next train to york
when's the last tube | what time is the ferry | is the kettle full | is the kettle on
is the dishwasher finished | is the bread done | is the cake ready
what should my day look like if I want to be productive | how should I plan tomorrow
plan my week for me | make me a schedule for revision | write me a daily routine
suggest a to-do list for spring cleaning | what should I do this arvo | what should I do tomorrow
what should we do this weekend | ideas for tonight | is it worth doing my tasks in the morning
should I do the hard task first | which task should I do first, the email or the call
clear my afternoon | clear tomorrow morning | free up my friday | keep my evening free
block out my morning | make tomorrow afternoon clear | sort out my diary | sort out my week for me
sort my list by date
"""
