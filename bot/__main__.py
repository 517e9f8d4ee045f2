"""Command line entry: `python -m bot serve | chat | ask | tasks | replay | doctor | bench`."""

from __future__ import annotations

import sys

from bot.cli import main

if __name__ == "__main__":
    sys.exit(main())
