"""The ``laminate`` command line: ``replay``, ``record``, ``serve``, ``demo`` and
``translate``.

Every failure is one line on standard error, ``laminate: <what went wrong>``, and a
non-zero exit status: 2 for a bad command line, 1 for everything else.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Final, NoReturn

from .._apis.registry import APIS
from .._core.errors import LaminateError, ProviderError, UnknownProviderError
from .._core.events import Event, ToolInputDelta
from .._core.response import NormalizedResponse
from .._core.serialize import event_to_dict, response_to_dict
from .._normalizer import StreamNormalizer
from . import proxy, translate
from .server import DEMO_PACE, PATHS, PROVIDERS

if TYPE_CHECKING:
    from .demo import Transcript

__all__ = ["main", "split_bytes"]

FORMATS: Final = ("jsonl", "pretty", "final")
CHECK_SEEDS: Final = 50
DEMO_PROVIDERS: Final = PROVIDERS
_RANDOM_SIZES: Final = (1, 1, 2, 3, 4, 5, 7, 11, 16, 31, 64, 250, 1024)


class CommandError(Exception):
    """A failure to report as one line, with exit status 1."""


class _UsageError(Exception):
    """A bad command line (exit status 2)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise _UsageError(f"{message} (see '{self.prog} --help')")


# -- splitting bytes ------------------------------------------------------------------------


def _split_mode(text: str) -> str:
    if text in ("whole", "lines", "bytes", "random"):
        return text
    kind, _, seed = text.partition(":")
    if kind == "random" and seed.isdigit():
        return text
    raise argparse.ArgumentTypeError(
        f"invalid split {text!r}: use whole, lines, bytes, random or random:SEED"
    )


def split_bytes(data: bytes, mode: str) -> Iterator[bytes]:
    """``data`` in chunks: ``whole``, ``lines`` (after each LF, so a CRLF can be cut),
    ``bytes`` (one at a time) or ``random:SEED`` (sizes from 1 byte to 1 KiB)."""
    if mode == "whole":
        yield data
    elif mode == "lines":
        start = 0
        while (end := data.find(b"\n", start) + 1) > 0:
            yield data[start:end]
            start = end
        if start < len(data):
            yield data[start:]
    elif mode == "bytes":
        for i in range(len(data)):
            yield data[i : i + 1]
    else:
        rng = random.Random(int(mode.partition(":")[2]))
        start = 0
        while start < len(data):
            end = start + rng.choice(_RANDOM_SIZES)
            yield data[start:end]
            start = end


# -- progress on a terminal ---------------------------------------------------------------


class _Progress:
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


def _size(n: int) -> str:
    return f"{n} B" if n < 1000 else f"{n / 1000:.1f} kB" if n < 1_000_000 else f"{n / 1e6:.1f} MB"


# -- showing events -------------------------------------------------------------------------


class _Output:
    """Events and the final response, as JSON lines, a human rendering, or the final only."""

    def __init__(self, fmt: str, stream: IO[str], *, live: bool = False) -> None:
        self.fmt = fmt
        self.stream = stream
        self.live = live
        self.count = 0
        self.transcript: Transcript | None = None
        if fmt == "pretty":
            from .demo import PlainWriter, RichWriter, Transcript

            console = _rich_console(stream)
            writer = RichWriter(console) if console is not None else PlainWriter(stream, live=live)
            self.transcript = Transcript(writer)

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


def _rich_console(stream: IO[str]) -> Any:
    if not stream.isatty():
        return None
    try:
        from rich.console import Console
    except ImportError:
        return None
    return Console(file=stream, highlight=False)


# -- replay ---------------------------------------------------------------------------------


def _read(name: str) -> bytes:
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


