"""The ``laminate`` command line: one module per command (``replay``, ``record``,
``serve``, ``demo``, ``translate``, ``proxy``), each with its ``add_parser``; this module
puts them together.

Every failure is one line on standard error, ``laminate: <what went wrong>``, and a
non-zero exit status: 2 for a bad command line, 1 for everything else. A command whose
optional extra is not installed (``proxy``, ``demo``, ``serve``) fails that way too,
naming the extra; every other command, ``--help`` and ``--version`` need none.
"""

from __future__ import annotations

import argparse
import io
import os
import sys
from collections.abc import Sequence

from .._core.errors import LaminateError, ProviderError, UnknownProviderError
from .._core.extras import MissingExtraError
from .._core.version import installed_version
from . import demo_command, proxy, record, replay, serve, translate
from .common import CommandError, Parser, UsageError
from .replay import split_bytes

__all__ = ["main", "split_bytes"]

COMMANDS = (replay, record, serve, demo_command, translate, proxy)
"""The commands, in the order ``--help`` lists them."""


def _parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="laminate", description="One event stream for every LLM provider's streamed answer."
    )
    parser.add_argument("--version", action="version", version=f"laminate {installed_version()}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in COMMANDS:
        module.add_parser(commands)
    return parser


# -- main -----------------------------------------------------------------------------------


def _one_line(text: str) -> str:
    return text.replace("\r", "\\r").replace("\n", "\\n")


def _describe(exc: LaminateError) -> str:
    if isinstance(exc, UnknownProviderError):
        return f"could not detect the provider (saw {exc.seen or exc}); use --provider"
    if isinstance(exc, ProviderError):
        retry = "retryable" if exc.retryable else "not retryable"
        return f"the provider sent an error: {exc} ({exc.error_type}, {retry})"
    return f"{type(exc).__name__}: {exc}"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    if isinstance(sys.stdout, io.TextIOWrapper):
        sys.stdout.reconfigure(errors="backslashreplace")
    try:
        args = _parser().parse_args(argv)
        status: int = args.run(args)
    except UsageError as exc:
        return _fail(str(exc), 2)
    except CommandError as exc:
        return _fail(str(exc), 1)
    except LaminateError as exc:
        return _fail(_describe(exc), 1)
    except MissingExtraError as exc:  # the message names the extra and how to install it
        return _fail(str(exc), 1)
    except KeyboardInterrupt:
        return _fail("interrupted", 130)
    except BrokenPipeError:
        # The reader went away (``| head``): stop quietly, without a second error at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except OSError as exc:
        where = f": {exc.filename}" if exc.filename else ""
        return _fail(f"{exc.strerror or exc}{where}", 1)
    return status


def _fail(message: str, status: int) -> int:
    sys.stdout.flush()
    print(f"laminate: {_one_line(message)}", file=sys.stderr)
    return status
