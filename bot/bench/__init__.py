"""Benchmarks run by `python -m bot bench NAME`, one module per area, each printing its figures."""
