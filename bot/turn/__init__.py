"""The turn: one conversation's session, its chain of answerers, the model path and its tool
rounds, the events a turn yields, and replay."""
