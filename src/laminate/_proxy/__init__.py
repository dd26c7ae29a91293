"""The translating proxy: every API's client endpoints on one port, each request answered
by a configured backend in the client's own API (see ``app.py``).

This package imports none of its modules: ``config`` (plain data) stands without the
``proxy`` extra, so that the command line can describe ``laminate proxy`` without it;
``app`` and ``serve`` need Starlette and uvicorn. ``laminate.proxy`` gathers the public
names.
"""
