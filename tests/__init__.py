"""Annie's tests: one package per area, on real engines, the small shipped models, real SQLite."""
