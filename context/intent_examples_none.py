"""Near misses for the state path's classifier: questions that share the status questions'
words but belong to the model, so the classifier learns where each intent ends.

General knowledge about the same words ("what does pending mean"), the time or date somewhere
else or of some event, other things' status (an order, a package, the weather), commands that
change state ("remind me to ...", "add a task ..."; the model runs those as tools), questions
about one named item that recall answers ("when is my dentist appointment"), questions about
Annie herself, and small talk. Examples are separated by " | ".
"""

from __future__ import annotations

NONE = """
what's on your mind today | what do you have in mind | do you mind if I ask something
what's in your mind right now | what is memory | what is context | what is space | what is progress
what is love | what is life | what is gravity | what is attention | what is priority
what are you really | what are you made of | what kind of thing are you | what are you anyway
what should my schedule look like | what should my calendar look like
what should be on my to-do list | what should I put on my calendar
what should a good task list have | what comes after this | what's after this song
what comes after this one | how much context should I give you | how much detail do you need from me
how much background do you need | how much context does a model need
what's on my husband's calendar | what's my wife doing today | is my son's school open tomorrow
what's my daughter's schedule | what time is my mum's train | what's my boss expecting from me
what does my manager want | is my partner free tonight | what's waiting for me at the office
what's for dinner at home | who's at the front door | what's happening at work today
what's pending at the council | what's stuck in the printer | what's blocking the drain
what's on the server | what's in the sprint this week | what's in the release
what's due at the library | what's on at the school this week | what's in my Amazon basket
what's in my shopping cart | what's in my Spotify queue | what's next in my playlist
what's on my phone's calendar app | how much memory is on my phone
what's the memory on this laptop | is it a holiday on Friday | is it a bank holiday today
is anything on sale today | is anything on TV tonight | is anything on at the cinema
anything interesting in the news | anything exciting happening in town
what's the weather doing tonight | is it raining outside | is it cold out
will it snow this weekend | is the kitchen clean | is the washing done | is the oven on
are the doors locked | what are the priorities for the government
what's the most important thing in life | what chores should kids do
how do I get my kids to do chores | what errands can I do on a Sunday | what does commitment mean
what are my legal obligations | what size is a king size bed | how big is a football pitch
what's the maximum speed on a motorway | what's the max weight for hand luggage
how long is the history of Rome | what's the chat about online | what's a chat bot
what's the size of the sun | what's my priority as a new parent | how do I review a book
what does external mean | who supplies the shop | any alerts from the weather service
what's the itinerary for a week in Italy | what's the best itinerary for Paris
how do I overflow a buffer | what is a stack overflow | what is a timer in cooking
how long should I set the timer for eggs | what alarm clock should I buy | what's a good alarm sound
what notifications should I turn off | is it important to floss
what are the important dates in history | what's important in a job interview
what's my top priority in life, philosophically | tell me about the vendor
who's the supplier of the office coffee | what's the item of the day
what's the top item on the menu | how big is the universe | how long is a football match
how much chat history does WhatsApp keep | how do I delete my chat history
what's the length of the Nile | do you have time to talk | what is a date | is it too late to start
what time should I leave | what time should I set my alarm for
what time is it in California | what's the time over in Paris
what time zone is Berlin in
what time does the sun set | what time does the bakery open
what time does the post office close
what time does the film start tonight | what time is high tide
what time is my train | what time should we eat | what time do kids go to bed
what's the time in UTC | what's the time in Greenwich | how long does it take to get to work
how long till Christmas | how many days until Friday | how many hours until midnight
how many minutes are in a day | how many seconds in a year | is it too late to call my aunt
is it too early to eat lunch | is it too late to plant bulbs
what's the best time to post on social media | what time is best for a run
what's a good time to meet | is now a good time to buy a house | time for a break? | time flies
tell me about time zones | explain daylight saving time
when is Mother's Day this year | what date is Halloween | what day does Christmas fall on
what day of the week is my birthday this year | what year was the moon landing
what year will it be in ten years
what month has the most days | which month is best to visit Iceland | is this a leap year
how do I write the date in French | what's the date on the receipt | what day is the parade
what day is bin day | which day should I book | what day is best for a wedding
is Saturday a good day for a party | is today a holiday in France | is it the weekend in Dubai
what's the weekend forecast | date ideas | good date night ideas | how do they date fossils
how many dates should I eat | what day was I born | what time was I born
what date does school start | what day do the clocks change
how old is the universe | what century is it in the Hebrew calendar
how big is GPT-4's context window | what does context mean | give me some context
can you put that in context | how much memory does my phone have | how much RAM does my laptop have
is my disk full
how much space is left on my computer | my phone's memory is full, what do I do
how do I free up space | how does memory work in the brain | what is short-term memory
do you remember things between chats | will you remember this tomorrow
how many tokens is this sentence | how many tokens are in a page of text | what is a token
what's a crypto token | how full is the moon | how full is the car park
how full is the reservoir | is the fridge full | I'm full | I'm running out of space in my wardrobe
I'm running out of time | we're running low on milk | how much room is in the car
is there room for one more | how much room do I need for a trampoline
what's the capacity of Wembley | what's your favourite memory | how close is the moon
how close are we to Mars | how close am I to my goal | how close is the nearest hospital
can you summarise our conversation | what did we talk about earlier
what was the first thing I said | forget what I said | start over
how do language models handle long context | how much memory does a raspberry pi need
is 8 gigabytes of RAM enough | how full should a kettle be | what's a pending transaction
why is my payment still pending | my order is still pending | is the pending charge real
how do I get approval for a loan | what does pre-approved mean
do I need planning approval to build a shed | who approves the budget
how do I confirm my email address
confirm my booking at the restaurant | can you confirm that for me | sign off on this report
what does blocked mean | how do I unblock someone | why is my account blocked | my nose is blocked
the sink is blocked | the road is blocked | I'm blocked on this problem | I'm stuck, help me
I'm stuck in traffic | how do I get unstuck | what do you do when you feel stuck
tips for writer's block | who is waiting for Godot | why are we waiting
I'm waiting for a call | I'm waiting on my friend | how long do I wait for a refund
what's outstanding on my credit card | what does outstanding balance mean | you're outstanding
who's holding up the meeting | what's holding up the bridge | I'm on hold with the bank
what needs to be done to fix a leak | what needs doing in the garden before winter
what needs to be in a will | what should I do about my back pain | what should I do with my life
what should I do tonight | what should I do if I'm bored | what needs my attention in the garden
how do I improve my attention span | what do I need for a passport
what do I need to pack for Spain | what do I need for a cake
what do I have to do to get a driving licence | what do I have to do to become a nurse
do I need to do anything to renew my licence | what do I owe in taxes | who owes me money
how much do I owe on my loan | do I owe you money | am I in trouble | am I right | am I boring you
am I talking too much | am I behind on my taxes | what am I doing with my life
what am I going to do | what's left of the pizza
how much is left on my mortgage | how much battery is left | how much time is left in the match
who's left in the tournament | what's in my inbox | any new emails
do I have any messages | who called me | what's new
what's going on in the world | what's happening in the news
what's happening with the election | what's going on with the economy
what's happening in town this weekend | what's on in London this weekend | what's on at the theatre
what's on the radio | what's on the telly tonight | what's on sale
what's on the agenda at the summit | how do I set an agenda | what is an agenda
what does political agenda mean | what's the bus timetable
what's the train timetable to Leeds | what's the Premier League fixture list | when is the next game
what's next in the series | what's the next step | what comes next in 2 4 8 | what's next for Tesla
next song | what should I watch next
what's coming up on TV | what's coming out in cinemas | upcoming concerts near me
upcoming elections | what's due on my credit card | when is my rent due | when is the baby due
when are the library books due | how do I pay an overdue bill
what happens if my tax return is late | I'm running late | sorry I'm late | is the train late
where's my package | has my parcel arrived | when will my order arrive
what's the status quo
check the weather | check my email | check the news | check the football score
what goes on a grocery list | make a to-do list for moving house | write me a shopping list
list the countries in Europe | list your features | list three colours
what should be on my packing list
what are tasks in project management | how many tasks can I do at once | how do I prioritise tasks
what is a task force | open task manager | what's your job | what do you do | what's my number plate
I have a lot on my plate | clean your plate
set a reminder for tomorrow | cancel my reminder | snooze
snooze for ten minutes | done | mark it done | I did it | move the dentist to Thursday
reschedule my dentist appointment | schedule a call with Ana | put it on my calendar
add the meeting to my calendar | add milk to my list | add a task | create a task to pay the rent
new task, call the plumber | take a note | note this down | make a note that the code is 1234
remember that I parked on level 2 | remember my locker number is 12
forget my note about the boiler | remind me what we were talking about | remind me how to tie a tie
remind me of the rules of chess | set an alarm | set a timer for five minutes
start a timer | stop the timer | cancel the timer | how do I make a schedule
plan a trip to Rome | make a study schedule | what's a good daily schedule
what's the ideal sleep schedule | what calendar does Ethiopia use
how many days are in the Mayan calendar | yes go ahead | no don't | okay do it
cancel that | who is the plumber | what did the landlord say
where is the party | what's the booking reference | what did Tom say
are you busy | are you free to chat | have you got a minute | are you awake
what are you doing today | what are you up to tomorrow | what's your plan for today
do you have plans tonight | what are you thinking about | how much do you know | how smart are you
tell me something interesting
what can you help with | bye
who won the match last night | is it going to be sunny this week
do I need a coat today | anything good on Netflix | is there anything fun to do this weekend
what's happening today in history | what's a good book
how long do I boil an egg | call my mum | order a pizza
write a poem about tomorrow | tell me a story
what do you need | who needs me at work | who is waiting for the bus
is anyone waiting for the lift | what's at the end of the rainbow | what's in store for the economy
what's the plan for dinner | what are we doing for lunch | what's my blood pressure
what's my horoscope today | how do I snooze notifications on my phone
how do I turn off calendar alerts | can you recommend a paper planner | is it worth keeping a diary
should I use a paper calendar | are to-do lists worth it | why do I procrastinate so much
I finished everything on my list | my calendar is packed this week | I'm seeing the dentist tomorrow
I'm waiting for the plumber to ring back | the approval came through from my boss
my memory is terrible | I'm running out of patience | read me a poem | read me the headlines
give me a quote for today | what's the word of the day | what's the recipe of the day
what's on at the Odeon | what's on at the museum | who's playing at the festival
what's the next big thing in tech
what's next for me in my career | how much do you cost to run | how big is your model
how many parameters do you have
how much RAM do you need to run | is the restaurant fully booked tonight
are there any tables free tonight | any seats left on the train
are there any tickets left for the gig | what's the time limit for the driving test
when is the tax deadline | when's the deadline for uni applications | any deals on today
anything good on the radio | is my brother free tonight | is the doctor busy today
are the kids still at school | is the post office busy at lunchtime
how many minutes is ninety seconds | convert three pm Eastern to UK time | how much sleep do I need
how much water should I drink a day | how long should a nap be | what time do most people wake up
what's a good bedtime for a toddler | how late do supermarkets stay open | is it too late for coffee
how do I stop putting things off | how do I say no to extra work
how do I delegate tasks to my team | what's the difference between a task and a project
what is a Gantt chart | how does a kanban board work | what's a good app for reminders
does my phone have a calendar | sync my calendar with my laptop
what's the etiquette for declining a meeting | how do I write a follow up email
what's a polite reminder email | is it rude to chase someone for a reply
how long should I wait before chasing a reply | how do I ask for approval politely
what's the approval process for a mortgage | is my passport approved yet | has my loan been approved
did my bank transfer go through | is my refund pending | why is my job application on hold
what's stuck in my teeth | my zip is stuck | the window is stuck | the car is stuck in the snow
why does my computer freeze | my laptop is running out of memory | my phone is full of photos
how much memory does a camera card hold | how many photos fit on 64 gigabytes
is the cloud storage full | what is a token economy | what are tokens in a board game
how long is a context switch | what's the context behind the strike
tell me the background to the story | what's the backstory | what's the story so far in the show
what happened in the last episode | what's the latest news | what's the latest on the election
what's the latest with the strikes | what's happening with the trains
what's going on with the weather | what's going on next door | what's all the noise outside
"""
