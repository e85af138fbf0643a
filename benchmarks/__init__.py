"""Benchmarks of the plugin's hot path; run them with ``python -m benchmarks``."""
