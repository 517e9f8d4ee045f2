"""Test support: generated models, trace tools and test peers. Tests and benchmarks import
it; runtime packages never do.
"""
