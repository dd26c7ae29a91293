"""Helpers for testing code that talks to LLM providers, offline.

``mock_server()`` runs laminate's mock provider (the one behind ``laminate serve``) in a
background thread on a loopback port and yields its base URL. It answers every API
laminate reads (each at its own endpoints) with recorded streams, streaming or not as the
request asks. It needs the ``demo`` extra (uvicorn).
"""

from ._cli.server import mock_server

__all__ = ["mock_server"]
