"""What the model sees, exactly: the conversation as typed data, the token ledger, the bounded
assembler with its envelope and manifest, the compaction hooks, trace replay, and the
deterministic state path (`context.state`)."""
