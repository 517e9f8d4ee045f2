"""Annie's tools: typed arguments, JSON schemas for the model, and their handlers."""
