"""Fuzz targets over ``StreamNormalizer.feed`` / ``close``: ``fuzz_hypothesis.py``
(hypothesis) and ``fuzz_feed.py`` (atheris), both checking ``targets.check_stream``."""