def _replay(args: argparse.Namespace) -> int:
    data = _read(args.file)
    if not data:
        raise CommandError(f"{args.file} is empty")
    if args.check:
        return _check(data, args.provider)
    mode = args.split
    if mode == "random":
        mode = f"random:{random.randrange(1_000_000)}"
        print(f"laminate: splitting with --split {mode}", file=sys.stderr)
    out = _Output(args.format, sys.stdout)
    normalizer = StreamNormalizer(args.provider)
    progress = _Progress(quiet_on_tty=True)
    fed = 0
    try:
        for chunk in split_bytes(data, mode):
            out.events(normalizer.feed(chunk))
            fed += len(chunk)
            if progress.due():
                progress.show(f"replaying: {fed * 100 // len(data)}%, {out.count} events")
        out.events(normalizer.close())
    except UnknownProviderError as exc:
        out.interrupted()
        raise CommandError(
            f"could not detect the provider (saw {exc.seen}; the file starts {data[:40]!r}); "
            "use --provider"
        ) from None
    except LaminateError:
        out.interrupted()
        raise
    finally:
        progress.clear()
    out.final(normalizer.response)
    return 0


def _trace(
    data: bytes, mode: str, provider: str | None, progress: _Progress | None = None
) -> list[Any]:
    """What must not depend on the splitting: every event (tool-argument views
    included), then the final response or the error."""
    normalizer = StreamNormalizer(provider)
    trace: list[Any] = []
    fed = 0
    try:
        for chunk in split_bytes(data, mode):
            trace.extend(map(_comparable, normalizer.feed(chunk)))
            fed += len(chunk)
            if progress is not None and progress.due():
                progress.show(f"checking: {mode}, {fed * 100 // len(data)}%")
        trace.extend(map(_comparable, normalizer.close()))
    except LaminateError as exc:
        trace.append({"error": type(exc).__name__, "message": str(exc)})
    return trace


def _comparable(event: Event) -> dict[str, Any]:
    item = event_to_dict(event)
    if isinstance(event, ToolInputDelta):
        item["string_deltas"] = [[list(d.path), d.text] for d in event.string_deltas]
        item["complete"] = event.is_complete()
    return item


def _check(data: bytes, provider: str | None) -> int:
    modes = ["whole", "lines", "bytes", *(f"random:{seed}" for seed in range(CHECK_SEEDS))]
    progress = _Progress()
    try:
        reference = _trace(data, "whole", provider)
        for mode in modes[1:]:
            trace = _trace(data, mode, provider, progress)
            if trace != reference:
                progress.clear()
                return _report_difference(reference, trace, mode)
    finally:
        progress.clear()
    error = reference[-1].get("error") if reference else None
    events = len(reference) - (error is not None)
    ending = f"then {error}" if error else "ending in response_done"
    print(f"identical under {len(modes)} splittings: {events} events, {ending}")
    print(f"  ({', '.join(modes[:3])} and random:0 to random:{CHECK_SEEDS - 1})")
    return 0


def _report_difference(reference: list[Any], trace: list[Any], mode: str) -> int:
    at = next(
        (i for i, (a, b) in enumerate(zip(reference, trace, strict=False)) if a != b),
        min(len(reference), len(trace)),
    )

    def item(items: list[Any]) -> str:
        return json.dumps(items[at], ensure_ascii=False) if at < len(items) else "(nothing)"

    print(f"different: split {mode!r} differs from 'whole' at item {at}")
    print(f"  whole: {item(reference)}")
    print(f"  {mode}: {item(trace)}")
    print(f"laminate: the events depend on the splitting (first seen with {mode})", file=sys.stderr)
    return 1


# -- record ---------------------------------------------------------------------------------


def _headers(items: Sequence[str]) -> dict[str, str]:
    headers = {"content-type": "application/json", "accept-encoding": "identity"}
    for item in items:
        key, sep, value = item.partition(":")
        if not sep or not key.strip():
            raise _UsageError(f"invalid --header {item!r}: use NAME:VALUE")
        headers[key.strip().lower()] = value.strip()
    return headers


