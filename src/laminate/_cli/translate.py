"""``laminate translate``: a request of one API written for another, to look at.

    laminate translate --from anthropic --to gemini request.json

prints one JSON document: the ``path`` (and query) the written request goes to, its
``body``, and the ``losses`` (what the target cannot carry, each with the place in the
request and the reason). ``--strict`` fails instead of losing anything; ``--body`` prints
the body alone. Failures reach ``laminate``'s one-line error report (``main.py``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from .._apis.registry import APIS
from .._apis.translate import translate_request

__all__ = ["add_parser", "run"]


def add_parser(commands: Any) -> argparse.ArgumentParser:
    """Add the ``translate`` command to ``commands`` (an argparse sub-parser group)."""
    readers = sorted(name for name, record in APIS.items() if record.read_request is not None)
    writers = sorted(name for name, record in APIS.items() if record.write_request is not None)
    parser: argparse.ArgumentParser = commands.add_parser(
        "translate",
        help="write a request of one API as a request of another",
        description=(
            "Read a request body (JSON; '-' for standard input) as the --from API sends it\n"
            "and print it written for the --to API: the path, the body and what was lost."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("file", help="the request body")
    parser.add_argument("--from", dest="source", required=True, choices=readers, help="its API")
    parser.add_argument(
        "--to", dest="target", required=True, choices=writers, help="the API to write"
    )
    parser.add_argument(
        "--path",
        help="the path the request was sent to (names the model and the streaming for some APIs)",
    )
    parser.add_argument(
        "--strict", action="store_true", help="fail (exit 1) instead of losing anything"
    )
    parser.add_argument("--body", action="store_true", help="print the written body alone")
    parser.set_defaults(run=run)
    return parser


def run(args: argparse.Namespace) -> int:
    """Translate the file and print the result; the exit status."""
    data = sys.stdin.buffer.read() if args.file == "-" else Path(args.file).read_bytes()
    translation = translate_request(
        data, args.source, args.target, path=args.path, strict=args.strict
    )
    shown: dict[str, Any] = translation.body
    if not args.body:
        shown = {
            "path": translation.path,
            "body": translation.body,
            "losses": [{"path": loss.path, "reason": loss.reason} for loss in translation.losses],
        }
    json.dump(shown, sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")
    return 0
