"""The `python -m bot` commands, one module each with `HELP`, `add_arguments` and `run`."""