def _record(args: argparse.Namespace) -> int:
    import httpx

    body = _read(args.body)
    headers = _headers(args.header)
    timeout = httpx.Timeout(10.0, read=args.timeout)
    try:
        with (
            httpx.Client(timeout=timeout) as client,
            client.stream("POST", args.url, content=body, headers=headers) as response,
        ):
            return _save(response, args)
    except httpx.ConnectError as exc:
        raise CommandError(f"cannot connect to {args.url}: {_reason(exc)}") from None
    except (httpx.HTTPError, httpx.InvalidURL) as exc:
        raise CommandError(f"request to {args.url} failed: {_reason(exc)}") from None


def _reason(exc: BaseException) -> str:
    while exc.__context__ is not None and not str(exc):
        exc = exc.__context__
    return str(exc) or type(exc).__name__


def _save(response: Any, args: argparse.Namespace) -> int:
    """Write the body to the file as it arrives, feeding the same bytes to a normalizer."""
    out = _Output(args.format, sys.stdout, live=True)
    ok = 200 <= response.status_code < 300
    normalizer = StreamNormalizer(
        args.provider, url=str(response.url), content_type=response.headers.get("content-type")
    )
    error: LaminateError | None = None
    progress = _Progress(quiet_on_tty=True)
    size = 0
    with open(args.output, "wb") as file:
        for chunk in response.iter_bytes():
            file.write(chunk)
            size += len(chunk)
            if ok and error is None:
                try:
                    out.events(normalizer.feed(chunk))
                except LaminateError as exc:
                    error = exc  # keep saving: the bytes are what a fixture needs
                    out.interrupted()
            if progress.due():
                progress.show(f"recording: {_size(size)}, {out.count} events")
    progress.clear()
    status = f"HTTP {response.status_code}"
    if not ok:
        text = " ".join(Path(args.output).read_bytes()[:200].decode("utf-8", "replace").split())
        raise CommandError(f"{status} from {args.url} (body saved to {args.output}): {text}")
    if error is None:
        try:
            out.events(normalizer.close())
        except LaminateError as exc:
            error = exc
            out.interrupted()
    print(f"laminate: saved {size} bytes to {args.output} ({status})", file=sys.stderr)
    if error is not None:
        raise error
    out.final(normalizer.response)
    return 0


# -- serve and demo ---------------------------------------------------------------------------


def _serve(args: argparse.Namespace) -> int:
    from .server import DEMO_STREAMS, MockProvider, base_url, listen, make_server

    directory = Path(args.directory) if args.directory else DEMO_STREAMS
    if not directory.is_dir():
        raise CommandError(f"no such directory: {directory}")
    app = MockProvider(directory, pace=args.pace, log=_log, as_format=args.as_format)
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
    _log(f"serving {directory} on {base_url(sock)} (Ctrl-C to stop)")
    if args.as_format:
        _log(f"  every recording re-encoded as {args.as_format}")
    for provider, names in listing.items():
        if names:
            _log(f"  {provider}: {', '.join(names)}")
    server.run(sockets=[sock])
    return 0


def _targets() -> tuple[str, ...]:
    from .._encode.encoder import targets

    return targets()


def _log(line: str) -> None:
    print(line, flush=True)


def _demo(args: argparse.Namespace) -> int:
    import httpx

    from .demo import run_demo

    providers = [args.provider] if args.provider else DEMO_PROVIDERS
    try:
        if args.web:
            from .web import run_web_demo

            return run_web_demo(
                list(providers), port=args.port, pace=args.pace, open_browser=not args.no_open
            )
        run_demo(providers, pace=args.pace, plain=args.plain)
    except (RuntimeError, OSError, httpx.HTTPError) as exc:
        raise CommandError(f"the demo failed: {_reason(exc)}") from None
    return 0


# -- the parser -----------------------------------------------------------------------------


