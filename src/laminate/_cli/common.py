"""What every command shares: the one-line errors, argument types, progress on a
terminal, and the rendering of events."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, NoReturn

from .._core.events import Event
from .._core.response import NormalizedResponse
from .._core.serialize import event_to_dict, response_to_dict

if TYPE_CHECKING:
    from .demo import Transcript

__all__ = [
    "CommandError",
    "Output",
    "Parser",
    "Progress",
    "UsageError",
    "byte_size",
    "command",
    "log",
    "pace",
    "port",
    "read_file",
    "reason",
]


class CommandError(Exception):
    """A failure to report as one line, with exit status 1."""


class UsageError(Exception):
    """A bad command line (exit status 2)."""


class Parser(argparse.ArgumentParser):
    """An argument parser whose errors are :class:`UsageError`."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see '{self.prog} --help')")


def command(
    commands: Any, name: str, run: Callable[[argparse.Namespace], int], summary: str, text: str
) -> argparse.ArgumentParser:
    """A subcommand's parser, which runs ``run`` with the parsed arguments."""
    parser: argparse.ArgumentParser = commands.add_parser(
        name, help=summary, description=text, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.set_defaults(run=run)
    return parser


def pace(text: str) -> float:
    """Seconds between frames, from 0 to 10."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value <= 10:
        raise argparse.ArgumentTypeError(f"invalid pace {text!r}: seconds between 0 and 10")
    return value


def port(text: str) -> int:
    """A TCP port number."""
    if not text.isdigit() or int(text) > 65535:
        raise argparse.ArgumentTypeError(f"invalid port {text!r}")
    return int(text)


def log(line: str) -> None:
    """A line for the person at the terminal."""
    print(line, flush=True)


def reason(exc: BaseException) -> str:
    """What an exception says, or what the one it came from says when it says nothing."""
    while exc.__context__ is not None and not str(exc):
        exc = exc.__context__
    return str(exc) or type(exc).__name__


def read_file(name: str) -> bytes:
    """A file's bytes (``-``: standard input), or a :class:`CommandError` that says why not."""
    if name == "-":
        return sys.stdin.buffer.read()
    path = Path(name)
    if path.is_dir():
        raise CommandError(f"{name} is a directory, not a recorded stream")
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise CommandError(f"no such file: {name}") from None
    except OSError as exc:
        raise CommandError(f"cannot read {name}: {exc.strerror or exc}") from None


# -- progress on a terminal ---------------------------------------------------------------


class Progress:
    """A status line on standard error, only when it is a terminal and the work is long
    (and, with ``quiet_on_tty``, only when the output is not on that terminal too)."""

    def __init__(self, *, quiet_on_tty: bool = False) -> None:
        self.stream = sys.stderr
        self.enabled = self.stream.isatty() and not (quiet_on_tty and sys.stdout.isatty())
        self.started = self.last = time.monotonic()
        self.shown = False

    def due(self) -> bool:
        if not self.enabled:
            return False
        now = time.monotonic()
        if now - self.started < 0.5 or now - self.last < 0.1:
            return False
        self.last = now
        return True

    def show(self, text: str) -> None:
        self.stream.write(f"\r{text}\x1b[K")
        self.stream.flush()
        self.shown = True

    def clear(self) -> None:
        if self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self.shown = False


def byte_size(n: int) -> str:
    return f"{n} B" if n < 1000 else f"{n / 1000:.1f} kB" if n < 1_000_000 else f"{n / 1e6:.1f} MB"


# -- showing events -------------------------------------------------------------------------


class Output:
    """Events and the final response, as JSON lines, a human rendering, or the final only."""

    def __init__(self, fmt: str, stream: IO[str], *, live: bool = False) -> None:
        self.fmt = fmt
        self.stream = stream
        self.live = live
        self.count = 0
        self.transcript: Transcript | None = None
        if fmt == "pretty":
            from .demo import PlainSink, RichSink, Transcript

            console = rich_console(stream)
            sink = RichSink(console) if console is not None else PlainSink(stream, live=live)
            self.transcript = Transcript(sink)

    def events(self, events: Iterable[Event]) -> None:
        for event in events:
            self.count += 1
            if self.fmt == "jsonl":
                self.stream.write(json.dumps(event_to_dict(event), ensure_ascii=False) + "\n")
            elif self.transcript is not None:
                self.transcript.feed(event)
        if self.live:
            self.stream.flush()

    def interrupted(self) -> None:
        """The stream failed: end the rendering so the error line starts a line."""
        if self.transcript is not None:
            self.transcript.newline()
        self.stream.flush()

    def final(self, response: NormalizedResponse | None) -> None:
        if response is None:
            return
        if self.fmt == "jsonl":
            line = json.dumps({"final": response_to_dict(response)}, ensure_ascii=False)
            self.stream.write(line + "\n")
        elif self.fmt == "final":
            self.stream.write(json.dumps(response_to_dict(response), ensure_ascii=False, indent=2))
            self.stream.write("\n")
        else:
            from .demo import summary_lines

            for label, value in [*summary_lines(response), ("events", str(self.count))]:
                self.stream.write(f"{label:<13} {value}\n")
        self.stream.flush()


def rich_console(stream: IO[str]) -> Any:
    if not stream.isatty():
        return None
    try:
        from rich.console import Console
    except ImportError:
        return None
    return Console(file=stream, highlight=False)
