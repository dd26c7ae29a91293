"""``laminate serve``: answer provider requests with recorded streams (the mock provider
of ``server.py``)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from .._apis.registry import APIS
from .common import CommandError, command, log, pace, port
from .server import PATHS, PROVIDERS

__all__ = ["add_parser"]


def _serve(args: argparse.Namespace) -> int:
    from .server import DEMO_STREAMS, MockProvider, base_url, listen, make_server, require_uvicorn

    require_uvicorn("the mock provider")
    directory = Path(args.directory) if args.directory else DEMO_STREAMS
    if not directory.is_dir():
        raise CommandError(f"no such directory: {directory}")
    app = MockProvider(directory, pace=args.pace, log=log, as_format=args.as_format)
    listing = app.listing()
    if not any(listing.values()):
        folders = ", ".join(f"{p}/*.{APIS[p].framing}" for p in listing)
        raise CommandError(f"no recordings in {directory} (expected {folders})")
    server = make_server(app)
    try:
        sock = listen(args.host, args.port)
    except OSError as exc:
        raise CommandError(
            f"cannot listen on {args.host}:{args.port}: "
            f"{os.strerror(exc.errno) if exc.errno else exc}"
        ) from None
    log(f"serving {directory} on {base_url(sock)} (Ctrl-C to stop)")
    if args.as_format:
        log(f"  every recording re-encoded as {args.as_format}")
    for provider, names in listing.items():
        if names:
            log(f"  {provider}: {', '.join(names)}")
    server.run(sockets=[sock])
    return 0


def _targets() -> tuple[str, ...]:
    from .._encode.encoder import targets

    return targets()


def _serve_routes() -> str:
    """The mock server's endpoints, one line each: provider, path, whether it streams."""
    width = max(len(provider) for provider in PROVIDERS)
    return "\n".join(
        f"  {route.provider:<{width}}  POST {path}"
        + ("  (streams by default)" if route.stream_default else "")
        for path, route, _ in PATHS
    )


def add_parser(commands: Any) -> None:
    """The ``serve`` command."""
    serve = command(
        commands,
        "serve",
        _serve,
        "answer provider requests with recorded streams (a mock provider)",
        f"Answer POST requests with recordings from DIR/<provider>:\n\n{_serve_routes()}\n\n"
        "A request gets: the recording named by its X-Laminate-Fixture header, else the one\n"
        "named like its model, else by turn (the number of model turns already in the\n"
        "conversation: 0 -> the first recording in name order, 1 -> the second, ...).\n"
        "Streaming follows the request's stream field, else the endpoint's default.",
    )
    serve.add_argument(
        "directory", nargs="?", metavar="DIR", help="the recordings (default: the demo streams)"
    )
    serve.add_argument("--port", type=port, default=0, help="the port (default: a free one)")
    serve.add_argument("--host", default="127.0.0.1", help="the address (default: 127.0.0.1)")
    serve.add_argument(
        "--pace", type=pace, default=0.0, metavar="S", help="seconds between frames (0)"
    )
    serve.add_argument(
        "--as",
        dest="as_format",
        choices=_targets(),
        metavar="FORMAT",
        help="answer every endpoint with any provider's recording, re-encoded as FORMAT "
        f"({', '.join(_targets())}); absent: each recording as recorded",
    )
