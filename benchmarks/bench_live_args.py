"""Live tool arguments: what a UI pays to render a tool call while it streams.

Usage: ``python benchmarks/bench_live_args.py [--quick] [--repeat N] [--provider P]``

One Anthropic Messages and one OpenAI Chat Completions stream (SSE bytes generated
here in each API's documented shape) carry a single ``write_file`` call whose arguments
are ``{"path": ..., "content": <N KB of code with escapes and non-ASCII>}``, sent in
8-character fragments, for N = 10, 100 and 1000. Each is fed to
``laminate.StreamNormalizer`` in 16 KB reads and consumed these ways:

- floor: the body split into frames and ``json.loads`` of every payload, nothing else;
- no reads: the events are produced and dropped (and, to show what the live view adds
  to that, the ``ArgumentsView.append`` calls alone);
- UI loop: at every ``ToolInputDelta``, ``is_written(("path",))`` and the
  ``string_deltas`` of the content appended to the text being shown (checked at the
  end against the real content);
- ``partial``: the same loop reading ``event.partial`` at every fragment, quadratic by
  nature (each read builds the whole value);
- re-parse: what the official SDKs do, the whole argument buffer parsed again with
  ``jiter.from_json(buf, partial_mode="trailing-strings")`` after every fragment.

The last three are given for the whole stream and for their reads alone (timed over
events collected beforehand; collecting parses nothing, the views are lazy). Times
are CPU seconds (``time.process_time``), the best of ``--repeat`` interleaved rounds
(the quadratic loops run once from 100 KB up). At the largest size the quadratic loops
make and time only every 100th read and scale (marked ``~``): the loop's own time plus
100 times the sampled reads. ``jiter`` is a benchmark-only dependency.
"""

from __future__ import annotations

import argparse
import functools
import itertools
import json
import random
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Final

import jiter

import laminate
from laminate import StreamNormalizer, ToolInputDelta
from laminate._core.partial_json import ArgumentsView

FRAGMENT: Final = 8  # characters of argument text per provider event
READ_SIZE: Final = 16 * 1024  # bytes per feed(), as a socket hands them over
FLOOR: Final = "floor: frames + json.loads"
NO_READS: Final = "no reads"
PARTIAL: Final = "`partial` at every fragment"
BOOKKEEPING: Final = "of which `ArgumentsView.append`"
UI_LOOP: Final = "UI loop: is_written + string_deltas"
REPARSE: Final = "re-parse with jiter (SDKs)"
PATH: Final = "src/laminate/examples/générateur_de_rapport.py"

_LINES: Final = (
    "def render(report, *, width=80):\n",
    '    """Render the report as text; see "docs/report.md"."""\n',
    "\tfor row in report.rows:\n",
    '        print(f"{row.name:<20} {row.total:>10.2f} €")\n',
    '    path = "C:\\\\Users\\\\zoë\\\\rapports\\\\été.txt"\n',
    "    # 日本語のコメント: 処理を続行します\n",
    "    return '\\n'.join(lines)  # done ✓ 🚀\n",
    "    raise ValueError('naïve datetime — expected tz-aware')\n",
)


# -- the streams ----------------------------------------------------------------------


def arguments(kilobytes: int, seed: int = 7) -> tuple[str, str]:
    """The arguments' JSON text and the content it carries (``kilobytes`` KiB of text)."""
    rng = random.Random(seed)
    lines: list[str] = []
    size = 0
    while size < kilobytes * 1024:
        line = rng.choice(_LINES)
        lines.append(line)
        size += len(line)
    content = "".join(lines)[: kilobytes * 1024]
    # As both providers send them: compact, non-ASCII as is, only what JSON needs escaped.
    text = json.dumps({"path": PATH, "content": content}, ensure_ascii=False)
    return text, content


def _frame(payload: dict[str, Any], event: str | None = None) -> bytes:
    data = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {data}\n\n".encode()


def anthropic_body(fragments: list[str]) -> bytes:
    """A Messages stream: one ``tool_use`` block, arguments in ``input_json_delta``s."""
    usage = {"input_tokens": 412, "output_tokens": 1}
    message: dict[str, Any] = {
        "id": "msg_01XFDUDYJgAACzvnptvVoYEL",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-20250514",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": usage,
    }
    block = {"type": "tool_use", "id": "toolu_01T1x1fJ34qAmk2tNTrN7Up6", "name": "write_file"}
    frames = [
        _frame({"type": "message_start", "message": message}, "message_start"),
        _frame(
            {"type": "content_block_start", "index": 0, "content_block": {**block, "input": {}}},
            "content_block_start",
        ),
    ]
    for piece in ("", *fragments):  # the API opens with an empty fragment
        delta = {"type": "input_json_delta", "partial_json": piece}
        frames.append(
            _frame(
                {"type": "content_block_delta", "index": 0, "delta": delta}, "content_block_delta"
            )
        )
    end = {"stop_reason": "tool_use", "stop_sequence": None}
    frames += [
        _frame({"type": "content_block_stop", "index": 0}, "content_block_stop"),
        _frame(
            {"type": "message_delta", "delta": end, "usage": {"output_tokens": len(fragments)}},
            "message_delta",
        ),
        _frame({"type": "message_stop"}, "message_stop"),
    ]
    return b"".join(frames)


