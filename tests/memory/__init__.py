"""Memory: the SQLite store and its migrations, search, approvals and the state path."""
