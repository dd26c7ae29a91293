"""``laminate record``: send a request and save the raw answer as a fixture, showing its
events meanwhile."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .._apis.registry import APIS
from .._core.errors import LaminateError
from .._normalizer import StreamNormalizer
from .common import (
    CommandError,
    Output,
    Progress,
    UsageError,
    byte_size,
    command,
    read_file,
    reason,
)
from .replay import FORMATS

__all__ = ["add_parser"]


def _headers(items: Sequence[str]) -> dict[str, str]:
    headers = {"content-type": "application/json", "accept-encoding": "identity"}
    for item in items:
        key, sep, value = item.partition(":")
        if not sep or not key.strip():
            raise UsageError(f"invalid --header {item!r}: use NAME:VALUE")
        headers[key.strip().lower()] = value.strip()
    return headers


def _record(args: argparse.Namespace) -> int:
    import httpx

    body = read_file(args.body)
    headers = _headers(args.header)
    timeout = httpx.Timeout(10.0, read=args.timeout)
    try:
        with (
            httpx.Client(timeout=timeout) as client,
            client.stream("POST", args.url, content=body, headers=headers) as response,
        ):
            return _save(response, args)
    except httpx.ConnectError as exc:
        raise CommandError(f"cannot connect to {args.url}: {reason(exc)}") from None
    except (httpx.HTTPError, httpx.InvalidURL) as exc:
        raise CommandError(f"request to {args.url} failed: {reason(exc)}") from None


def _save(response: Any, args: argparse.Namespace) -> int:
    """Write the body to the file as it arrives, feeding the same bytes to a normalizer."""
    out = Output(args.format, sys.stdout, live=True)
    ok = 200 <= response.status_code < 300
    normalizer = StreamNormalizer(
        args.provider, url=str(response.url), content_type=response.headers.get("content-type")
    )
    error: LaminateError | None = None
    progress = Progress(quiet_on_tty=True)
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
                progress.show(f"recording: {byte_size(size)}, {out.count} events")
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


def add_parser(commands: Any) -> None:
    """The ``record`` command."""
    providers = sorted(APIS)
    record = command(
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
