"""Hostile bytes through the sans-IO core: each is handled in bounded memory and time,
ignored where the protocol allows it, or a clean :class:`LaminateError` with the offset
and ``.partial`` where it does not. Plus a short run of the fuzz targets in ``fuzz/``.

Memory is measured with :mod:`tracemalloc` (peak of everything allocated while the
bytes are fed, in 64 KiB network-sized chunks), never with timers.
"""

from __future__ import annotations

import json
import tracemalloc
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Final

import pytest
from fuzz import fuzz_hypothesis
from fuzz.targets import check_order, check_stream

import laminate
from laminate import (
    BlockEnd,
    Event,
    IncompleteStreamError,
    InvalidToolUse,
    LaminateError,
    MalformedStreamError,
    NormalizedResponse,
    StreamNormalizer,
    TextDelta,
    ToolInputDelta,
    UnknownProviderError,
)

from .support import FIXTURES, Outcome, run_chunks

CHUNK: Final = 64 * 1024
MiB: Final = 1024 * 1024
OPENAI_TEXT: Final = (FIXTURES / "openai" / "text.sse").read_bytes()
OLLAMA_TEXT: Final = (FIXTURES / "ollama" / "text.ndjson").read_bytes()


def sse(*payloads: object) -> bytes:
    return b"".join(
        b"data: " + (p if isinstance(p, bytes) else json.dumps(p).encode()) + b"\n\n"
        for p in payloads
    )


