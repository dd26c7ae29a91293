"""Many frames at once (``Batch`` and the handlers' ``run``) give exactly what frames one
by one give: the same events, the same error (type, message, offset) and the same partial
answer, for good streams and for streams that go bad in the middle of a batch.

The normalizer reads runs of regular frames as one batch once the provider is known, so
feeding a body as a first byte and then the rest takes the batched path; feeding it byte
by byte never does.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Callable, Hashable
from itertools import pairwise
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import laminate
import laminate._core.jsonlib
from laminate import StreamNormalizer, ToolInputDelta
from laminate._core.assembler import Assembler
from laminate._core.serialize import response_to_dict
from laminate._framing import Batch, encode_message
from laminate._framing.eventstream import EventStreamDecoder
from laminate._framing.lines import Frame

from .support import (
    FIXTURES,
    REAL_STREAMS,
    REAL_STREAMS_2,
    REAL_STREAMS_3,
    REAL_STREAMS_4,
    STREAM_SUFFIXES,
    Outcome,
    assert_same_outcome,
    bytes_of,
    run_chunks,
    stream_fixtures,
)


def batched(body: bytes, provider: str | None, **options: Any) -> Outcome:
    return run_chunks([body[:1], body[1:]], provider, **options)


def one_by_one(body: bytes, provider: str | None, **options: Any) -> Outcome:
    return run_chunks(bytes_of(body), provider, **options)


def batched_frames(body: bytes, provider: str, monkeypatch: pytest.MonkeyPatch) -> int:
    """How many frames the normalizer read in batches, for the body fed as a first byte
    and the rest."""
    seen: list[int] = []
    read = StreamNormalizer._on_batch

    def counting(self: StreamNormalizer, batch: Batch) -> None:
        seen.append(len(batch.payloads))
        read(self, batch)

    monkeypatch.setattr(StreamNormalizer, "_on_batch", counting)
    batched(body, provider)
    monkeypatch.undo()
    return sum(seen)


def assert_same(body: bytes, provider: str | None, **options: Any) -> Outcome:
    """Both paths agree; the batched outcome, for further checks."""
    fast = batched(body, provider, **options)
    assert_same_outcome(fast, one_by_one(body, provider, **options))
    return fast


# -- builders ---------------------------------------------------------------------------------


def openai_chunk(delta: dict[str, Any], finish: str | None = None, **top: Any) -> str:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return json.dumps({"id": "c1", "model": "m", "choices": [choice], **top})


def sse(*payloads: str, event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    return b"".join(f"{head}data: {payload}\n\n".encode() for payload in payloads)


def openai_text(count: int) -> list[str]:
    return [openai_chunk({"content": f"w{i} "}) for i in range(count)]


OPENAI_END = [openai_chunk({}, "stop"), "[DONE]"]


def anthropic(*events: dict[str, Any]) -> bytes:
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


def a_start() -> dict[str, Any]:
    message = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude"}
    return {"type": "message_start", "message": {**message, "content": []}}


def a_text(index: int, text: str) -> dict[str, Any]:
    delta = {"type": "text_delta", "text": text}
    return {"type": "content_block_delta", "index": index, "delta": delta}


def a_args(index: int, part: str) -> dict[str, Any]:
    delta = {"type": "input_json_delta", "partial_json": part}
    return {"type": "content_block_delta", "index": index, "delta": delta}


def a_tool(index: int) -> dict[str, Any]:
    block = {"type": "tool_use", "id": f"toolu_{index}", "name": "f", "input": {}}
    return {"type": "content_block_start", "index": index, "content_block": block}


def a_end(stop: str = "end_turn") -> list[dict[str, Any]]:
    return [
        {"type": "message_delta", "delta": {"stop_reason": stop}, "usage": {"output_tokens": 3}},
        {"type": "message_stop"},
    ]


def a_text_block(index: int, count: int) -> list[dict[str, Any]]:
    block = {"type": "content_block_start", "index": index, "content_block": {"type": "text"}}
    pieces = [a_text(index, f"t{i} ") for i in range(count)]
    return [block, *pieces, {"type": "content_block_stop", "index": index}]


def a_tool_block(index: int, count: int) -> list[dict[str, Any]]:
    parts = ['{"xs": [', *[f"{i}, " for i in range(count)], "0]}"]
    pieces = [a_args(index, part) for part in parts]
    return [a_tool(index), *pieces, {"type": "content_block_stop", "index": index}]


def openai_call_starts(count: int) -> list[str]:
    """One chunk per call naming it (id, name, empty arguments), as OpenAI sends them."""
    return [
        openai_chunk(
            {
                "tool_calls": [
                    {
                        "index": i,
                        "id": f"call_{i}",
                        "type": "function",
                        "function": {"name": f"f{i}", "arguments": ""},
                    }
                ]
            }
        )
        for i in range(count)
    ]


def openai_fragment(index: int, fragment: str) -> str:
    return openai_chunk({"tool_calls": [{"index": index, "function": {"arguments": fragment}}]})


def openai_parallel(calls: int, items: int) -> list[str]:
    """Parallel calls whose arguments come turn about, a fragment each: ``{"xs": [0, 1, ...]}``."""
    parts = ['{"xs": [', *[f"{i}, " for i in range(items)], "0]}"]
    turns = [openai_fragment(call, part) for part in parts for call in range(calls)]
    return [*openai_call_starts(calls), *turns]


OPENAI_TOOLS_END = [openai_chunk({}, "tool_calls"), "[DONE]"]


# -- binary frames ----------------------------------------------------------------------------


def converse(name: str, payload: dict[str, Any]) -> bytes:
    headers = {":event-type": name, ":content-type": "application/json", ":message-type": "event"}
    return encode_message(headers, json.dumps(payload).encode())


def converse_text(count: int) -> list[bytes]:
    start = converse("messageStart", {"role": "assistant"})
    deltas = [
        converse("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": f"w{i} "}})
        for i in range(count)
    ]
    return [start, *deltas]


CONVERSE_END = [
    converse("contentBlockStop", {"contentBlockIndex": 0}),
    converse("messageStop", {"stopReason": "end_turn"}),
]


# -- good streams -----------------------------------------------------------------------------


def test_every_fixture_reads_alike_batched_and_byte_by_byte() -> None:
    fixtures = stream_fixtures()
    assert fixtures
    for fixture in fixtures:
        assert_same(fixture.path.read_bytes(), fixture.provider)


@pytest.mark.parametrize(
    "folder",
    [REAL_STREAMS, REAL_STREAMS_2, REAL_STREAMS_3, REAL_STREAMS_4],
    ids=["real-streams", "real-2", "real-3", "real-4"],
)
def test_every_recording_reads_alike_batched_and_by_lines(folder: Any) -> None:
    if not folder.is_dir():
        pytest.skip(f"the shared recordings {folder.name} are not beside this clone")
    paths = [p for p in sorted(folder.rglob("*")) if p.name.endswith(STREAM_SUFFIXES)]
    assert paths
    for path in paths:
        body = path.read_bytes()
        fast = batched(body, None)
        slow = run_chunks(body.splitlines(keepends=True) or [body], None)
        assert fast.events == slow.events, path
        assert type(fast.error) is type(slow.error), path


@pytest.mark.parametrize(
    ("provider", "body"),
    [
        ("openai", sse(*openai_text(500), *OPENAI_END)),
        ("anthropic", anthropic(a_start(), *a_text_block(0, 300), *a_end())),
        ("bedrock", b"".join(converse_text(300))),
    ],
    ids=["sse", "sse-events", "eventstream"],
)
def test_the_batched_path_is_taken(
    provider: str, body: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert batched_frames(body, provider, monkeypatch) >= 290  # of the 300 or more deltas


def test_a_long_stream_is_read_in_batches_with_the_same_events() -> None:
    body = sse(*openai_text(500), *OPENAI_END)
    outcome = assert_same(body, "openai")
    assert outcome.error is None
    assert outcome.response is not None
    assert outcome.response.text() == "".join(f"w{i} " for i in range(500))


def test_tool_arguments_in_runs_keep_their_live_views() -> None:
    body = anthropic(a_start(), *a_text_block(0, 50), *a_tool_block(1, 300), *a_end("tool_use"))
    outcome = assert_same(body, "anthropic")
    deltas = [e for e in outcome.events if isinstance(e, ToolInputDelta)]
    assert len(deltas) == 302
    # Each event still describes the arguments as they stood after its own fragment.
    assert deltas[0].partial.value == {"xs": []}
    assert deltas[5].partial.value == {"xs": [0, 1, 2, 3, 4]}
    assert deltas[-1].partial.value == {"xs": [*range(300), 0]}
    assert deltas[-1].is_complete()


def test_parallel_calls_sent_turn_about_read_in_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    taken: list[int] = []
    read = Assembler.tool_inputs_mixed

    def counting(self: Assembler, keys: list[Hashable], fragments: list[str]) -> bool:
        took = read(self, keys, fragments)
        taken.append(len(fragments) if took else 0)
        return took

    monkeypatch.setattr(Assembler, "tool_inputs_mixed", counting)
    outcome = assert_same(sse(*openai_parallel(3, 200), *OPENAI_TOOLS_END), "openai")
    assert sum(taken) >= 590  # of the 606 fragments: all but the batch edges
    assert outcome.error is None
    assert outcome.response is not None
    want = {"xs": [*range(200), 0]}
    assert [use.input.value for use in outcome.response.tool_uses()] == [want, want, want]
    deltas = [e for e in outcome.events if isinstance(e, ToolInputDelta)]
    assert [e.index for e in deltas[:6]] == [0, 1, 2, 0, 1, 2]
    # Each call's live view counts its own fragments only.
    assert deltas[2].partial.value == {"xs": []}
    assert deltas[3].partial.value == {"xs": [0]}
    assert deltas[6].partial.value == {"xs": [0, 1]}


@pytest.mark.parametrize(
    "change",
    ["empty fragments", "text between", "unknown call", "past the cap", "one call"],
)
def test_parallel_calls_turn_about_that_go_irregular(change: str) -> None:
    payloads = openai_parallel(3, 60)
    options: dict[str, Any] = {}
    if change == "empty fragments":
        payloads[40:40] = [openai_fragment(1, ""), openai_fragment(0, ""), openai_fragment(2, "")]
    elif change == "text between":
        payloads[50:50] = [openai_chunk({"content": "thinking aloud"})]
    elif change == "unknown call":
        payloads[45] = openai_fragment(7, "1, ")
    elif change == "past the cap":
        options["max_tool_input_size"] = 150  # call 1 passes it first, mid-run
    else:
        payloads = [*payloads[:3], *(p for p in payloads[3:] if '"index": 2' in p)]
    outcome = assert_same(sse(*payloads, *OPENAI_TOOLS_END), "openai", **options)
    if change == "past the cap":
        assert outcome.error is not None
        assert "max_tool_input_size" in str(outcome.error)
        return
    assert outcome.error is None
    assert outcome.response is not None
    kinds = [type(block).__name__ for block in outcome.response.content]
    if change == "unknown call":  # a fragment for a call never named: a call of its own
        assert kinds == ["ToolUse", "ToolUse", "ToolUse", "InvalidToolUse"]
    elif change == "text between":
        assert kinds == ["ToolUse", "ToolUse", "ToolUse", "Text"]
    else:
        assert kinds == ["ToolUse"] * 3


def test_keep_alives_and_done_inside_a_run_of_events() -> None:
    payloads = openai_text(40)
    payloads[20:20] = ["ping", ""]
    assert_same(sse(*payloads, *OPENAI_END), "openai")


def test_event_names_empty_or_not_ascii_are_read_as_line_by_line() -> None:
    events = [a_start(), *a_text_block(0, 30), *a_end()]
    body = anthropic(*events).replace(b"event: content_block_delta\n", b"event: \xc3\xa9\n", 3)
    assert_same(body, "anthropic")
    body = anthropic(*events).replace(b"event: content_block_delta\n", b"event: \n")
    assert_same(body, "anthropic")


def test_data_lines_without_a_space() -> None:
    body = sse(*openai_text(30), *OPENAI_END).replace(b"data: ", b"data:")
    outcome = assert_same(body, "openai")
    assert outcome.error is None


# -- streams that go bad in the middle of a batch ---------------------------------------------


def test_a_payload_that_is_not_json() -> None:
    payloads = openai_text(60)
    payloads[33] = '{"id": "c1", "choices": [{"index": 0, "delta": {"content": "x"'
    outcome = assert_same(sse(*payloads, *OPENAI_END), "openai")
    assert outcome.error is not None
    assert outcome.response is not None
    assert outcome.response.text() == "".join(f"w{i} " for i in range(33))


def test_payloads_that_would_join_into_valid_json_are_still_refused() -> None:
    # Neither payload is JSON alone; written one after the other, with a comma between
    # them, they would be one object: each is read by itself.
    payloads = openai_text(30)
    payloads[10:12] = ['{"a": [{}', "{}]}"]
    outcome = assert_same(sse(*payloads, *OPENAI_END), "openai")
    assert outcome.error is not None


def test_invalid_utf8_inside_a_batch() -> None:
    body = sse(*openai_text(40), *OPENAI_END)
    at = body.index(b"w25 ")
    outcome = assert_same(body[:at] + b"\xff" + body[at + 1 :], "openai")
    assert outcome.error is not None
    assert "UTF-8" in str(outcome.error)


def test_a_delta_for_a_block_of_another_kind_mid_run() -> None:
    events = [a_start(), *a_tool_block(0, 40)]
    events[20] = a_text(0, "not arguments")
    outcome = assert_same(anthropic(*events, *a_end()), "anthropic")
    assert outcome.error is not None


def test_arguments_past_the_cap_mid_run() -> None:
    events = [a_start(), *a_tool_block(0, 200), *a_end("tool_use")]
    outcome = assert_same(anthropic(*events), "anthropic", max_tool_input_size=300)
    assert outcome.error is not None
    assert "max_tool_input_size" in str(outcome.error)


def test_an_error_event_after_a_run() -> None:
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "busy"}}
    events = [a_start(), *a_text_block(0, 40)[:-1], error]
    outcome = assert_same(anthropic(*events), "anthropic")
    assert outcome.error is not None


def test_ndjson_with_a_bad_line_mid_batch() -> None:
    lines = [
        json.dumps({"model": "m", "message": {"role": "assistant", "content": f"w{i} "}})
        for i in range(50)
    ]
    lines[30] = '{"model": "m", "message": '
    lines.append(
        json.dumps(
            {
                "model": "m",
                "message": {"role": "assistant", "content": ""},
                "done": True,
                "done_reason": "stop",
            }
        )
    )
    outcome = assert_same("\n".join(lines).encode() + b"\n", "ollama")
    assert outcome.error is not None


@pytest.mark.usefixtures("eventstream_crc")
def test_bedrock_reads_alike_batched() -> None:
    outcome = assert_same(b"".join([*converse_text(200), *CONVERSE_END]), "bedrock")
    assert outcome.error is None


@pytest.mark.usefixtures("eventstream_crc")
def test_bedrock_payload_not_utf8_mid_batch() -> None:
    messages = converse_text(60)
    headers = {":event-type": "contentBlockDelta", ":message-type": "event"}
    messages[30] = encode_message(headers, b'{"contentBlockIndex": 0, "delta": {"text": "\xff"}}')
    outcome = assert_same(b"".join([*messages, *CONVERSE_END]), "bedrock")
    assert outcome.error is not None


@pytest.mark.usefixtures("eventstream_crc")
def test_bedrock_payload_not_utf8_inside_a_run_of_like_messages() -> None:
    messages = converse_text(60)
    payload = b'{"contentBlockIndex": 0, "delta": {"text": "\xff"}}'
    messages[30] = encode_message(
        {
            ":event-type": "contentBlockDelta",
            ":content-type": "application/json",
            ":message-type": "event",
        },
        payload,
    )
    outcome = assert_same(b"".join([*messages, *CONVERSE_END]), "bedrock")
    assert outcome.error is not None
    assert "utf-8" in str(outcome.error).lower()
    assert outcome.response is not None  # what came before it
    assert outcome.response.text() == "".join(f"w{i} " for i in range(29))


def _with_bad_prelude_crc(message: bytes) -> bytes:
    """The message with its prelude CRC wrong and its message CRC made to match that."""
    wrong = bytearray(message)
    wrong[9] ^= 4
    wrong[-4:] = zlib.crc32(wrong[:-4]).to_bytes(4, "big")
    return bytes(wrong)


@pytest.mark.usefixtures("eventstream_crc")  # set once, for every example
@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    flips=st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 7)), max_size=3),
    bad_prelude=st.none() | st.integers(0, 119),
)
def test_bedrock_corrupted_inside_runs_reads_alike_batched(
    flips: list[tuple[int, int]], bad_prelude: int | None
) -> None:
    """Runs of messages of one length take their beginning's CRC once: a flipped bit
    anywhere, or a prelude CRC that the message CRC was made to match, gives the same
    frames and the same error as the message-by-message path."""
    messages = converse_text(120)  # lengths that repeat, and change with the number
    if bad_prelude is not None:
        messages[bad_prelude] = _with_bad_prelude_crc(messages[bad_prelude])
    body = bytearray(b"".join([*messages, *CONVERSE_END]))
    for at, bit in flips:
        body[at % len(body)] ^= 1 << bit
    assert_same(bytes(body), "bedrock")


@pytest.mark.usefixtures("eventstream_crc")
def test_bedrock_exception_after_a_run() -> None:
    headers = {":exception-type": "throttlingException", ":message-type": "exception"}
    failure = encode_message(headers, b'{"message": "slow down"}')
    outcome = assert_same(b"".join([*converse_text(60), failure]), "bedrock")
    assert outcome.error is not None


# -- Gemini: usage in every chunk -------------------------------------------------------------


def gemini_chunk(text: str, usage: dict[str, Any] | None) -> str:
    candidate = {"content": {"parts": [{"text": text}], "role": "model"}, "index": 0}
    body: dict[str, Any] = {"candidates": [candidate], "modelVersion": "g", "responseId": "r"}
    if usage is not None:
        body["usageMetadata"] = usage
    return json.dumps(body)


GEMINI_END = json.dumps(
    {"candidates": [{"content": {"parts": [{"text": ""}]}, "finishReason": "STOP", "index": 0}]}
)


@pytest.mark.parametrize(
    "usages",
    [
        [{"promptTokenCount": 5, "candidatesTokenCount": i} for i in range(40)],
        # A count only some chunks carry: it must not be lost with them.
        [
            {"promptTokenCount": 5, "candidatesTokenCount": i}
            | ({"thoughtsTokenCount": 7} if i == 12 else {})
            for i in range(40)
        ],
        # The last chunk's count is not a number: an earlier one stands.
        [{"promptTokenCount": 5, "candidatesTokenCount": i if i < 39 else None} for i in range(40)],
        [{"promptTokenCount": 5, "candidatesTokenCount": str(i)} for i in range(40)],
        [None if i % 3 else {"promptTokenCount": i} for i in range(40)],
    ],
    ids=["counts", "a-field-in-one-chunk", "last-not-a-number", "strings", "some-without"],
)
def test_gemini_usage_is_the_same_batched(usages: list[dict[str, Any] | None]) -> None:
    payloads = [gemini_chunk(f"w{i} ", usage) for i, usage in enumerate(usages)]
    body = sse(*payloads, GEMINI_END).replace(b"\n", b"\r\n")
    outcome = assert_same(body, "gemini")
    assert outcome.error is None


def test_fixtures_folder_is_here() -> None:
    assert FIXTURES.is_dir()


# -- whole-object arguments stay exact with either JSON backend ------------------------------

BIG = 2**70 + 1  # past 64 bits: orjson alone would read it as a float


def ollama_line(message: dict[str, Any], **top: Any) -> str:
    return json.dumps({"model": "m", "message": {"role": "assistant", **message}, **top})


def test_ollama_big_integers_in_a_batch_are_exact() -> None:
    lines = [ollama_line({"content": f"w{i} "}) for i in range(40)]
    call = {"function": {"name": "f", "arguments": {"n": BIG, "xs": [BIG, 1]}}}
    lines.insert(20, ollama_line({"content": "", "tool_calls": [call]}))
    lines.append(ollama_line({"content": ""}, done=True, done_reason="stop"))
    outcome = assert_same("\n".join(lines).encode() + b"\n", "ollama")
    assert outcome.response is not None
    (use,) = outcome.response.tool_uses()
    assert use.input.value == {"n": BIG, "xs": [BIG, 1]}
    assert type(use.input.value["n"]) is int


def test_gemini_big_integers_in_a_batch_are_exact_even_behind_escapes() -> None:
    chunks = [gemini_chunk(f"w{i} ", {"promptTokenCount": 5}) for i in range(40)]
    call = {"functionCall": {"name": "f", "args": {"n": BIG}}}
    candidate = {"content": {"parts": [call], "role": "model"}, "index": 0}
    chunks.insert(20, json.dumps({"candidates": [candidate]}))
    # The same call again, its key spelled with an escape.
    chunks.insert(
        30, json.dumps({"candidates": [candidate]}).replace("functionCall", "function\\u0043all")
    )
    body = sse(*chunks, GEMINI_END).replace(b"\n", b"\r\n")
    outcome = assert_same(body, "gemini")
    assert outcome.response is not None
    uses = outcome.response.tool_uses()
    assert [use.input.value for use in uses] == [{"n": BIG}, {"n": BIG}]


def test_a_batch_of_binary_messages_holds_a_bounded_number_of_bytes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Fed at once, 2 MB of messages are read in batches of at most about 64 KiB each, so
    # what is parsed and not yet handed over stays small whatever one feed holds.
    text = "x" * 2000
    deltas = [
        converse("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": text}})
        for _ in range(1000)
    ]
    body = b"".join([*converse_text(0), *deltas, *CONVERSE_END])
    sizes: list[int] = []
    read = StreamNormalizer._on_batch

    def measuring(self: StreamNormalizer, batch: Batch) -> None:
        sizes.append(sum(map(len, batch.payloads)))
        read(self, batch)

    monkeypatch.setattr(StreamNormalizer, "_on_batch", measuring)
    outcome = batched(body, "bedrock")
    assert outcome.error is None
    assert outcome.response is not None
    assert outcome.response.text() == text * 1000
    assert len(sizes) > 20
    assert max(sizes) <= 64 * 1024 + 4096


def test_a_batch_s_frames_are_its_own_after_later_feeds() -> None:
    # A batch gives its messages one by one from the buffer it was cut from, which later
    # feeds (one ending inside a message, the next completing it) leave as it was.
    messages = [
        converse("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": f"w{n}"}})
        for n in range(60)
    ]
    body = b"".join(messages)
    whole = EventStreamDecoder().feed(body)
    cuts = [0, len(body) // 3 + 5, 2 * len(body) // 3 - 7, len(body)]
    decoder = EventStreamDecoder()
    batches = [
        item for start, end in pairwise(cuts) for item in decoder.feed_batched(body[start:end])
    ]
    assert all(isinstance(item, Batch) for item in batches)
    frames: list[Frame] = []
    for batch in batches:
        assert isinstance(batch, Batch)
        got, error = batch.frames()
        assert error is None
        assert [frame.data.encode() for frame in got] == list(map(bytes, batch.payloads))
        frames += got
    assert [(f.event, f.data, f.offset) for f in frames] == [
        (f.event, f.data, f.offset) for f in whole
    ]


# -- long frames: each a batch of its own bytes -------------------------------------------

# Over 8 KiB of arguments sent whole: non-ASCII text, floats that grow when written back,
# numbers orjson keeps exact and (``big``) one it does not.
LONG = {
    "path": "src/a.py",
    "content": "print('é😀')  # 1e15\n" * 600,
    "n": [1, 2.5, -3e-7, 1e15, 9e15, 0.0001, True, None],
}
LONG_BIG = {**LONG, "id": BIG}


def ollama_calls(*arguments: bytes, text: int = 12) -> bytes:
    """An Ollama stream: text lines, one line per call (its arguments as given), the end."""
    lines = [ollama_line({"content": f"w{i} "}).encode() for i in range(text)]
    for raw in arguments:
        call = b'{"function":{"name":"f","arguments":%s}}' % raw
        lines.append(
            b'{"model":"m","message":{"role":"assistant","content":"","tool_calls":[%s]}}' % call
        )
    lines.append(ollama_line({"content": ""}, done=True, done_reason="stop").encode())
    return b"\n".join(lines) + b"\n"


def gemini_calls(*arguments: bytes, crlf: bool = True) -> bytes:
    chunks = [gemini_chunk(f"w{i} ", None).encode() for i in range(12)]
    for raw in arguments:
        call = b'{"functionCall":{"name":"f","args":%s}}' % raw
        chunks.append(
            b'{"candidates":[{"content":{"parts":[%s],"role":"model"},"index":0}]}' % call
        )
    chunks.append(GEMINI_END.encode())
    body = b"".join(b"data: " + c + b"\n\n" for c in chunks)
    return body.replace(b"\n", b"\r\n") if crlf else body


def in_pieces(body: bytes, size: int) -> list[bytes]:
    return [body[i : i + size] for i in range(0, len(body), size)]


LONG_STREAMS = {
    "ollama": lambda *a: ollama_calls(*a),
    "gemini": lambda *a: gemini_calls(*a),
    "gemini, LF": lambda *a: gemini_calls(*a, crlf=False),
}


def provider_of(name: str) -> str:
    return name.split(",", 1)[0]


@pytest.mark.parametrize("name", list(LONG_STREAMS))
def test_a_long_line_a_feed_completes_is_a_batch_of_its_own_bytes(name: str) -> None:
    body = LONG_STREAMS[name](json.dumps(LONG).encode())
    seen: list[list[bytes]] = []
    read = StreamNormalizer._on_batch

    def keeping(self: StreamNormalizer, batch: Batch) -> None:
        seen.append([bytes(p) for p in batch.payloads])
        read(self, batch)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(StreamNormalizer, "_on_batch", keeping)
        outcome = run_chunks(in_pieces(body, 4096), provider_of(name))
    assert outcome.error is None
    [alone] = [payloads for payloads in seen if len(payloads) == 1]
    assert len(alone[0]) > 8192
    assert json.dumps(LONG).encode() in alone[0]
    assert not alone[0].startswith(b"data:")


@pytest.mark.parametrize("size", [4096, 16384])
@pytest.mark.parametrize("arguments", [LONG, LONG_BIG], ids=["exact", "big integer"])
@pytest.mark.parametrize("name", list(LONG_STREAMS))
def test_long_whole_calls_read_alike_in_any_pieces(
    name: str, arguments: dict[str, Any], size: int
) -> None:
    body = LONG_STREAMS[name](json.dumps(arguments).encode(), json.dumps({"k": 1}).encode())
    provider = provider_of(name)
    pieces = run_chunks(in_pieces(body, size), provider)
    slow = one_by_one(body, provider)
    assert pieces.events == slow.events
    assert pieces.error is None
    assert slow.error is None
    assert pieces.response is not None
    assert slow.response is not None
    assert response_to_dict(pieces.response) == response_to_dict(slow.response)
    first, second = pieces.response.tool_uses()
    assert first.input.value == arguments
    assert type(first.input.value["n"][3]) is float
    assert second.input.value == {"k": 1}


def _counted(verb: str, real: Callable[[Any], Any], calls: list[str]) -> Callable[[Any], Any]:
    def counting(value: Any) -> Any:
        calls.append(verb)
        return real(value)

    return counting


@pytest.mark.parametrize("name", list(LONG_STREAMS))
def test_long_whole_arguments_read_by_nobody_are_never_written_nor_measured(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from laminate._core import jsonlib

    calls: list[str] = []
    for verb in ("dumps_parsed", "written_size_bound"):
        monkeypatch.setattr(jsonlib, verb, _counted(verb, getattr(jsonlib, verb), calls))
    body = LONG_STREAMS[name](json.dumps(LONG).encode())
    outcome = run_chunks(in_pieces(body, 16384), provider_of(name))
    assert outcome.response is not None
    assert [use.input.value for use in outcome.response.tool_uses()] == [LONG]
    assert calls == []


@pytest.mark.parametrize("number", [b"NaN", b"-Infinity", b"1e400"])
@pytest.mark.parametrize("name", list(LONG_STREAMS))
def test_a_long_frame_holding_no_json_number_is_refused_and_its_bound_stays_with_it(
    name: str, number: bytes
) -> None:
    long = json.dumps(LONG).encode()
    # The refused number in the long frame; then in a short frame after a long one.
    for arguments in [(long[:-1] + b', "x": %s}' % number,), (long, b'{"x": %s}' % number)]:
        body = LONG_STREAMS[name](*arguments)
        outcome = run_chunks(in_pieces(body, 4096), provider_of(name))
        assert outcome.response is not None
        blocks = [b for b in outcome.response.content if not isinstance(b, laminate.Text)]
        assert isinstance(blocks[-1], laminate.InvalidToolUse)
        assert "is not JSON" in blocks[-1].reason
        assert outcome.events == one_by_one(body, provider_of(name)).events


@pytest.mark.parametrize("name", list(LONG_STREAMS))
def test_a_long_whole_argument_is_held_to_the_cap_by_its_text(name: str) -> None:
    arguments = json.dumps(LONG).encode()
    text = laminate._core.jsonlib.dumps_parsed(LONG)
    body = LONG_STREAMS[name](arguments)
    over = run_chunks(in_pieces(body, 4096), provider_of(name), max_tool_input_size=len(text) - 1)
    assert isinstance(over.error, laminate.MalformedStreamError)
    assert "max_tool_input_size" in str(over.error)
    fits = run_chunks(in_pieces(body, 4096), provider_of(name), max_tool_input_size=len(text))
    assert fits.error is None
    [delta] = [e for e in fits.events if isinstance(e, ToolInputDelta)]
    assert delta.fragment == text


LONG_TEXT = "a long delta, é😀 " * 1200  # past _LONG_LINE in every framing


@pytest.mark.parametrize(
    "provider",
    ["openai", "anthropic", "ollama", "gemini"],
)
def test_a_long_text_delta_alone_in_its_batch_reads_as_line_by_line(provider: str) -> None:
    # A long line of an API whose calls never arrive whole, or a frame without a call, is
    # read as any batch: the same events in pieces as byte by byte.
    if provider == "openai":
        body = sse(
            *openai_text(6), openai_chunk({"content": LONG_TEXT}), *openai_text(6), *OPENAI_END
        )
    elif provider == "anthropic":
        body = anthropic(
            a_start(),
            *a_text_block(0, 6)[:-1],
            a_text(0, LONG_TEXT),
            *a_text_block(0, 6)[1:],
            *a_end(),
        )
    elif provider == "ollama":
        lines = [ollama_line({"content": f"w{i} "}) for i in range(6)]
        lines += [ollama_line({"content": LONG_TEXT})]
        lines += [ollama_line({"content": ""}, done=True, done_reason="stop")]
        body = "\n".join(lines).encode() + b"\n"
    else:
        chunks = [gemini_chunk(f"w{i} ", None) for i in range(6)]
        body = sse(*chunks, gemini_chunk(LONG_TEXT, None), GEMINI_END).replace(b"\n", b"\r\n")
    pieces = run_chunks(in_pieces(body, 4096), provider)
    slow = one_by_one(body, provider)
    assert pieces.events == slow.events
    assert pieces.error is None
    assert pieces.response is not None
    assert LONG_TEXT in pieces.response.text()
