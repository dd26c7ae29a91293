"""``laminate demo``: a tool loop per API against the mock provider, in the terminal or
on a web page (the loops themselves are ``demo.py`` and ``web.py``)."""

from __future__ import annotations

import argparse
from typing import Any, Final

from .common import CommandError, command, pace, port, reason
from .server import DEMO_PACE, PROVIDERS

__all__ = ["add_parser"]

DEMO_PROVIDERS: Final = PROVIDERS


def _demo(args: argparse.Namespace) -> int:
    import httpx

    from .demo import run_demo
    from .server import require_uvicorn

    require_uvicorn("the demo")
    providers = [args.provider] if args.provider else DEMO_PROVIDERS
    try:
        if args.web:
            from .web import run_web_demo

            return run_web_demo(
                list(providers), port=args.port, pace=args.pace, open_browser=not args.no_open
            )
        run_demo(providers, pace=args.pace, plain=args.plain)
    except (RuntimeError, OSError, httpx.HTTPError) as exc:
        raise CommandError(f"the demo failed: {reason(exc)}") from None
    return 0


def add_parser(commands: Any) -> None:
    """The ``demo`` command."""
    demo = command(
        commands,
        "demo",
        _demo,
        "watch a tool loop per provider, streamed through laminate, live",
        "Start the mock provider on a free loopback port and run a two-turn tool loop for\n"
        "each provider through httpx and laminate, rendering the events as they arrive.\n"
        "No network and no keys needed.",
    )
    demo.add_argument("--provider", choices=DEMO_PROVIDERS, help="only this provider")
    demo.add_argument(
        "--pace",
        type=pace,
        default=DEMO_PACE,
        metavar="S",
        help=f"seconds between frames ({DEMO_PACE})",
    )
    demo.add_argument("--plain", action="store_true", help="plain text even in a terminal")
    demo.add_argument(
        "--web",
        action="store_true",
        help="show the loops on a web page served on loopback (its URL is the first line "
        "printed); stops on Ctrl-C or when the last page closes",
    )
    demo.add_argument(
        "--port", type=port, default=0, help="with --web: the page's port (default: a free one)"
    )
    demo.add_argument("--no-open", action="store_true", help="with --web: do not open a browser")