def chunk(**delta: object) -> dict[str, object]:
    finish = delta.pop("finish_reason", None)
    return {
        "id": "chatcmpl-h",
        "object": "chat.completion.chunk",
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


HELLO: Final = sse(chunk(content="Hello"))  # one complete frame before the trouble


def final(outcome: Outcome) -> NormalizedResponse:
    """The response (complete, or the error's ``.partial``)."""
    response = outcome.response
    assert response is not None
    return response


def pieces(data: bytes, size: int = CHUNK) -> Iterator[bytes]:
    for start in range(0, len(data), size):
        yield data[start : start + size]


def fed_with_peak(
    chunks: Iterable[bytes], provider: str | None = None, *, keep: bool = True, **options: Any
) -> tuple[Outcome, int, int]:
    """Feed the chunks (stopping at the first error), close; return the outcome, the
    tracemalloc peak while doing so, and how many bytes were fed. With ``keep=False``
    the events are dropped as they come, as a streaming consumer would (the outcome then
    holds only the last one)."""
    normalizer = StreamNormalizer(provider, **options)
    events: list[Event] = []
    fed = 0
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base, _ = tracemalloc.get_traced_memory()
        try:
            for piece in chunks:
                fed += len(piece)
                new = normalizer.feed(piece)
                if keep:
                    events.extend(new)
                elif new:
                    events[:] = new[-1:]
            events.extend(normalizer.close())
        except LaminateError as exc:
            outcome = Outcome(events, exc)
        else:
            outcome = Outcome(events, None)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return outcome, peak - base, fed


def endless(head: bytes, fill: bytes = b"x", limit: int = 256 * MiB) -> Iterator[bytes]:
    """``head``, then ``fill`` for ever (up to ``limit``, a safety net) in 64 KiB chunks."""
    yield head
    block = fill * (CHUNK // len(fill))
    for _ in range(limit // CHUNK):
        yield block


# -- a line that never ends, frames over the cap -----------------------------------------


@pytest.mark.parametrize(
    ("provider", "before", "head"),
    [
        ("openai", HELLO, b"data: "),
        (None, HELLO, b"data: "),
        ("ollama", OLLAMA_TEXT.split(b"\n")[0] + b"\n", b'{"message": {"content": "'),
    ],
    ids=["sse", "sse-detected", "ndjson"],
)
def test_a_line_that_never_ends_fails_at_the_cap(
    provider: str | None, before: bytes, head: bytes
) -> None:
    cap = 1 * MiB
    outcome, peak, fed = fed_with_peak(endless(before + head), provider, max_frame_size=cap)
    error = outcome.error
    assert isinstance(error, MalformedStreamError)
    assert "max_frame_bytes" in str(error)
    assert error.offset == len(before)  # where the endless line starts
    assert error.partial is not None
    assert error.partial == final(run_chunks([before], provider))
    # Stopped as soon as the cap was passed; memory follows the cap, not the stream.
    assert fed <= len(before) + len(head) + cap + CHUNK
    assert peak < 2 * cap


def test_the_default_cap_is_16_mib() -> None:
    outcome, peak, fed = fed_with_peak(endless(HELLO + b"data: "), "openai")
    assert isinstance(outcome.error, MalformedStreamError)
    assert "(16777216)" in str(outcome.error)
    assert 16 * MiB < fed <= 16 * MiB + 2 * CHUNK + len(HELLO)
    assert peak < 20 * MiB


def test_an_sse_comment_that_never_ends_is_dropped_as_it_arrives() -> None:
    """Comments are legal at any length; their bytes are never held."""
    fed_limit = 32 * MiB
    outcome, peak, fed = fed_with_peak(endless(HELLO + b":", limit=fed_limit), "openai")
    assert fed > fed_limit
    assert peak < MiB  # well below what was fed
    # The stream then ended inside the comment, before any finish: incomplete, not broken.
    assert isinstance(outcome.error, IncompleteStreamError)
    assert outcome.error.partial is not None
    assert outcome.error.partial.text() == "Hello"


@pytest.mark.parametrize(
    "fixture",
    ["openai/text.sse", "anthropic/text.sse", "ollama/text.ndjson", "openai-responses/text.sse"],
)
def test_a_frame_over_the_cap_after_good_ones(fixture: str) -> None:
    """One text frame blown up past the cap, in the middle of a real answer: the error
    names that frame's offset and keeps everything before it."""
    body = (FIXTURES / fixture).read_bytes()
    frames = _frames(body)
    k, text = _first_text_frame(frames)
    big = _with_text(frames[k], text, "x" * (MiB + 10))
    before = b"".join(frames[:k])
    outcome = run_chunks(pieces(before + big + b"".join(frames[k + 1 :])), max_frame_size=MiB)
    assert isinstance(outcome.error, MalformedStreamError)
    assert outcome.error.offset is not None
    assert len(before) <= outcome.error.offset < len(before) + len(big)
    assert outcome.error.partial == final(run_chunks([before]))


def _frames(body: bytes) -> list[bytes]:
    sep = b"\n\n" if b"\n\n" in body else b"\n"
    return [piece + sep for piece in body.split(sep) if piece]


def _first_text_frame(frames: list[bytes]) -> tuple[int, str]:
    normalizer = StreamNormalizer()
    for k, frame in enumerate(frames):
        for event in normalizer.feed(frame):
            if isinstance(event, TextDelta):
                return k, event.text
    raise AssertionError("no text frame")


def _with_text(frame: bytes, old: str, new: str) -> bytes:
    for encoded in (json.dumps(old, ensure_ascii=False), json.dumps(old)):
        raw = encoded[1:-1].encode()
        if raw in frame:
            return frame.replace(raw, new.encode(), 1)
    raise AssertionError(f"{old!r} is not in the frame")


def test_many_data_lines_in_one_event_fail_at_the_cap() -> None:
    cap = MiB
    lines = b"data: xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n"
    outcome, peak, fed = fed_with_peak(endless(HELLO, lines), "openai", max_frame_size=cap)
    assert isinstance(outcome.error, MalformedStreamError)
    assert "event data longer than max_frame_bytes" in str(outcome.error)
    assert outcome.error.offset == len(HELLO)
    assert fed <= len(HELLO) + cap + 2 * CHUNK
    assert peak < 3 * cap


def test_empty_data_lines_are_held_within_the_cap() -> None:
    cap = 64 * 1024
    lines = endless(HELLO, b"data:\n" * 1000)
    outcome, peak, _ = fed_with_peak(lines, "openai", max_frame_size=cap)
    assert isinstance(outcome.error, MalformedStreamError)
    assert peak < 3 * cap


def _unterminated(body: bytes, count: int) -> bytes:
    """The first ``count`` frames of an SSE body, the last without its blank line."""
    return b"\n\n".join(body.split(b"\n\n")[:count])


@pytest.mark.parametrize(
    ("provider", "body"),
    [
        (None, HELLO.rstrip(b"\n")),
        ("anthropic", _unterminated((FIXTURES / "anthropic" / "text.sse").read_bytes(), 4)),
    ],
    ids=["openai-detected", "anthropic"],
)
def test_a_stream_cut_after_an_unterminated_frame_is_incomplete(
    provider: str | None, body: bytes
) -> None:
    """The last frame's JSON arrived whole but not its blank line, then the bytes
    ended: the frame counts (its events come from close()), and the answer is still
    incomplete."""
    with pytest.raises(IncompleteStreamError) as info:
        laminate.collect_sync([body], provider)
    assert info.value.partial is not None
    assert info.value.partial.content  # the last frame's content is in .partial
    outcome = run_chunks([body], provider)
    assert isinstance(outcome.error, IncompleteStreamError)


# -- tool arguments over their cap --------------------------------------------------------


@pytest.mark.parametrize(
    "fixture",
    [
        "anthropic/tool-call.sse",
        "openai-responses/function-call.sse",
        "ollama/tool-call.ndjson",  # arguments sent as a whole object
        "openai/parallel-tool-calls.sse",
        "openai-compat/tool-call-arguments-object.sse",
    ],
)
def test_tool_arguments_over_the_cap_in_every_format(fixture: str) -> None:
    body = (FIXTURES / fixture).read_bytes()
    cap = max(_argument_sizes(body).values()) // 2
    outcome = run_chunks(pieces(body, 97), max_tool_input_size=cap)
    assert isinstance(outcome.error, MalformedStreamError)
    assert f"max_tool_input_size ({cap} characters)" in str(outcome.error)
    partial = outcome.error.partial
    assert partial is not None
    assert partial.tool_uses() == []  # the call over the cap can never be dispatched
    assert any(isinstance(block, InvalidToolUse) for block in partial.content)


def test_tool_arguments_exactly_at_the_cap_are_accepted() -> None:
    body = (FIXTURES / "anthropic" / "tool-call.sse").read_bytes()
    [size] = _argument_sizes(body).values()
    at_cap = run_chunks([body], max_tool_input_size=size)
    assert at_cap.error is None
    assert final(at_cap) == final(run_chunks([body]))
    over = run_chunks([body], max_tool_input_size=size - 1)
    assert isinstance(over.error, MalformedStreamError)


def _argument_sizes(body: bytes) -> dict[int, int]:
    """Characters of argument text each tool call of a stream receives."""
    sizes: dict[int, int] = {}
    for event in run_chunks([body]).events:
        if isinstance(event, ToolInputDelta):
            sizes[event.index] = sizes.get(event.index, 0) + len(event.fragment)
    return sizes


# -- deep nesting ----------------------------------------------------------------------------

DEEP: Final = 100_000


@pytest.mark.parametrize(
    ("provider", "body"),
    [
        ("openai", HELLO + b"data: " + b"[" * DEEP + b"\n\n"),
        (None, HELLO + b"data: " + b"[" * DEEP + b"]" * DEEP + b"\n\n"),
        ("ollama", OLLAMA_TEXT.split(b"\n")[0] + b"\n" + b'{"message": ' + b"[" * DEEP + b"\n"),
        ("anthropic", b"event: message_start\ndata: " + b'{"a":' * DEEP + b"\n\n"),
    ],
    ids=["sse-open", "sse-balanced-detected", "ndjson", "anthropic-objects"],
)
def test_deeply_nested_json_in_a_frame_is_a_clean_error(provider: str | None, body: bytes) -> None:
    outcome = run_chunks(pieces(body), provider)
    error = outcome.error
    assert isinstance(error, MalformedStreamError)
    assert isinstance(error.__cause__, RecursionError)
    first_frame_end = body.index(b"\n\n") + 2 if b"\n\n" in body else body.index(b"\n") + 1
    assert error.offset in (0, first_frame_end)
    assert len(error.snippet) <= 80
    assert error.partial is not None


def test_deeply_nested_tool_arguments_end_as_invalid_tool_use() -> None:
    """Arguments are parsed once, at the block's end: a deep array there is an
    InvalidToolUse, and the live views of its fragments stay usable."""
    args = "[" * DEEP + "]" * DEEP
    fragments = [args[i : i + 5000] for i in range(0, len(args), 5000)]
    opener = {"index": 0, "id": "call_deep", "function": {"name": "f", "arguments": ""}}
    frames = [chunk(tool_calls=[opener])]
    frames += [chunk(tool_calls=[{"index": 0, "function": {"arguments": f}}]) for f in fragments]
    frames.append(chunk(finish_reason="tool_calls"))
    outcome = run_chunks(pieces(sse(*frames, b"[DONE]")), "openai")
    assert outcome.error is None
    response = final(outcome)
    [block] = response.content
    assert isinstance(block, InvalidToolUse)
    assert block.raw_input == args
    assert "nested too deeply" in block.reason
    assert not response.has_tool_use()
    deltas = [e for e in outcome.events if isinstance(e, ToolInputDelta)]
    assert deltas[-1].invalid is not None  # the live parser gives up early, with a reason
    assert deltas[-1].partial.value is not None
    assert deltas[-1].string_deltas == ()


# -- keep-alives -----------------------------------------------------------------------------

KEEPALIVES: Final = b": keep-alive\n" * (CHUNK // len(b": keep-alive\n"))


def test_megabytes_of_keepalive_comments_are_ignored() -> None:
    """1 MiB of comment lines before the answer and between its frames: ignored, held in
    no buffer, and the answer parses exactly as without them."""
    frames = _frames(OPENAI_TEXT)
    body = (
        KEEPALIVES * 8 + b"".join(KEEPALIVES + frame for frame in frames[:8]) + b"".join(frames[8:])
    )
    outcome, peak, fed = fed_with_peak(pieces(body))  # the provider is detected after them
    assert fed > MiB
    assert peak < 512 * 1024
    assert outcome.error is None
    assert outcome.events == run_chunks([OPENAI_TEXT]).events


@pytest.mark.parametrize(
    ("fixture", "blank"),
    [("ollama/text.ndjson", b"\n"), ("openai/text.sse", b"\n"), ("openai/text.sse", b"\r\n")],
    ids=["ndjson", "sse-lf", "sse-crlf"],
)
def test_megabytes_of_blank_lines_between_frames_are_ignored(fixture: str, blank: bytes) -> None:
    body = (FIXTURES / fixture).read_bytes()
    frames = _frames(body)
    padded = frames[0] + blank * (MiB // len(blank)) + b"".join(frames[1:])
    outcome, peak, fed = fed_with_peak(pieces(padded, 16 * 1024))
    assert outcome.error is None
    assert outcome.events == run_chunks([body]).events
    # Nothing accumulates; what a feed splits is released after it (about 10 list slots
    # per line end for LF, 45 for CRLF: see the single-feed test below).
    assert peak < fed


def test_one_large_feed_of_line_ends_is_split_in_bounded_memory() -> None:
    frames = _frames(OPENAI_TEXT)
    body = frames[0] + b"\r\n" * (128 * 1024) + b"".join(frames[1:])
    outcome, peak, _ = fed_with_peak([body])
    assert outcome.error is None
    assert peak < 4 * MiB


@pytest.mark.parametrize("provider", [None, "openai"])
def test_blank_lines_before_the_first_frame_are_not_accumulated(provider: str | None) -> None:
    body = b"\n" * (256 * 1024) + OPENAI_TEXT
    outcome, peak, _ = fed_with_peak(pieces(body, 1024), provider)
    assert outcome.error is None
    assert outcome.events == run_chunks([OPENAI_TEXT]).events
    assert peak < 64 * 1024


# -- invalid UTF-8, NUL bytes ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("provider", "bad"),
    [
        ("openai", b'data: {"a": "\xff"}\n\n'),
        ("openai", b'data: {"a": "\xc0\xaf"}\n\n'),  # overlong "/"
        ("openai", b'data: {"a": "\xed\xa0\x80"}\n\n'),  # a UTF-16 surrogate, UTF-8 encoded
        ("openai", b"event: \xfe\ndata: {}\n\n"),
        ("ollama", b'{"a": "\x80"}\n'),
    ],
    ids=["byte-ff", "overlong", "surrogate", "in-field-name", "ndjson"],
)
def test_invalid_utf8_is_malformed_at_its_line(provider: str, bad: bytes) -> None:
    before = HELLO if provider == "openai" else OLLAMA_TEXT.split(b"\n")[0] + b"\n"
    outcome = run_chunks(pieces(before + bad, 7), provider)
    error = outcome.error
    assert isinstance(error, MalformedStreamError)
    assert "invalid UTF-8" in str(error)
    assert error.offset == len(before)
    assert error.partial == final(run_chunks([before], provider))


def test_a_character_cut_by_the_end_of_the_stream_is_incomplete() -> None:
    outcome = run_chunks(pieces(HELLO + b'data: {"a": "\xc3', 7), "openai")
    assert isinstance(outcome.error, IncompleteStreamError)
    assert "inside a character" in str(outcome.error)
    assert outcome.error.partial == final(run_chunks([HELLO], "openai"))


def test_invalid_utf8_in_a_comment_is_ignored() -> None:
    body = b": \xff\xfe\xc3\n" + OPENAI_TEXT
    assert run_chunks(pieces(body, 5)).events == run_chunks([OPENAI_TEXT]).events


def test_nul_bytes() -> None:
    finished = sse(chunk(content="a"), chunk(finish_reason="stop"), b"[DONE]")
    # Outside JSON, NUL lines are SSE lines with an unknown field name: ignored, as is an
    # id holding NUL (WHATWG).
    ignored = run_chunks([b"\x00\x00\x00\n" + b"id: a\x00b\n" + finished])
    assert ignored.error is None
    assert final(ignored).text() == "a"
    # An escaped NUL is just a character of the text.
    escaped = run_chunks([sse(chunk(content="a\x00b"), chunk(finish_reason="stop"))])
    assert final(escaped).text() == "a\x00b"
    # A raw NUL inside a JSON string (a control character) or as a whole NDJSON line is
    # not JSON.
    raw = run_chunks([HELLO + b'data: {"a": "\x00"}\n\n'], "openai")
    assert isinstance(raw.error, MalformedStreamError)
    assert raw.error.offset == len(HELLO)
    ndjson = run_chunks([b"\x00" * 12 + b"\n"], "ollama")
    assert isinstance(ndjson.error, MalformedStreamError)
    # Fewer than twelve bytes from a NUL may be the prelude of a binary event stream, which
    # any provider's answer may be (the bytes tell the framing): cut short, whole or not.
    for chunks in ([b"\x00\x00\n"], [b"\x00", b"\x00\n"]):
        short = run_chunks(chunks, "ollama")
        assert isinstance(short.error, IncompleteStreamError)
    # Nothing but NULs: nothing to detect a provider from.
    nothing = run_chunks([b"\x00" * 10_000])
    assert isinstance(nothing.error, UnknownProviderError)


# -- gigantic numbers ------------------------------------------------------------------------

HUGE: Final = "9" * 1_000_000  # far past Python's 4300-digit int conversion limit


def _usage_frame(usage: bytes) -> bytes:
    """An OpenAI usage chunk whose ``usage`` object is these raw bytes."""
    head = b'{"id":"chatcmpl-h","object":"chat.completion.chunk","model":"m","choices":[],'
    return sse(head + b'"usage":' + usage + b"}")


def test_a_gigantic_number_in_a_frame_is_malformed() -> None:
    frame = _usage_frame(b'{"prompt_tokens":' + HUGE.encode() + b',"completion_tokens":1}')
    outcome = run_chunks(pieces(HELLO + frame), "openai")
    assert isinstance(outcome.error, MalformedStreamError)
    assert "integer string conversion" in str(outcome.error)
    assert outcome.error.offset == len(HELLO)
    assert outcome.error.partial is not None
    assert outcome.error.partial.text() == "Hello"


def test_numbers_a_count_cannot_hold_are_not_counts() -> None:
    frame = _usage_frame(b'{"prompt_tokens":1e999,"completion_tokens":NaN,"total_tokens":2.5}')
    outcome = run_chunks([HELLO + sse(chunk(finish_reason="stop")) + frame + sse(b"[DONE]")])
    assert outcome.error is None
    usage = final(outcome).usage
    assert usage.input_tokens is None  # never estimated from a float
    assert usage.output_tokens is None
    assert usage.raw["prompt_tokens"] == float("inf")


def _tool_call_stream(arguments: str) -> bytes:
    opener = {"index": 0, "id": "call_n", "function": {"name": "f", "arguments": ""}}
    return sse(
        chunk(tool_calls=[opener]),
        chunk(tool_calls=[{"index": 0, "function": {"arguments": arguments}}]),
        chunk(finish_reason="tool_calls"),
        b"[DONE]",
    )


def test_a_gigantic_number_in_tool_arguments_is_invalid_tool_use() -> None:
    outcome = run_chunks(pieces(_tool_call_stream('{"n": ' + HUGE + "}")), "openai")
    assert outcome.error is None
    [block] = final(outcome).content
    assert isinstance(block, InvalidToolUse)
    assert "integer string conversion" in block.reason
    assert len(block.raw_input) == len(HUGE) + 7


def test_a_long_number_under_the_limit_is_kept_exactly() -> None:
    digits = "7" * 4000
    outcome = run_chunks([_tool_call_stream('{"n": ' + digits + "}")], "openai")
    [call] = final(outcome).tool_uses()
    assert call.input.value == {"n": int(digits)}


def test_live_views_of_a_gigantic_number_do_not_raise() -> None:
    events = StreamNormalizer("openai").feed(_tool_call_stream('{"n": ' + "9" * 5000 + "}"))
    [delta] = [e for e in events if isinstance(e, ToolInputDelta) and e.fragment]
    _ = delta.partial
    # The final parse refuses the number (InvalidToolUse): the live view should agree.
    assert delta.invalid is not None


# -- a great many tiny frames ---------------------------------------------------------------

TINY_FRAMES: Final = 200_000


def _tiny_frames(count: int) -> tuple[bytes, str]:
    head = b'data: {"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,'
    head += b'"delta":{"content":"'
    tail = b'"},"finish_reason":null}]}\n\n'
    letters = "abcdefghijklmnopqrstuvwxyz"
    text = "".join(letters[i % 26] for i in range(count))
    body = b"".join(head + c.encode() + tail for c in text)
    return body + sse(chunk(finish_reason="stop"), b"[DONE]"), text


def test_two_hundred_thousand_one_character_frames() -> None:
    """Correct, and nothing per frame kept beyond its character (see
    benchmarks/bench_load.py for a million frames and the time they take)."""
    body, text = _tiny_frames(TINY_FRAMES)
    normalizer = StreamNormalizer()
    deltas = 0
    for piece in pieces(body):
        deltas += sum(isinstance(e, TextDelta) for e in normalizer.feed(piece))
    normalizer.close()
    response = normalizer.response
    assert isinstance(response, NormalizedResponse)
    assert deltas == TINY_FRAMES
    assert response.text() == text
    assert response.raw.value is None  # no frame kept without keep_raw=True


def test_tiny_frames_cost_memory_by_content_not_by_frame() -> None:
    body, text = _tiny_frames(20_000)
    outcome, peak, fed = fed_with_peak(pieces(body), keep=False)
    assert final(outcome).text() == text
    # ~130 bytes on the wire per character; what is held is the characters (a list
    # slot each) and one chunk's events.
    assert peak < fed // 4


# -- the fuzz targets, briefly ----------------------------------------------------------------


@pytest.mark.parametrize("kind", sorted(fuzz_hypothesis.KINDS))
def test_fuzz_target_short_run(kind: str) -> None:
    """A few examples of each fuzz target, the same ones every run (``python
    fuzz/fuzz_hypothesis.py`` runs many more, new ones each time)."""
    fuzz_hypothesis.run(40, [kind], database=False, derandomize=True)


def test_the_fuzz_oracle_rejects_broken_orders() -> None:
    good = run_chunks([OPENAI_TEXT]).events
    check_order(good, completed=True)
    check_stream(OPENAI_TEXT, None, range(0, len(OPENAI_TEXT), 3))
    broken: list[Callable[[list[Event]], list[Event]]] = [
        lambda e: e[1:],  # no ResponseStart
        lambda e: [e[0], e[2], e[1], *e[3:]],  # a delta before its BlockStart
        lambda e: [x for x in e if not isinstance(x, BlockEnd)],  # a block never ends
        lambda e: e[:-1],  # no ResponseDone
    ]
    for edit in broken:
        with pytest.raises(AssertionError):
            check_order(edit(list(good)), completed=True)


# -- the same outcome however the bytes were split ---------------------------------------------

BEDROCK_TEXT: Final = (FIXTURES / "bedrock" / "text.eventstream").read_bytes()
GEMINI_ARRAY: Final = (FIXTURES / "gemini" / "thinking-signatures-array.stream.json").read_bytes()


def _outcome_key(outcome: Outcome) -> tuple[Any, ...]:
    error = outcome.error
    return (
        outcome.events,
        type(error),
        None if error is None else str(error),
        getattr(error, "offset", None),
    )


def _alike(data: bytes, provider: str | None) -> Outcome:
    """The outcome of ``data`` fed whole, which fed a byte at a time and cut after its
    first byte must equal (events, error type, message and offset)."""
    whole = run_chunks([data], provider)
    for chunks in ([data[:1], data[1:]], [data[i : i + 1] for i in range(len(data))]):
        assert _outcome_key(run_chunks(chunks, provider)) == _outcome_key(whole)
    return whole


@pytest.mark.parametrize("provider", [None, "bedrock", "openai", "ollama"])
def test_a_binary_stream_is_told_by_its_bytes_however_they_come(provider: str | None) -> None:
    """Whatever the provider said, twelve bytes tell a binary event stream; its first
    byte alone does not."""
    outcome = _alike(BEDROCK_TEXT, provider)
    if provider in (None, "bedrock"):
        assert outcome.error is None


def test_blank_lines_before_a_binary_stream_are_dropped_and_counted() -> None:
    outcome = _alike(b"\r\n\n" + BEDROCK_TEXT, "bedrock")
    assert outcome.error is None
    assert outcome.response == run_chunks([BEDROCK_TEXT], "bedrock").response
    corrupt = bytearray(BEDROCK_TEXT)
    corrupt[20] ^= 1  # inside the first message: its CRC fails
    broken = _alike(b"\r\n\n" + bytes(corrupt), "bedrock")
    assert isinstance(broken.error, MalformedStreamError)
    assert broken.error.offset == 3  # the stream's offset, blank lines included


def test_invalid_utf8_in_a_json_array_element_is_malformed_where_the_element_starts() -> None:
    second = GEMINI_ARRAY.index(b"\n,\r\n{") + 4
    text = GEMINI_ARRAY.index(b'" Octopuses', second) + 1
    data = GEMINI_ARRAY[:text] + b"\xff" + GEMINI_ARRAY[text:]
    outcome = _alike(data, "gemini")
    assert isinstance(outcome.error, MalformedStreamError)
    assert "invalid UTF-8" in str(outcome.error)
    assert outcome.error.offset == second
    assert any(isinstance(e, laminate.ReasoningDelta) for e in outcome.events)  # the first's


@pytest.mark.parametrize(
    "data",
    [
        b'[{"a": 1} x {"b": 2}]',  # between elements
        b'[{"a": 1}]  \r\n tail',  # after the array
        b'[{"a": 1}, 7, {"b": 2}]',  # an element that is not an object
        b'[{"a": 1}, [{"b": 2}]]',
    ],
)
def test_a_bad_json_array_quotes_the_same_bytes_however_they_come(data: bytes) -> None:
    outcome = _alike(data, "gemini")
    assert isinstance(outcome.error, MalformedStreamError)


@pytest.mark.parametrize("provider", [None, "ollama", "openai", "bedrock"])
def test_a_body_after_blank_lines_is_refused_at_its_first_byte(provider: str | None) -> None:
    outcome = _alike(b"\r\n\r\n\x01{}", provider)
    assert isinstance(outcome.error, LaminateError)
    if isinstance(outcome.error, MalformedStreamError):
        assert outcome.error.offset == 4


def test_a_delta_type_that_is_not_a_string_is_ignored_batched_or_not() -> None:
    start = (FIXTURES / "anthropic" / "text.sse").read_bytes()
    odd = start.replace(b'"type":"text_delta","text":"Montr', b'"type":[],"text":"Montr')
    assert odd != start
    outcome = _alike(odd, "anthropic")
    assert outcome.error is None
    assert outcome.response is not None
    assert "Montr" not in outcome.response.text()


@pytest.mark.parametrize(
    ("provider", "body"),
    [
        ("gemini", GEMINI_ARRAY),
        ("ollama", OLLAMA_TEXT),
        ("openai", OPENAI_TEXT),
    ],
)
def test_a_byte_order_mark_after_blank_lines_reads_alike_however_split(
    provider: str, body: bytes
) -> None:
    outcome = _alike(b"\n\r\n\xef\xbb\xbf" + body, provider)
    assert outcome.error is None
    assert outcome.response == run_chunks([body], provider).response


def test_a_json_array_element_over_the_cap_is_refused_whole_or_in_pieces() -> None:
    element = GEMINI_ARRAY[1 : GEMINI_ARRAY.index(b"\n,")]  # the first element
    body = b"[" + element + b"]"
    for cap, refused in ((len(element) - 1, True), (len(element), False)):
        whole = run_chunks([body], "gemini", max_frame_size=cap)
        pieces = run_chunks(
            [body[i : i + 1] for i in range(len(body))], "gemini", max_frame_size=cap
        )
        assert _outcome_key(whole) == _outcome_key(pieces)
        assert isinstance(whole.error, MalformedStreamError) is refused


@pytest.mark.parametrize("provider", ["openai", "gemini", "bedrock"])
@pytest.mark.parametrize("blank", [b" " * 40, b" " * 40 + b"\n", b"\n" + b"\t" * 33 + b"\r\n"])
def test_a_blank_line_over_the_cap_before_the_first_frame_is_refused_however_it_comes(
    provider: str, blank: bytes
) -> None:
    """Alone, beside other blank lines or with the first frame, ended or not."""
    body = {"openai": OPENAI_TEXT, "gemini": GEMINI_ARRAY, "bedrock": BEDROCK_TEXT}[provider]
    data = blank + body
    splits = [[data], [blank, body], [data[:20], data[20:]], [data[:60], data[60:]]]
    outcomes = [_outcome_key(run_chunks(chunks, provider, max_frame_size=32)) for chunks in splits]
    assert all(outcome == outcomes[0] for outcome in outcomes)
    _, kind, message, offset = outcomes[0]
    assert kind is MalformedStreamError
    assert message is not None
    assert "a blank line longer than max_frame_bytes (32)" in message
    assert offset == (1 if blank.startswith(b"\n") else 0)


@pytest.mark.parametrize("cap", [500, 1000])
def test_a_first_line_that_is_not_json_fails_alike_when_the_body_is_over_the_cap(cap: int) -> None:
    """Read as NDJSON, an SSE body's first line is not JSON: the bytes may be one document,
    until they grow past the cap; then that line's error, as when they came at once."""
    data = b" \r\n" + OPENAI_TEXT
    splits = [[data], [data[:40], data[40:]], [data[:200], data[200:400], data[400:]]]
    outcomes = [_outcome_key(run_chunks(chunks, "ollama", max_frame_size=cap)) for chunks in splits]
    assert all(outcome == outcomes[0] for outcome in outcomes)
    _, kind, message, offset = outcomes[0]
    assert kind is MalformedStreamError
    assert message is not None
    assert message.startswith("a frame is not JSON")
    assert offset == 3


def test_a_document_over_the_cap_quotes_the_same_bytes_however_it_came() -> None:
    body = json.dumps({"id": "x", "object": "chat.completion", "choices": [], "pad": "p" * 300})
    data = body.encode()
    splits = [[data], [data[:10], data[10:]], [data[i : i + 7] for i in range(0, len(data), 7)]]
    outcomes = [_outcome_key(run_chunks(chunks, "openai", max_frame_size=50)) for chunks in splits]
    assert all(outcome == outcomes[0] for outcome in outcomes)
    assert outcomes[0][1] is MalformedStreamError
