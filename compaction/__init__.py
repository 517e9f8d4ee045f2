"""Three-tier compaction: clear tool results, summarize in idle time, persist on exit.

`create_hooks(ctx)` is what the session loop and `replay` install (see `compaction.hooks`); it
returns a `Compactor`, one per session.
"""

from compaction.compactor import Compactor, create_hooks

__all__ = ["Compactor", "create_hooks"]
