"""The voice loop: audio in and out, hearing (endpointing, barge-in, echo), spoken text,
and the page's data channel."""
