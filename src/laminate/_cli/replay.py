"""``laminate replay``: normalize a recorded body and print its events, or check that the
events do not depend on how the bytes were split."""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Iterator
from typing import Any, Final

from .._apis.registry import APIS
from .._core.errors import LaminateError, UnknownProviderError
from .._core.events import Event, ToolInputDelta
from .._core.serialize import event_to_dict
from .._normalizer import StreamNormalizer
from .common import CommandError, Output, Progress, command, read_file

__all__ = ["FORMATS", "add_parser", "split_bytes"]

FORMATS: Final = ("jsonl", "pretty", "final")
CHECK_SEEDS: Final = 50
_RANDOM_SIZES: Final = (1, 1, 2, 3, 4, 5, 7, 11, 16, 31, 64, 250, 1024)


def split_mode(text: str) -> str:
    """A ``--split`` value, checked."""
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


def _replay(args: argparse.Namespace) -> int:
    data = read_file(args.file)
    if not data:
        raise CommandError(f"{args.file} is empty")
    if args.check:
        return _check(data, args.provider)
    mode = args.split
    if mode == "random":
        mode = f"random:{random.randrange(1_000_000)}"
        print(f"laminate: splitting with --split {mode}", file=sys.stderr)
    out = Output(args.format, sys.stdout)
    normalizer = StreamNormalizer(args.provider)
    progress = Progress(quiet_on_tty=True)
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
    data: bytes, mode: str, provider: str | None, progress: Progress | None = None
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
    progress = Progress()
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


def add_parser(commands: Any) -> None:
    """The ``replay`` command."""
    providers = sorted(APIS)
    replay = command(
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
        type=split_mode,
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
