"""Writing streams: laminate's events back out as any API's wire format.

This is the writing front, the twin of ``_normalizer``: ``encoder`` (the public surface)
looks each API's writer up in the registry. The writer kit the API packages build on
(``_apis/writer.py``, ``_apis/citations.py``) lies below them, in ``_apis``, so no API
imports this layer (``tests/test_layers.py`` checks it).
"""