def openai_body(fragments: list[str]) -> bytes:
    """A Chat Completions stream: one ``tool_calls[0]``, arguments in its deltas."""
    head = {
        "id": "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT",
        "object": "chat.completion.chunk",
        "created": 1741569952,
        "model": "gpt-4o-2024-08-06",
        "system_fingerprint": "fp_f9f4fb6dbf",
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return _frame({**head, "choices": [choice]})

    opener = {
        "index": 0,
        "id": "call_DdmO9pD3xa9XTPNJ32zg2hcA",
        "type": "function",
        "function": {"name": "write_file", "arguments": ""},
    }
    frames = [chunk({"role": "assistant", "content": None, "tool_calls": [opener]})]
    frames += [
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]})
        for piece in fragments
    ]
    frames += [chunk({}, "tool_calls"), b"data: [DONE]\n\n"]
    return b"".join(frames)


@dataclass(frozen=True, slots=True)
class Case:
    provider: str
    kilobytes: int
    reads: list[bytes]  # the body in READ_SIZE pieces
    body: bytes
    fragments: list[str]  # the argument text as the provider cuts it
    content: str


def build(provider: str, kilobytes: int) -> Case:
    text, content = arguments(kilobytes)
    fragments = [text[i : i + FRAGMENT] for i in range(0, len(text), FRAGMENT)]
    body = anthropic_body(fragments) if provider == "anthropic" else openai_body(fragments)
    reads = [body[i : i + READ_SIZE] for i in range(0, len(body), READ_SIZE)]
    return Case(provider, kilobytes, reads, body, fragments, content)


# -- the consumers --------------------------------------------------------------------


def events(case: Case) -> Iterator[laminate.Event]:
    normalizer = StreamNormalizer(provider=case.provider)
    for read in case.reads:
        yield from normalizer.feed(read)
    yield from normalizer.close()


def floor(case: Case) -> None:
    for frame in case.body.split(b"\n\n"):
        data = frame[frame.find(b"data: ") + 6 :]
        if data and data != b"[DONE]":
            json.loads(data)


def appends(case: Case) -> None:
    """What a consumer that reads nothing pays the live view: one ``append`` a fragment."""
    view = ArgumentsView()
    for fragment in case.fragments:
        view.append(fragment)


def no_reads(case: Case) -> None:
    for _ in events(case):
        pass


# A reader consumes a stream's events. It returns the time of its reads when it timed
# them itself (sampling), else ``None`` and its reads are timed over a stream collected
# beforehand (collecting parses nothing: the views are lazy).
Reader = Callable[[Iterable[laminate.Event], Case], float | None]


def ui_loop(stream: Iterable[laminate.Event], case: Case) -> None:
    shown: list[str] = []
    path_done_at = -1
    for n, event in enumerate(stream):
        match event:
            case ToolInputDelta():
                if path_done_at < 0 and event.is_written(("path",)):
                    path_done_at = n  # the UI may now show the file name
                shown += [d.text for d in event.string_deltas if d.path == ("content",)]
    if "".join(shown) != case.content or path_done_at < 0:
        raise SystemExit(f"UI loop got the wrong content for {case.provider} {case.kilobytes} KB")


Read = Callable[[ToolInputDelta, list[str]], object]


def read_partial(event: ToolInputDelta, fragments: list[str]) -> object:
    return event.partial.value


def reparse_buffer(event: ToolInputDelta, fragments: list[str]) -> object:
    # The SDKs keep the buffer as bytes and parse all of it again (``+=`` copies it too).
    return jiter.from_json("".join(fragments).encode(), partial_mode="trailing-strings")


def sampled(read: Read, every: int, *, follow: bool = False) -> Reader:
    """Calls ``read`` at every ``every``-th fragment; returns the estimated time of
    calling it at all of them: ``every`` times the time of the reads it made.

    With ``follow``, the view is kept up to date at every fragment (``event.invalid``,
    untimed), so a sampled read times the read itself, not the catching up on the
    fragments before it.
    """

    def run(stream: Iterable[laminate.Event], case: Case) -> float:
        fragments: list[str] = []
        spent = 0.0
        for event in stream:
            if isinstance(event, ToolInputDelta):
                fragments.append(event.fragment)
                if follow:
                    _ = event.invalid
                if len(fragments) % every == 0:
                    start = time.process_time()
                    read(event, fragments)
                    spent += time.process_time() - start
        return every * spent

    return run


