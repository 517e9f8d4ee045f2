"""Compaction: the three tiers, protected items, resume after disconnect or a crash."""
