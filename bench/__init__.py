"""Benchmarks: one module per area, each printing figures measured side by side in one run.

They stand above the runtime (they measure it with `testkit`'s generated models and test
peers), so no runtime package imports them: `python -m bot bench NAME` hands over to
`python -m bench NAME` as a new process.
"""

BENCHES = [
    "models",
    "hearing",
    "words",
    "cutoffs",
    "stt",
    "state",
    "context",
    "compaction",
    "voice",
    "reliability",
    "server",
    "tokens",
    "scorecard",
    "recall",
    "locomo",
    "hwu64",
    "calendar",
    "egress",
    "fuzz",
]