def _pace(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value <= 10:
        raise argparse.ArgumentTypeError(f"invalid pace {text!r}: seconds between 0 and 10")
    return value


def _port(text: str) -> int:
    if not text.isdigit() or int(text) > 65535:
        raise argparse.ArgumentTypeError(f"invalid port {text!r}")
    return int(text)


def _command(
    commands: Any, name: str, run: Callable[[argparse.Namespace], int], summary: str, text: str
) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = commands.add_parser(
        name, help=summary, description=text, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.set_defaults(run=run)
    return parser


def _serve_routes() -> str:
    """The mock server's endpoints, one line each: provider, path, whether it streams."""
    width = max(len(provider) for provider in PROVIDERS)
    return "\n".join(
        f"  {route.provider:<{width}}  POST {path}"
        + ("  (streams by default)" if route.stream_default else "")
        for path, route, _ in PATHS
    )


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="laminate", description="One event stream for every LLM provider's streamed answer."
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    providers = sorted(APIS)

    replay = _command(
        commands,
        "replay",
        _replay,
        "normalize a recorded stream body and print its events",
        "Read a recorded stream body (SSE or NDJSON; '-' for standard input) and print its\n"
        "normalized events as JSON lines, then the final response.",
    )
    replay.add_argument("file", help="the recorded body")
    replay.add_argument("--provider", choices=providers, help="skip detection")
    replay.add_argument(
        "--split",
        type=_split_mode,
        default="whole",
        metavar="HOW",
        help="feed the bytes whole (default), by lines, one byte at a time, or in random "
        "chunks: random or random:SEED",
    )
    replay.add_argument(
        "--check",
        action="store_true",
        help=f"replay under whole, lines, bytes and {CHECK_SEEDS} random splittings (instead "
        "of --split); exit 1 with the first difference if the events differ",
    )
    replay.add_argument(
        "--format",
        choices=FORMATS,
        default="jsonl",
        help="jsonl: events then the final response (default); pretty: for people; "
        "final: the final response only",
    )

    record = _command(
        commands,
        "record",
        _record,
        "send a request and save the raw streamed answer as a fixture",
        "POST a request body, save the response body to a file exactly as it arrives, and\n"
        "show its normalized events meanwhile. A non-2xx answer is saved too (exit 1).",
    )
    record.add_argument("url", help="the endpoint's full URL (https://host/path)")
    record.add_argument("--body", required=True, metavar="FILE", help="the JSON request body")
    record.add_argument(
        "--header",
        action="append",
        default=[],
        metavar="NAME:VALUE",
        help="a request header (repeatable), e.g. 'authorization: Bearer $KEY'",
    )
    record.add_argument("-o", "--output", required=True, metavar="FILE", help="where to save")
    record.add_argument("--provider", choices=providers, help="skip detection")
    record.add_argument(
        "--format", choices=FORMATS, default="pretty", help="how to show events (pretty)"
    )
    record.add_argument(
        "--timeout", type=float, default=300.0, metavar="S", help="longest silence (300 s)"
    )

    serve = _command(
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
    serve.add_argument("--port", type=_port, default=0, help="the port (default: a free one)")
    serve.add_argument("--host", default="127.0.0.1", help="the address (default: 127.0.0.1)")
    serve.add_argument(
        "--pace", type=_pace, default=0.0, metavar="S", help="seconds between frames (0)"
    )
    serve.add_argument(
        "--as",
        dest="as_format",
        choices=_targets(),
        metavar="FORMAT",
        help="answer every endpoint with any provider's recording, re-encoded as FORMAT "
        f"({', '.join(_targets())}); absent: each recording as recorded",
    )

    demo = _command(
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
        type=_pace,
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
        "--port", type=_port, default=0, help="with --web: the page's port (default: a free one)"
    )
    demo.add_argument("--no-open", action="store_true", help="with --web: do not open a browser")
    translate.add_parser(commands)
    proxy.add_parser(commands)
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
    except _UsageError as exc:
        return _fail(str(exc), 2)
    except CommandError as exc:
        return _fail(str(exc), 1)
    except LaminateError as exc:
        return _fail(_describe(exc), 1)
    except ImportError as exc:  # uvicorn (the 'demo' extra) is missing: the message says so
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
