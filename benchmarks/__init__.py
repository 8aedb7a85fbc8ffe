"""Benchmarks: ``python -m benchmarks.run`` (``make bench``); see benchmarks/README.md."""
