"""The ``laminate`` command line."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from ._errors import LaminateError
from ._normalizer import StreamNormalizer
from ._providers.registry import FRAMING
from ._serialize import event_to_dict, response_to_dict

__all__ = ["main"]


def _replay(args: argparse.Namespace) -> int:
    path = Path(args.file)
    data = path.read_bytes()
    normalizer = StreamNormalizer(args.provider)
    out = sys.stdout
    try:
        for event in [*normalizer.feed(data), *normalizer.close()]:
            out.write(json.dumps(event_to_dict(event), ensure_ascii=False) + "\n")
    finally:
        out.flush()
    response = normalizer.response
    if response is not None:
        out.write(json.dumps({"final": response_to_dict(response)}, ensure_ascii=False) + "\n")
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="laminate", description="Normalize LLM provider streams.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    replay = commands.add_parser(
        "replay",
        help="print the normalized events of a recorded stream body as JSON lines",
        description="Read a recorded stream body (SSE or NDJSON), print its normalized events "
        "as JSON lines, then the final response.",
    )
    replay.add_argument("file", help="the recorded body")
    replay.add_argument("--provider", choices=sorted(FRAMING), help="skip detection")
    replay.set_defaults(run=_replay)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    args = _parser().parse_args(argv)
    try:
        status: int = args.run(args)
    except LaminateError as exc:
        print(f"laminate: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(
            f"laminate: {exc.strerror or exc}: {getattr(exc, 'filename', '') or ''}".rstrip(": "),
            file=sys.stderr,
        )
        return 2
    return status
