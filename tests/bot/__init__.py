"""Session loop: tools, streaming, barge-in, a shared model, and the chat and ask front ends."""
