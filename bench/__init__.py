"""Benchmarks of the Kutná Hora server (``kutnahora-bench``)."""
