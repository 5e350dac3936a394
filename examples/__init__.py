"""Documented examples, each runnable as a script (``python examples/<name>.py``) and importable
(``from examples.crane_loop import crane_loop``) so that tests and sweeps use their factories."""