# -- measuring and reporting ----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Approach:
    name: str
    reader: Reader
    every: int  # 1: every read made; k: every k-th read made and timed, the total scaled


def approaches(kilobytes: int, quick: bool) -> list[Approach]:
    every = 100 if kilobytes >= (100 if quick else 1000) else 1
    return [
        Approach(UI_LOOP, ui_loop, 1),
        Approach(PARTIAL, sampled(read_partial, every, follow=True), every),
        Approach(REPARSE, sampled(reparse_buffer, every), every),
    ]


def seconds_of(run: Callable[[], object]) -> float:
    start = time.process_time()
    run()
    return time.process_time() - start


def measure(approach: Approach, case: Case) -> tuple[float, float]:
    """(whole stream, reads alone) in CPU seconds."""
    start = time.process_time()
    reads = approach.reader(events(case), case)
    whole = time.process_time() - start
    if reads is not None:  # the loop made 1 read in ``every``: add the others
        return whole + reads * (approach.every - 1) / approach.every, reads
    stream = list(events(case))
    return whole, seconds_of(lambda: approach.reader(stream, case))


Row = list[tuple[float, bool]]  # per size: seconds, and whether they are an estimate


def measure_case(case: Case, quick: bool, repeat: int) -> dict[str, tuple[float, bool]]:
    baselines: dict[str, Callable[[Case], object]] = {
        FLOOR: floor,
        NO_READS: no_reads,
        BOOKKEEPING: appends,
    }
    best: dict[str, tuple[float, bool]] = {}

    def keep(name: str, seconds: float, estimate: bool) -> None:
        if name not in best or seconds < best[name][0]:
            best[name] = (seconds, estimate)

    # Rounds interleave the approaches, so a noisy moment hits them all alike; the
    # quadratic ones run once from 100 KB up.
    for round_ in range(repeat):
        for name, baseline in baselines.items():
            keep(name, seconds_of(functools.partial(baseline, case)), False)
        for approach in approaches(case.kilobytes, quick):
            if approach.name != UI_LOOP and round_ and case.kilobytes >= 100:
                continue
            whole, reads = measure(approach, case)
            keep(approach.name, whole, approach.every > 1)
            keep(f"{approach.name}, reads alone", reads, approach.every > 1)
    for name, (seconds, _) in best.items():
        print(f"  {case.provider} {case.kilobytes} KB {name}: {seconds:.3f} s", file=sys.stderr)
    return best


def cell(seconds: float, estimate: bool) -> str:
    return f"{'~' if estimate else ''}{seconds:.3g}"


def growth(times: list[float]) -> str:
    return " / ".join(f"{b / a:.1f}x" for a, b in itertools.pairwise(times))


def speedups(sizes: tuple[int, ...], ours: list[float], theirs: list[float]) -> str:
    return ", ".join(
        f"{t / o:,.0f}x at {kb} KB" for kb, o, t in zip(sizes, ours, theirs, strict=True)
    )


def report(provider: str, sizes: tuple[int, ...], quick: bool, repeat: int) -> None:
    cases = [build(provider, kb) for kb in sizes]
    results = [measure_case(case, quick, repeat) for case in cases]
    rows: dict[str, Row] = {name: [result[name] for result in results] for name in results[0]}
    frags = ", ".join(f"{len(case.fragments):,}" for case in cases)
    print(f"\n**{provider}** ({frags} fragments of {FRAGMENT} characters)\n")
    print(f"| approach | {' | '.join(f'{kb} KB' for kb in sizes)} | growth per 10x |")
    print("|---|" + "---:|" * len(sizes) + "---:|")
    for name, row in rows.items():
        cells = " | ".join(cell(seconds, estimate) for seconds, estimate in row)
        print(f"| {name} | {cells} | {growth([seconds for seconds, _ in row])} |")

    def times(name: str) -> list[float]:
        return [seconds for seconds, _ in rows[name]]

    whole = speedups(sizes, times(UI_LOOP), times(REPARSE))
    reads = speedups(sizes, times(f"{UI_LOOP}, reads alone"), times(f"{REPARSE}, reads alone"))
    print(f"\nUI loop vs re-parse: whole stream {whole}; reads alone {reads}.")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="1, 10 and 100 KB: a smoke run")
    parser.add_argument("--repeat", type=int, default=5, help="runs per linear measurement")
    parser.add_argument(
        "--provider", choices=("anthropic", "openai"), action="append", help="default: both"
    )
    args = parser.parse_args()
    sizes = (1, 10, 100) if args.quick else (10, 100, 1000)
    big = sizes[-1]
    print(f"CPU seconds per stream; `~`: every 100th read timed at {big} KB, total scaled.")
    for provider in args.provider or ("anthropic", "openai"):
        report(provider, sizes, args.quick, args.repeat)


if __name__ == "__main__":
    main()
