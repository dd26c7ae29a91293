"""Writing streams: the cost of encoding an answer as each target, next to decoding it.

For a 2 MB text answer and the three-call tool answer (``_streams.py``, generated, never
recorded), the source stream is normalized once into events. Then, for every target:

- **encode**: ``StreamEncoder(target)`` over those events (what a gateway pays per answer);
- **decode**: ``StreamNormalizer(target)`` over the bytes the encoder wrote, fed in network
  sized reads (what a client of that API pays for the same answer in laminate).

The ratio encode / decode is the figure of merit: writing an answer should cost no more
than reading it. ``ai-sdk`` and ``events`` have no laminate reader: their ratio is taken
against the decode of the source stream. CPU time (``process_time``), best of N.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _streams import BenchStream, network_chunks, text_stream, tools_stream

from laminate import Event, StreamEncoder, StreamNormalizer
from laminate._encode.encoder import targets


def best(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return min(times)


def decode(chunks: Sequence[bytes], provider: str) -> list[Event]:
    normalizer = StreamNormalizer(provider)
    events: list[Event] = []
    for chunk in chunks:
        events.extend(normalizer.feed(chunk))
    events.extend(normalizer.close())
    return events


def encode(events: Sequence[Event], target: str) -> bytes:
    encoder = StreamEncoder(target)
    out = [encoder.encode(event) for event in events]
    out.append(encoder.close())
    return b"".join(out)


def rows(stream: BenchStream, repeat: int, chunk: int) -> list[str]:
    source_chunks = network_chunks(stream.body, chunk)
    events = decode(source_chunks, stream.provider)
    source_time = best(lambda: decode(source_chunks, stream.provider), repeat)
    lines = [
        f"| {stream.name} ({len(stream.body) / 1e6:.2f} MB, {len(events):,} events) | source "
        f"decode | {source_time * 1e3:.1f} ms | | |"
    ]
    for target in targets():
        data = encode(events, target)
        encode_time = best(lambda t=target: encode(events, t), repeat)  # type: ignore[misc]
        if target in ("ai-sdk", "events"):
            decode_time, against = source_time, "source"
        else:
            chunks = network_chunks(data, chunk)
            decode_time = best(lambda c=chunks, t=target: decode(c, t), repeat)  # type: ignore[misc]
            against = "its own"
        lines.append(
            f"| | {target} ({len(data) / 1e6:.2f} MB) | {encode_time * 1e3:.1f} ms | "
            f"{decode_time * 1e3:.1f} ms ({against}) | {encode_time / decode_time:.2f} |"
        )
    return lines


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--source", default="anthropic", help="the source API (anthropic)")
    parser.add_argument("--text-bytes", type=int, default=2_000_000, help="text body size")
    parser.add_argument("--tool-chars", type=int, default=300_000, help="tool argument size")
    parser.add_argument("--repeat", type=int, default=5, help="best of N runs (5)")
    parser.add_argument("--chunk", type=int, default=16384, help="network read size (16384)")
    parser.add_argument("--quick", action="store_true", help="small answers, one run (smoke)")
    args = parser.parse_args(argv)
    if args.quick:
        args.repeat, args.text_bytes, args.tool_chars = 1, 100_000, 10_000
    streams = (
        text_stream(args.source, args.text_bytes),
        tools_stream(args.source, args.tool_chars),
    )
    print(f"`python benchmarks/bench_encode.py{''.join(' ' + a for a in (argv or sys.argv[1:]))}`")
    print(f"\nPython {platform.python_version()} on {platform.machine()}; best of {args.repeat}.\n")
    print("| answer | target | encode | decode | encode / decode |")
    print("|---|---|---:|---:|---:|")
    for stream in streams:
        for line in rows(stream, args.repeat, args.chunk):
            print(line, flush=True)


if __name__ == "__main__":
    main()
