"""Context: the exact token ledger, the bounded assembler and its manifest, trace replay."""
