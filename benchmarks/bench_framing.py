"""Time laminate's framing layer alone against the cheapest possible split.

Usage: ``python benchmarks/bench_framing.py [--chunk BYTES] [--repeat N]``

Builds ~2 MB streams of small events (OpenAI-style ``data:`` lines with LF and with CRLF
line ends, Anthropic-style ``event:`` + ``data:`` pairs, and NDJSON), feeds them to the
decoders in chunks, and prints the best CPU time of ``--repeat`` interleaved rounds next to
floors measured in the same run: ``body.split(b"\\n\\n")`` with per-frame slicing of the
payload, and the same plus ``json.loads`` of every payload.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable

from laminate._framing import NDJSONDecoder, SSEDecoder

_WORDS = ["Hello", " world", ",", " the", " quick", " brown", " fox", " jumps", "\u00e9t\u00e9"]


def _chunk_payload(i: int) -> str:
    return json.dumps(
        {
            "id": "chatcmpl-AbCdEfGh0123456789",
            "object": "chat.completion.chunk",
            "created": 1718000000,
            "model": "gpt-4o-2024-08-06",
            "choices": [
                {"index": 0, "delta": {"content": _WORDS[i % len(_WORDS)]}, "finish_reason": None}
            ],
        },
        separators=(",", ":"),
    )


def sse_body(size: int, line_end: bytes = b"\n") -> bytes:
    parts: list[bytes] = []
    total = 0
    i = 0
    while total < size:
        frame = b"data: " + _chunk_payload(i).encode() + line_end + line_end
        parts.append(frame)
        total += len(frame)
        i += 1
    parts.append(b"data: [DONE]" + line_end + line_end)
    return b"".join(parts)


def named_body(size: int) -> bytes:
    """Anthropic-style: an ``event:`` line before every ``data:`` line."""
    parts: list[bytes] = []
    total = 0
    i = 0
    while total < size:
        payload = {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "text_delta", "text": _WORDS[i % len(_WORDS)]},
        }
        frame = b"event: content_block_delta\ndata: %s\n\n" % json.dumps(payload).encode()
        parts.append(frame)
        total += len(frame)
        i += 1
    return b"".join(parts)


def ndjson_body(size: int) -> bytes:
    parts: list[bytes] = []
    total = 0
    i = 0
    while total < size:
        line = _chunk_payload(i).encode() + b"\n"
        parts.append(line)
        total += len(line)
        i += 1
    return b"".join(parts)


def _chunks(body: bytes, size: int) -> list[bytes]:
    return [body[i : i + size] for i in range(0, len(body), size)]


def _best(cases: dict[str, Callable[[], object]], repeat: int) -> dict[str, float]:
    """Best time of each case; rounds interleave the cases so a noisy moment hits them all."""
    best = dict.fromkeys(cases, float("inf"))
    for _ in range(repeat):
        for name, fn in cases.items():
            t0 = time.process_time()
            fn()
            best[name] = min(best[name], time.process_time() - t0)
    return best


def _floor_split(body: bytes) -> int:
    n = 0
    for frame in body.split(b"\n\n"):
        if frame:
            frame.partition(b"data: ")[2].decode()
            n += 1
    return n


def _floor_json(body: bytes) -> int:
    n = 0
    for frame in body.split(b"\n\n"):
        if frame and frame != b"data: [DONE]":
            json.loads(frame.partition(b"data: ")[2])
            n += 1
    return n


def _decode(decoder: SSEDecoder | NDJSONDecoder, chunks: list[bytes]) -> int:
    n = 0
    for chunk in chunks:
        n += len(decoder.feed(chunk))
    return n + len(decoder.close())


def _decode_json(decoder: SSEDecoder | NDJSONDecoder, chunks: list[bytes]) -> int:
    n = 0
    for chunk in chunks:
        for frame in decoder.feed(chunk):
            if frame.data != "[DONE]":
                json.loads(frame.data)
                n += 1
    return n + len(decoder.close())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunk", type=int, default=16384, help="feed size in bytes")
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()

    lf = sse_body(2_000_000)
    crlf = sse_body(2_000_000, b"\r\n")
    nd = ndjson_body(2_000_000)
    named = named_body(2_000_000)
    frames = len(lf.split(b"\n\n")) - 1
    print(f"SSE body {len(lf):,} bytes, {frames:,} frames; feeds of {args.chunk} bytes")

    lf_chunks = _chunks(lf, args.chunk)
    crlf_chunks = _chunks(crlf, args.chunk)
    small_chunks = _chunks(lf, 1024)
    nd_chunks = _chunks(nd, args.chunk)
    named_chunks = _chunks(named, args.chunk)
    cases: dict[str, Callable[[], object]] = {
        "floor: split + slice": lambda: _floor_split(lf),
        "floor: split + json.loads": lambda: _floor_json(lf),
        "SSEDecoder, LF": lambda: _decode(SSEDecoder(), lf_chunks),
        "SSEDecoder, CRLF": lambda: _decode(SSEDecoder(), crlf_chunks),
        "SSEDecoder, 1 KB feeds": lambda: _decode(SSEDecoder(), small_chunks),
        "SSEDecoder + json.loads": lambda: _decode_json(SSEDecoder(), lf_chunks),
        "SSEDecoder, event: + data:": lambda: _decode(SSEDecoder(), named_chunks),
        "floor for event: + data:": lambda: _floor_split(named),
        "floor for event: + data: + json": lambda: _floor_json(named),
        "NDJSONDecoder": lambda: _decode(NDJSONDecoder(), nd_chunks),
        "floor for NDJSON: split": lambda: nd.split(b"\n"),
    }
    best = _best(cases, args.repeat)
    split = best["floor: split + slice"]
    floor = best["floor: split + json.loads"]
    print(f"{'':32} {'ms':>8} {'/split':>8} {'/floor':>8}")
    for name, seconds in best.items():
        print(f"{name:32} {seconds * 1e3:8.2f} {seconds / split:8.2f} {seconds / floor:8.2f}")


if __name__ == "__main__":
    main()
