"""Reminders in the runtime, in one place: what fires them, what is said, and when.

The table itself is `memory.reminders`. Here: `scheduler` fires what falls due;
`announcement` is what Annie says for fired reminders; `phrases` answers the spoken reminder
commands ("set a timer for five minutes", "snooze it", "done") without the model; `gaps`
finds the quiet moment on a voice connection to say them. The model's reminder tools stand
with every other tool (`bot.tools.reminder_tools`), and the command line's with the other
commands (`bot.commands.reminders`).
"""
