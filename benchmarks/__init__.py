"""Benchmarks comparing ember with torch and numpy in one run.

Run from the repository root: ``python -m benchmarks.run --help``.
Cases live in ``cases.py``, the timing engine in ``timing.py``, the CLI and reports
in ``run.py``.
"""
