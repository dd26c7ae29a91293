"""Bedrock: the ConverseStream handler, Anthropic models through
InvokeModelWithResponseStream, complete ``converse()`` bodies, the tool-loop shapes and
the mock server's Bedrock routes.

The real recordings (../shared/real-streams*/bedrock-converse) are checked against
expectations written by reading them; the ``.ndjson`` renderings (boto3's event dicts,
one a line) go through ``feed_payload``, the ``.eventstream`` bodies through ``feed``, and
where a recording exists in both forms both give the same events. botocore's own event
stream reader turns every binary body into the dicts boto3 hands users, which must give
the same events as the bytes.
"""

from __future__ import annotations

import base64
import contextlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

import laminate
from laminate import (
    BlockStart,
    Event,
    FlexValue,
    InvalidToolUse,
    LaminateError,
    MalformedStreamError,
    NormalizedResponse,
    ProviderError,
    Reasoning,
    StopReason,
    StreamNormalizer,
    Text,
    ToolRegistry,
    ToolResult,
    ToolUse,
    Unknown,
)
from laminate._apis.bedrock.read import BedrockHandler
from laminate._cli.server import split_frames
from laminate._core.assembler import Assembler
from laminate._framing.eventstream import EventStreamDecoder, encode_message
from laminate.testing import mock_server

from .support import FIXTURES, REAL_STREAMS, REAL_STREAMS_2, Outcome, run_chunks

BEDROCK = FIXTURES / "bedrock"
ANTHROPIC_BEDROCK = FIXTURES / "anthropic-bedrock"


def handler() -> BedrockHandler:
    return BedrockHandler(Assembler("bedrock", max_tool_input_size=1 << 20))


def feed_frames(
    frames: list[tuple[str | None, dict[str, Any]]], provider: str | None = "bedrock"
) -> Outcome:
    """Each ``(event, payload)`` through ``feed_payload``, then ``close``."""
    normalizer = StreamNormalizer(provider)
    events: list[Event] = []
    try:
        for name, payload in frames:
            events.extend(normalizer.feed_payload(payload, event=name))
        events.extend(normalizer.close())
    except LaminateError as exc:
        return Outcome(events, exc)
    return Outcome(events, None)


def ndjson_frames(path: Path) -> list[tuple[str | None, dict[str, Any]]]:
    return [(None, json.loads(line)) for line in path.read_text("utf-8").splitlines() if line]


def done(outcome: Outcome) -> NormalizedResponse:
    assert outcome.error is None, repr(outcome.error)
    response = outcome.response
    assert response is not None
    return response


# -- the handler, directly --------------------------------------------------------------

_TOOL_FRAMES: list[tuple[str, dict[str, Any]]] = [
    ("messageStart", {"p": "abc", "role": "assistant"}),
    ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "Hi"}, "p": "ab"}),
    ("contentBlockStop", {"contentBlockIndex": 0, "p": "abcdef"}),
    (
        "contentBlockStart",
        {"contentBlockIndex": 1, "start": {"toolUse": {"toolUseId": "t1", "name": "f"}}},
    ),
    ("contentBlockDelta", {"contentBlockIndex": 1, "delta": {"toolUse": {"input": '{"a":'}}}),
    ("contentBlockDelta", {"contentBlockIndex": 1, "delta": {"toolUse": {"input": " 1}"}}}),
    ("contentBlockStop", {"contentBlockIndex": 1}),
    ("messageStop", {"stopReason": "tool_use", "p": "a"}),
    ("metadata", {"usage": {"inputTokens": 3, "outputTokens": 4}, "metrics": {"latencyMs": 9}}),
]


def test_named_frames_and_boto3_dicts_give_the_same_events() -> None:
    named, wrapped = handler(), handler()
    for name, payload in _TOOL_FRAMES:
        named.on_frame(name, payload)
        wrapped.on_frame(None, {name: payload})
    assert named.assembler.events == wrapped.assembler.events
    response = named.assembler.response
    assert response is not None
    assert response.content == [Text("Hi"), ToolUse("t1", "f", laminate.FlexValue({"a": 1}))]
    assert response.stop_reason == StopReason.TOOL_USE
    assert (response.usage.input_tokens, response.usage.output_tokens) == (3, 4)
    assert response.usage.raw == {"inputTokens": 3, "outputTokens": 4}


def test_message_stop_finishes_and_metadata_completes() -> None:
    h = handler()
    for name, payload in _TOOL_FRAMES[:-1]:
        h.on_frame(name, payload)
    assert h.assembler.finished
    assert not h.assembler.done  # usage is still to come
    h.on_frame(*_TOOL_FRAMES[-1])
    assert h.assembler.done


def test_metadata_before_message_stop_completes_at_the_stop() -> None:
    h = handler()
    h.on_frame("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "x"}})
    h.on_frame("metadata", {"usage": {"inputTokens": 1, "outputTokens": 2}})
    assert not h.assembler.done
    h.on_frame("messageStop", {"stopReason": "end_turn"})
    assert h.assembler.response is not None
    assert h.assembler.response.usage.output_tokens == 2


def test_unknown_events_and_deltas_are_ignored() -> None:
    h = handler()
    h.on_frame("somethingNew", {"x": 1})
    h.on_frame(None, {"somethingNew": {"x": 1}})
    h.on_frame("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"image": {"x": 1}}})
    assert h.assembler.events == []


def test_a_citation_follows_the_text_block_it_annotates() -> None:
    h = handler()
    citation = {"title": "doc", "location": {"documentChar": {"start": 0, "end": 4}}}
    h.on_frame("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"citation": citation}})
    h.on_frame("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "Four"}})
    starts = [e for e in h.assembler.events if isinstance(e, BlockStart)]
    assert [type(e.block).__name__ for e in starts] == ["Text", "Unknown"]
    assert starts[1].block == Unknown("citation", FlexValue(citation))
    with pytest.raises(MalformedStreamError):
        h.on_frame("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"citation": "doc"}})


def test_a_block_of_citations_alone_gives_no_empty_text() -> None:
    # Nova's grounding: text, then a block holding only the citations of that text.
    h = handler()
    web = {"location": {"web": {"domain": "ruby-lang.org", "url": "https://ruby-lang.org"}}}
    h.on_frame("messageStart", {"role": "assistant"})
    h.on_frame("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "Ruby 4.0.6"}})
    h.on_frame("contentBlockStop", {"contentBlockIndex": 0})
    for _ in range(2):
        h.on_frame("contentBlockDelta", {"contentBlockIndex": 1, "delta": {"citation": web}})
    h.on_frame("contentBlockStop", {"contentBlockIndex": 1})
    h.on_frame("contentBlockDelta", {"contentBlockIndex": 2, "delta": {"text": "."}})
    h.on_frame("contentBlockStop", {"contentBlockIndex": 2})
    h.on_frame("messageStop", {"stopReason": "end_turn"})
    h.on_frame("metadata", {"usage": {"inputTokens": 1, "outputTokens": 2}})
    response = h.assembler.response
    assert response is not None
    assert response.content == [
        Text("Ruby 4.0.6"),
        Unknown("citation", FlexValue(web)),
        Unknown("citation", FlexValue(web)),
        Text("."),
    ]


@pytest.mark.parametrize(
    ("name", "retryable"),
    [
        ("throttlingException", True),
        ("serviceUnavailableException", True),
        ("modelStreamErrorException", True),
        ("internalServerException", True),
        ("validationException", False),
    ],
)
def test_boto3_exception_dicts_are_provider_errors(name: str, retryable: bool) -> None:
    h = handler()
    with pytest.raises(ProviderError) as caught:
        h.on_frame(None, {name: {"message": "slow down"}})
    assert caught.value.error_type == name
    assert caught.value.retryable is retryable
    assert caught.value.message == "slow down"


def test_exception_through_feed_payload_keeps_the_partial() -> None:
    frames: list[tuple[str | None, dict[str, Any]]] = [
        (None, {"messageStart": {"role": "assistant"}}),
        (None, {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"text": "half"}}}),
        (None, {"throttlingException": {"message": "Too many requests"}}),
    ]
    outcome = feed_frames(frames)
    assert isinstance(outcome.error, ProviderError)
    assert outcome.error.retryable
    assert outcome.error.partial is not None
    assert outcome.error.partial.text() == "half"


def test_redacted_content_as_bytes_or_base64_is_the_same_block() -> None:
    wire, boto = handler(), handler()
    data = b"\x00opaque\xff"
    wire.on_frame(
        "contentBlockDelta",
        {
            "contentBlockIndex": 0,
            "delta": {"reasoningContent": {"redactedContent": base64.b64encode(data).decode()}},
        },
    )
    boto.on_frame(
        None,
        {
            "contentBlockDelta": {
                "contentBlockIndex": 0,
                "delta": {"reasoningContent": {"redactedContent": data}},
            }
        },
    )
    for h in (wire, boto):
        h.on_frame("messageStop", {"stopReason": "end_turn"})
        h.assembler.complete()
    assert wire.assembler.response is not None
    assert boto.assembler.response is not None
    assert wire.assembler.response.content == boto.assembler.response.content
    block = wire.assembler.response.content[0]
    assert isinstance(block, Reasoning)
    assert block.redacted
    assert block.signature == base64.b64encode(data).decode()


def test_server_tool_blocks_are_unknown_and_keep_their_data() -> None:
    h = handler()
    start = {"toolUse": {"toolUseId": "s1", "name": "interp", "type": "server_tool_use"}}
    h.on_frame("contentBlockStart", {"contentBlockIndex": 0, "start": start})
    h.on_frame("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"toolUse": {"input": "{}"}}})
    h.on_frame("contentBlockStop", {"contentBlockIndex": 0})
    result = {"toolResult": {"toolUseId": "s1", "status": "success"}}
    h.on_frame("contentBlockStart", {"contentBlockIndex": 1, "start": result})
    part = [{"json": {"stdOut": "42"}}]
    h.on_frame("contentBlockDelta", {"contentBlockIndex": 1, "delta": {"toolResult": part}})
    h.on_frame("contentBlockStop", {"contentBlockIndex": 1})
    h.on_frame("messageStop", {"stopReason": "end_turn"})
    h.assembler.complete()
    response = h.assembler.response
    assert response is not None
    call, output = response.content
    assert isinstance(call, Unknown)
    assert call.block_type == "server_tool_use"
    assert call.data.value == {**start["toolUse"], "input": {}}
    assert isinstance(output, Unknown)
    assert output.block_type == "toolResult"
    assert output.data.value == {**result["toolResult"], "content": part}
    assert response.tool_uses() == []


@pytest.mark.parametrize(
    "payload",
    [
        {"contentBlockIndex": 0},
        {"contentBlockIndex": "zero", "delta": {"text": "x"}},
        {"contentBlockIndex": 0, "delta": ["x"]},
    ],
)
def test_bad_deltas_are_malformed(payload: dict[str, Any]) -> None:
    with pytest.raises(MalformedStreamError):
        handler().on_frame("contentBlockDelta", payload)


def test_tool_input_for_a_block_never_started_is_malformed() -> None:
    delta = {"contentBlockIndex": 3, "delta": {"toolUse": {"input": "{}"}}}
    with pytest.raises(MalformedStreamError):
        handler().on_frame("contentBlockDelta", delta)


@pytest.mark.parametrize(
    ("raw", "kind"),
    [
        ("end_turn", "end_turn"),
        ("tool_use", "tool_use"),
        ("max_tokens", "max_tokens"),
        ("stop_sequence", "stop_sequence"),
        ("guardrail_intervened", "content_filter"),
        ("content_filtered", "content_filter"),
        ("model_context_window_exceeded", "context_window_exceeded"),
        ("something_else", None),
    ],
)
def test_stop_reasons(raw: str, kind: str | None) -> None:
    h = handler()
    h.on_frame("messageStop", {"stopReason": raw})
    h.assembler.complete()
    assert h.assembler.response is not None
    stop = h.assembler.response.stop_reason
    assert (stop.kind, stop.raw) == (kind, raw)


# -- fixtures through both paths ----------------------------------------------------------


class _Raw:
    """What botocore's ``EventStream`` reads: an object with ``stream()``."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    def stream(self) -> Iterator[bytes]:
        yield self.data

    def close(self) -> None:
        pass


def boto3_events(data: bytes, operation: str = "ConverseStream") -> list[dict[str, Any]]:
    """The event dicts boto3 hands users for these bytes, read by botocore itself;
    stops at an exception (which boto3 raises instead of handing it over)."""
    session = pytest.importorskip("botocore.session")
    eventstream = pytest.importorskip("botocore.eventstream")
    exceptions = pytest.importorskip("botocore.exceptions")
    parsers = pytest.importorskip("botocore.parsers")

    model = session.get_session().get_service_model("bedrock-runtime")
    shape = model.operation_model(operation).output_shape.members[
        "stream" if operation == "ConverseStream" else "body"
    ]
    parser = parsers.EventStreamJSONParser()
    stream = eventstream.EventStream(_Raw(data), shape, parser, operation)
    found: list[dict[str, Any]] = []
    with contextlib.suppress(exceptions.EventStreamError):
        found.extend(stream)
    return found


def _binary_fixtures(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.eventstream"))


@pytest.mark.parametrize("path", _binary_fixtures(BEDROCK), ids=lambda p: p.name)
def test_fixture_as_boto3_events(path: Path) -> None:
    data = path.read_bytes()
    from_bytes = run_chunks([data])
    from_boto3 = feed_frames([(None, e) for e in boto3_events(data)])
    if from_bytes.error is None:
        assert from_boto3.events == from_bytes.events
    else:
        # boto3 raises the exception (or botocore's truncation error) itself; everything
        # before it is the same.
        assert from_boto3.events == from_bytes.events[: len(from_boto3.events)]


@pytest.mark.parametrize("path", _binary_fixtures(ANTHROPIC_BEDROCK), ids=lambda p: p.name)
def test_invoke_fixture_as_boto3_events(path: Path) -> None:
    data = path.read_bytes()
    from_bytes = run_chunks([data])
    events = boto3_events(data, "InvokeModelWithResponseStream")
    assert events
    assert isinstance(events[0]["chunk"]["bytes"], bytes)  # boto3 decodes the base64
    from_boto3 = feed_frames([(None, e) for e in events], provider="anthropic")
    detected = feed_frames([(None, e) for e in events], provider=None)
    assert detected.events == from_boto3.events
    if from_bytes.error is None:
        assert from_boto3.events == from_bytes.events
    else:
        assert from_boto3.events == from_bytes.events[: len(from_boto3.events)]


def test_invocation_metrics_are_kept_in_raw_usage() -> None:
    response = done(run_chunks([(ANTHROPIC_BEDROCK / "text.eventstream").read_bytes()]))
    assert response.provider == "anthropic"
    assert response.usage.raw["amazon-bedrock-invocationMetrics"] == {
        "inputTokenCount": 38,
        "outputTokenCount": 12,
        "invocationLatency": 811,
        "firstByteLatency": 302,
    }


def test_invoke_chunk_that_is_not_base64_json_is_malformed() -> None:
    normalizer = StreamNormalizer("anthropic")
    with pytest.raises(MalformedStreamError):
        normalizer.feed_payload({"bytes": "not base64!"}, event="chunk")


@pytest.mark.parametrize(
    ("url", "provider"),
    [
        ("https://bedrock-runtime.us-east-1.amazonaws.com/model/m/converse-stream", "bedrock"),
        ("https://bedrock-runtime.us-east-1.amazonaws.com/model/m/converse", "bedrock"),
        (
            "https://bedrock-runtime.us-east-1.amazonaws.com/model/m/invoke-with-response-stream",
            "anthropic",
        ),
    ],
)
def test_detection_from_the_url(url: str, provider: str) -> None:
    assert StreamNormalizer(url=url).provider == provider


_RUNTIME = "https://bedrock-runtime.us-east-1.amazonaws.com"


@pytest.mark.parametrize(
    ("url", "model"),
    [
        # botocore percent-encodes the id; the colon of a version suffix, an ARN's slash.
        (f"{_RUNTIME}/model/us.amazon.nova-pro-v1%3A0/converse-stream", "us.amazon.nova-pro-v1:0"),
        (
            f"{_RUNTIME}/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A123456789012%3A"
            "inference-profile%2Fus.meta.llama3-3-70b-instruct-v1%3A0/converse-stream",
            "arn:aws:bedrock:us-east-1:123456789012:inference-profile/"
            "us.meta.llama3-3-70b-instruct-v1:0",
        ),
        # An unencoded ARN: the operation is the last segment, the rest is the id.
        (
            "http://proxy.internal/bedrock/model/arn:aws:bedrock:eu-west-1:1:"
            "application-inference-profile/a1b2c3/converse-stream?trace=1",
            "arn:aws:bedrock:eu-west-1:1:application-inference-profile/a1b2c3",
        ),
        ("http://proxy.internal/converse-stream", ""),  # the path names no model
    ],
)
def test_the_model_comes_from_the_url(url: str, model: str) -> None:
    """ConverseStream names neither an id nor a model: the URL's model is the answer's."""
    normalizer = StreamNormalizer("bedrock", url=url)
    events = normalizer.feed((BEDROCK / "text.eventstream").read_bytes()) + normalizer.close()
    assert isinstance(events[0], laminate.ResponseStart)
    assert (events[0].id, events[0].model) == ("", model)
    assert normalizer.response is not None
    assert normalizer.response.model == model
    # Without a URL the events are the same but for the model (in the first and last).
    plain = run_chunks([(BEDROCK / "text.eventstream").read_bytes()]).events
    assert events[1:-1] == plain[1:-1]


def test_a_model_from_the_url_only_where_the_stream_names_none() -> None:
    url = f"{_RUNTIME}/model/us.anthropic.claude-sonnet-4-v1%3A0/invoke-with-response-stream"
    normalizer = StreamNormalizer(url=url)
    normalizer.feed((ANTHROPIC_BEDROCK / "text.eventstream").read_bytes())
    normalizer.close()
    assert normalizer.response is not None
    assert normalizer.response.model == "claude-sonnet-4-20250514"  # message_start's


def test_the_adapters_pass_the_url_of_the_response() -> None:
    pytest.importorskip("uvicorn")
    with mock_server(FIXTURES) as base:
        url = f"{base}/model/us.anthropic.claude-sonnet-4-v1:0/converse-stream"
        headers = {"X-Laminate-Fixture": "text"}
        with httpx.Client() as client, client.stream("POST", url, json={}, headers=headers) as r:
            response = laminate.collect_sync(r)
    assert response.model == "us.anthropic.claude-sonnet-4-v1:0"


def test_stream_and_body_agree_on_usage_and_stop() -> None:
    for name in ("text", "tool-empty-input", "parallel-tools", "reasoning"):
        streamed = done(run_chunks([(BEDROCK / f"{name}.eventstream").read_bytes()]))
        body = laminate.parse_bedrock_response((BEDROCK / f"{name}.body.json").read_bytes())
        assert body.provider == "bedrock"
        assert body.content == streamed.content
        assert body.stop_reason == streamed.stop_reason
        assert body.usage == streamed.usage


# -- real recordings ----------------------------------------------------------------------


@dataclass(frozen=True)
class T:
    """A text block: how it starts, how it ends."""

    start: str
    end: str = ""


@dataclass(frozen=True)
class R:
    """A reasoning block: its text's start, its signature's start, redacted or not."""

    start: str
    signature: str
    redacted: bool = False


@dataclass(frozen=True)
class C:
    """A finished tool call."""

    id: str
    name: str
    input: dict[str, Any]


@dataclass(frozen=True)
class U:
    """An Unknown block."""

    block_type: str


@dataclass(frozen=True)
class Want:
    blocks: list[T | R | C | U]
    stop: tuple[str | None, str]
    usage: tuple[int, int]
    provider: str = "bedrock"


# Written by reading each recording (their SOURCES.md describes where each comes from).
REAL_1: dict[str, Want] = {
    "code-interpreter-server-tool-nova-2": Want(
        [
            U("server_tool_use"),
            U("toolResult"),
            C("tooluse_ptgCcZ0uQu-UUMz0abqoWw", "final_result", {"result": 7006652.0}),
        ],
        ("tool_use", "tool_use"),
        (1002, 59),
    ),
    "gpt-oss-empty-text-delta": Want(
        # Block 0 only ever gets "": no block; the reasoning is the first one.
        [R('The user just says "Hi".', ""), T("Hello! How can I help", "you today?")],
        ("end_turn", "end_turn"),
        (70, 43),
    ),
    "reasoning-anthropic": Want(
        [R("Let me count the r", "Ep0CCkgICxAB"), T("There are **3** r's", "awbe**r****r**y")],
        ("end_turn", "end_turn"),
        (51, 94),
    ),
    "reasoning-claude-sonnet-4": Want(
        [R("The user has greeted me", "Eu0CCkgIBxAB"), T("Hello! It's nice", "help you today?")],
        ("end_turn", "end_turn"),
        (36, 73),
    ),
    "redacted-reasoning-claude-3-7": Want(
        [
            R("", "RXRrRUNrZ0lC", redacted=True),
            R("", "RXFBRENrZ0lC", redacted=True),
            T("I notice you've sent", "talk about today?"),
        ],
        ("end_turn", "end_turn"),
        (92, 253),
    ),
    "text-then-tool-then-json": Want(
        # No messageStart, and metadata before messageStop.
        [
            T("2 + 2 equals 4.", "the weather for you."),
            C("weather-tool-1", "weather", {"location": "San Francisco"}),
            C("weather-tool-2", "weather", {"location": "London"}),
        ],
        ("tool_use", "tool_use"),
        (500, 100),
    ),
    "tool-use-nova": Want(
        [
            T("<thinking> To find the temperature", "in Paris.</thinking>\n"),
            C("tooluse_lAG_zP8QRHmSYOwZzzaCqA", "get_temperature", {"city": "Paris"}),
        ],
        ("tool_use", "tool_use"),
        (471, 91),
    ),
}

REAL_2: dict[str, Want] = {
    "lcaws-sonnet-citations-delta": Want(
        # Citation deltas open blocks 1 and 3, each followed by its citation; the text
        # that comes after them fills the blocks.
        [
            T("Employees receive ", "Employees receive "),
            T("20 days annual leave.", "20 days annual leave."),
            U("citation"),
            T(" For further details, ", " For further details, "),
            T("consult with your manager.", "consult with your manager."),
            U("citation"),
        ],
        ("end_turn", "end_turn"),
        (887, 64),
    ),
    "lcaws-sonnet-reasoning-content-signature": Want(
        [R("I need to find the smallest n", "EqYGCmQIDxAB"), T("## Setting Up", "{n = 25}\n$$")],
        ("end_turn", "end_turn"),
        (46, 1293),
    ),
    "lcaws-sonnet-text-then-tooluse-implicit-text-start": Want(
        [
            T("I'll check the current weather", "San Francisco, CA for you."),
            C("tooluse_Zsi5nODkqYT50BEZ9GG8ud", "get_weather", {"location": "San Francisco, CA"}),
        ],
        ("tool_use", "tool_use"),
        (446, 76),
    ),
    "lcaws-sonnet-tooluse-only": Want(
        [C("tooluse_q8A6U9X7S4apz8TPXNx4Kq", "get_weather", {"location": "San Francisco, CA"})],
        ("tool_use", "tool_use"),
        (446, 55),
    ),
    "oi-INVOKE-with-response-stream-anthropic-chunks": Want(
        [
            T("Of course! I'd be happy", "that data for you right away."),
            C(
                "toolu_bdrk_01CquHF9otnnrgxxx54tVxau",
                "get_current_weather_info",
                {"city": "San Francisco"},
            ),
            C(
                "toolu_bdrk_017gKMzG8LV5r3snEuhgaSvt",
                "get_current_population_info",
                {"city": "San Francisco"},
            ),
        ],
        ("tool_use", "tool_use"),
        (702, 130),
        provider="anthropic",
    ),
    "oi-converse-stream-tooluse-only": Want(
        [C("tooluse_p0X002uYQ9y_0fFkBsyYRg", "top_song", {"sign": "WZPZ"})],
        ("tool_use", "tool_use"),
        (353, 38),
    ),
    "openllmetry-claude-converse-stream-text-then-tooluse": Want(
        [
            T("Okay, let me check the weather for Barcelona", "using the available tool:"),
            C("tooluse_yypYDr71TwCwByoyao4-Vg", "get_weather", {"location": "Barcelona"}),
        ],
        ("tool_use", "tool_use"),
        (236, 58),
    ),
    "openllmetry-guardrail-intervened-converse-stream": Want(
        [T("\nThe capital of {ADDRESS} is {ADDRESS}.", "is {ADDRESS}.")],
        ("content_filter", "guardrail_intervened"),
        (17, 16),
    ),
    "openllmetry-meta-llama-converse-stream": Want(
        [T("Why did the OpenTelemetry metric go to therapy?", "issues to work through.")],
        ("end_turn", "end_turn"),
        (52, 36),
    ),
    "openllmetry-nova-converse-stream": Want(
        [T("{ADDRESS} is the capital of Japan", "{Account Number}.")],
        ("content_filter", "guardrail_intervened"),
        (54, 18),
    ),
    "otel-converse-stream-text-then-2-parallel-tooluse": Want(
        [
            T("<thinking> The User has asked", "once for each city. </thinking>\n"),
            C("tooluse_IIpMFTgaRVGyI7x4sJfKzQ", "get_current_weather", {"location": "Seattle"}),
            C(
                "tooluse_KZPBYYUtS72Um_JDI8hTow",
                "get_current_weather",
                {"location": "San Francisco"},
            ),
        ],
        ("tool_use", "tool_use"),
        (415, 195),
    ),
}


def check_want(want: Want, response: NormalizedResponse) -> None:
    assert response.provider == want.provider
    assert (response.stop_reason.kind, response.stop_reason.raw) == want.stop
    assert (response.usage.input_tokens, response.usage.output_tokens) == want.usage
    assert len(response.content) == len(want.blocks), response.content
    for got, wanted in zip(response.content, want.blocks, strict=True):
        match wanted:
            case T(start, end):
                assert isinstance(got, Text)
                assert got.text.startswith(start)
                assert got.text.endswith(end)
            case R(start, signature, redacted):
                assert isinstance(got, Reasoning)
                assert got.text.startswith(start)
                assert (got.signature or "").startswith(signature)
                assert bool(got.signature) == bool(signature)
                assert got.redacted is redacted
            case C(id, name, value):
                assert isinstance(got, ToolUse)
                assert (got.id, got.name, got.input.value) == (id, name, value)
            case U(block_type):
                assert isinstance(got, Unknown)
                assert got.block_type == block_type


def _recordings(folder: Path, wants: dict[str, Want]) -> list[Any]:
    """One case per recording file of ``wants`` found in ``folder`` (none without it)."""
    return [
        pytest.param(folder, name, suffix, id=f"{name}{suffix}")
        for name in wants
        for suffix in (".eventstream", ".ndjson")
        if (folder / f"{name}{suffix}").is_file()
    ]


def _read_recording(path: Path) -> Outcome:
    if path.suffix == ".ndjson":
        return feed_frames(ndjson_frames(path), provider=None)
    return run_chunks([path.read_bytes()])


@pytest.mark.parametrize(
    ("folder", "name", "suffix"),
    _recordings(REAL_STREAMS / "bedrock-converse", REAL_1)
    + _recordings(REAL_STREAMS_2 / "bedrock-converse", REAL_2),
)
def test_real_recording(folder: Path, name: str, suffix: str) -> None:
    path = folder / f"{name}{suffix}"
    wants = REAL_1 if folder.parent == REAL_STREAMS else REAL_2
    check_want(wants[name], done(_read_recording(path)))


@pytest.mark.parametrize(
    "folder", [REAL_STREAMS / "bedrock-converse", REAL_STREAMS_2 / "bedrock-converse"]
)
def test_every_real_recording_has_an_expectation(folder: Path) -> None:
    if not folder.is_dir():
        pytest.skip(f"no {folder}")
    wants = REAL_1 if folder.parent == REAL_STREAMS else REAL_2
    names = {
        p.name.split(".")[0] for p in folder.iterdir() if p.suffix in (".eventstream", ".ndjson")
    }
    assert names == set(wants)


@pytest.mark.parametrize(
    ("folder", "name"),
    [
        (folder, name)
        for folder, wants in (
            (REAL_STREAMS / "bedrock-converse", REAL_1),
            (REAL_STREAMS_2 / "bedrock-converse", REAL_2),
        )
        for name in wants
        if (folder / f"{name}.eventstream").is_file()
    ],
)
def test_real_recording_binary_json_and_boto3_agree(folder: Path, name: str) -> None:
    binary = folder / f"{name}.eventstream"
    from_bytes = run_chunks([binary.read_bytes()])
    assert from_bytes.error is None
    by_byte = run_chunks([binary.read_bytes()[i : i + 1] for i in range(binary.stat().st_size)])
    assert by_byte.events == from_bytes.events
    rendering = folder / f"{name}.ndjson"
    if rendering.is_file():
        assert _read_recording(rendering).events == from_bytes.events
    operation = "InvokeModelWithResponseStream" if "INVOKE" in name else "ConverseStream"
    boto3 = feed_frames([(None, e) for e in boto3_events(binary.read_bytes(), operation)], None)
    assert boto3.events == from_bytes.events


@pytest.mark.parametrize(
    ("name", "stop", "usage", "kinds"),
    [
        ("lcaws-converse-thinking-complete", "end_turn", (1373, 1190), [Reasoning, Text]),
        ("lcaws-converse-tooluse-complete", "tool_use", (446, 55), [ToolUse]),
    ],
)
def test_real_complete_bodies(
    name: str, stop: str, usage: tuple[int, int], kinds: list[type]
) -> None:
    path = REAL_STREAMS_2 / "bedrock-converse" / f"{name}.json"
    if not path.is_file():
        pytest.skip(f"no {path}")
    response = laminate.normalize(path.read_bytes())
    assert response == laminate.parse_bedrock_response(path.read_bytes())
    assert response.provider == "bedrock"
    assert response.stop_reason == stop
    assert (response.usage.input_tokens, response.usage.output_tokens) == usage
    assert [type(b) for b in response.content] == kinds
    first = response.content[0]
    if isinstance(first, Reasoning):
        assert first.signature is not None
        assert first.signature.startswith("EpYFCmQIDxAB")
    else:
        assert first.as_tool_use() is not None


def test_real_error_body_is_a_provider_error() -> None:
    path = REAL_STREAMS_2 / "bedrock-converse" / "otel-converse-stream-400-invalid-model.json"
    if not path.is_file():
        pytest.skip(f"no {path}")
    with pytest.raises(ProviderError, match="model identifier is invalid"):
        laminate.parse_bedrock_response(path.read_bytes())


# -- complete bodies ----------------------------------------------------------------------


def test_boto3_converse_output_with_bytes_and_response_metadata() -> None:
    output = {
        "ResponseMetadata": {"RequestId": "r-1", "HTTPStatusCode": 200},
        "output": {
            "message": {
                "role": "assistant",
                "content": [
                    {"reasoningContent": {"redactedContent": b"\x01\x02"}},
                    {"citationsContent": {"content": [{"text": "Cited "}, {"text": "text."}]}},
                    {"image": {"format": "png", "source": {"bytes": "..."}}},
                    {"toolUse": {"toolUseId": "t", "name": "f", "input": {}}},
                ],
            }
        },
        "stopReason": "tool_use",
        "usage": {"inputTokens": 1, "outputTokens": 2, "cacheWriteInputTokens": 5},
        "metrics": {"latencyMs": 3},
    }
    response = laminate.normalize(output)
    assert response.provider == "bedrock"
    redacted, cited, image, call = response.content
    assert redacted == Reasoning("", base64.b64encode(b"\x01\x02").decode(), True)
    assert cited == Text("Cited text.")
    assert isinstance(image, Unknown)
    assert image.block_type == "image"
    assert call == ToolUse("t", "f", laminate.FlexValue({}))
    assert response.usage.cache_write_tokens == 5


def test_write_body_reads_back() -> None:
    from laminate._apis.bedrock.write_body import write_body

    for path in _binary_fixtures(BEDROCK):
        streamed = run_chunks([path.read_bytes()])
        if streamed.error is not None:
            continue
        response = done(streamed)
        again = laminate.parse_bedrock_response(json.dumps(write_body(response)))
        assert [b for b in response.content if not isinstance(b, InvalidToolUse)] == again.content
        assert again.usage.input_tokens == response.usage.input_tokens


# -- tool loop shapes ---------------------------------------------------------------------


def _registry() -> ToolRegistry:
    registry = ToolRegistry()

    @registry.tool
    def get_weather(city: str) -> str:
        """Weather for a city."""
        return f"sunny in {city}"

    return registry


def test_tools_are_tool_specs() -> None:
    (spec,) = _registry().tools("bedrock")
    assert spec["toolSpec"]["name"] == "get_weather"
    assert spec["toolSpec"]["description"] == "Weather for a city."
    schema = spec["toolSpec"]["inputSchema"]["json"]
    assert schema["type"] == "object"
    assert schema["properties"]["city"]["type"] == "string"


def test_assistant_message_echoes_signed_reasoning_only_to_bedrock() -> None:
    response = done(run_chunks([(BEDROCK / "reasoning.eventstream").read_bytes()]))
    message = laminate.assistant_message(response, "bedrock")
    assert message == {
        "role": "assistant",
        "content": [
            {
                "reasoningContent": {
                    "reasoningText": {
                        "text": "Seven times eight is fifty-six; add one.",
                        "signature": "RXhhbXBsZVNpZ25hdHVyZQ+/==",
                    }
                }
            },
            {"text": "7 \u00d7 8 + 1 = 57."},
        ],
    }
    other = laminate.parse_anthropic_response(
        {
            "id": "m",
            "type": "message",
            "model": "c",
            "content": [
                {"type": "thinking", "thinking": "hmm", "signature": "sig"},
                {"type": "tool_use", "id": "t", "name": "f", "input": {"a": 1}},
            ],
            "stop_reason": "tool_use",
            "usage": {},
        }
    )
    assert laminate.assistant_message(other, "bedrock") == {
        "role": "assistant",
        "content": [{"toolUse": {"toolUseId": "t", "name": "f", "input": {"a": 1}}}],
    }


def test_assistant_message_hands_redacted_data_back_as_bytes() -> None:
    response = done(run_chunks([(BEDROCK / "redacted-reasoning.eventstream").read_bytes()]))
    message = laminate.assistant_message(response, "bedrock")
    assert isinstance(message, dict)
    assert message["content"][0] == {
        "reasoningContent": {"redactedContent": b"RedactedThinkingData"}
    }


def test_tool_results_are_one_user_message() -> None:
    results = [
        ToolResult("t1", "get_weather", "sunny", ok=True),
        ToolResult("t2", "get_weather", "no such city", ok=False),
        ToolResult("t3", "get_weather", "", ok=True),
    ]
    assert laminate.tool_results(results, "bedrock") == [
        {
            "role": "user",
            "content": [
                {"toolResult": {"toolUseId": "t1", "content": [{"text": "sunny"}]}},
                {
                    "toolResult": {
                        "toolUseId": "t2",
                        "content": [{"text": "no such city"}],
                        "status": "error",
                    }
                },
                {"toolResult": {"toolUseId": "t3", "content": [{"text": "(no output)"}]}},
            ],
        }
    ]
    assert laminate.tool_results([], "bedrock") == []


def test_append_turn_for_bedrock() -> None:
    response = done(run_chunks([(BEDROCK / "parallel-tools.eventstream").read_bytes()]))
    results = _registry().run_sync(response)
    messages: list[Any] = [{"role": "user", "content": [{"text": "Oslo and Lima?"}]}]
    laminate.append_turn(messages, response, results, "bedrock")
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert [b["toolResult"]["toolUseId"] for b in messages[2]["content"]] == [
        "tooluse_V2VhdGhlck9zbG8x",
        "tooluse_V2VhdGhlckxpbWEy",
    ]


# -- the mock server ----------------------------------------------------------------------


def test_split_frames_cuts_binary_messages_by_length() -> None:
    data = (BEDROCK / "parallel-tools.eventstream").read_bytes()
    pieces = split_frames(data, "eventstream")
    assert b"".join(pieces) == data
    assert len(pieces) == len(EventStreamDecoder().feed(data))


def test_mock_server_answers_converse_stream_and_converse() -> None:
    pytest.importorskip("uvicorn")
    with mock_server(FIXTURES) as base:
        stream_url = f"{base}/model/us.anthropic.claude-sonnet-4-v1:0/converse-stream"
        request = {"messages": [{"role": "user", "content": [{"text": "hi"}]}]}
        headers = {"X-Laminate-Fixture": "parallel-tools"}
        with (
            httpx.Client() as client,
            client.stream("POST", stream_url, json=request, headers=headers) as answer,
        ):
            assert answer.headers["content-type"] == "application/vnd.amazon.eventstream"
            streamed = laminate.collect_sync(answer)
        assert streamed.provider == "bedrock"
        assert [call.id for call in streamed.tool_uses()] == [
            "tooluse_V2VhdGhlck9zbG8x",
            "tooluse_V2VhdGhlckxpbWEy",
        ]
        body_url = f"{base}/model/us.anthropic.claude-sonnet-4-v1:0/converse"
        answer_body = httpx.post(body_url, json=request, headers=headers)
        assert answer_body.status_code == 200
        complete = laminate.normalize(answer_body.content)
        assert complete.provider == "bedrock"
        assert complete.content == streamed.content
        headers = {"X-Laminate-Fixture": "throttled-mid-stream"}
        failed = httpx.post(body_url, json=request, headers=headers)
        assert failed.status_code == 500
        assert failed.json() == {"message": "Too many requests, please wait before trying again."}


def test_boto3_against_the_mock_server() -> None:
    """boto3 itself (signing, its event stream parser, its exceptions) against the mock
    server: what it hands users gives what the bytes give."""
    boto3 = pytest.importorskip("boto3")
    pytest.importorskip("uvicorn")
    messages = [{"role": "user", "content": [{"text": "Oslo and Lima?"}]}]
    with mock_server(FIXTURES) as base:
        client = boto3.client(
            "bedrock-runtime",
            endpoint_url=base,
            region_name="us-east-1",
            aws_access_key_id="test",
            aws_secret_access_key="test",
        )
        for name in ("parallel-tools", "reasoning", "redacted-reasoning", "text"):
            answer = client.converse_stream(modelId=name, messages=messages)
            events = list(laminate.normalize_stream_sync(answer))
            assert events == run_chunks([(BEDROCK / f"{name}.eventstream").read_bytes()]).events
            output = client.converse(modelId=name, messages=messages)
            streamed = done(run_chunks([(BEDROCK / f"{name}.eventstream").read_bytes()]))
            assert laminate.normalize(output).content == streamed.content
        answer = client.converse_stream(modelId="throttled-mid-stream", messages=messages)
        with pytest.raises(ProviderError) as caught:
            laminate.collect_sync(answer)
        assert caught.value.error_type == "throttlingException"
        assert caught.value.retryable
        assert caught.value.partial is not None
        assert caught.value.partial.text() == "The first half of the answer"


# -- InvokeModel's route given as "bedrock" ---------------------------------------------


def _invoke_chunk(inner: dict[str, Any]) -> bytes:
    """One InvokeModelWithResponseStream message wrapping ``inner`` (base64, as AWS sends)."""
    payload = {"bytes": base64.b64encode(json.dumps(inner).encode()).decode(), "p": "abc"}
    headers = {
        ":event-type": "chunk",
        ":content-type": "application/json",
        ":message-type": "event",
    }
    return encode_message(headers, json.dumps(payload).encode())


@pytest.mark.parametrize("path", _binary_fixtures(ANTHROPIC_BEDROCK), ids=lambda p: p.name)
def test_invoke_stream_named_bedrock_reads_the_anthropic_events(path: Path) -> None:
    """InvokeModelWithResponseStream given as "bedrock" reads as it does detected: the
    Anthropic events inside, never dropped (it used to end as an incomplete stream)."""
    data = path.read_bytes()
    detected = run_chunks([data])
    named = run_chunks([data], provider="bedrock")
    assert named.events == detected.events
    assert type(named.error) is type(detected.error)
    if named.error is None:
        assert done(named).provider == "anthropic"  # the API its turn is written back in
    frames: list[tuple[str | None, dict[str, Any]]] = [
        (None, e) for e in boto3_events(data, "InvokeModelWithResponseStream")
    ]
    assert feed_frames(frames, provider="bedrock").events == feed_frames(frames, None).events


def test_invoke_body_named_bedrock_reads_the_anthropic_message() -> None:
    body = json.loads((FIXTURES / "anthropic" / "parallel-tool-calls.body.json").read_text())
    assert laminate.normalize(body, provider="bedrock") == laminate.normalize(body)
    assert laminate.normalize(body, provider="bedrock").provider == "anthropic"


def test_a_chunk_inside_a_converse_stream_is_malformed() -> None:
    data = (BEDROCK / "text.eventstream").read_bytes()
    chunk = _invoke_chunk({"type": "ping"})
    outcome = run_chunks([_first_frames(data, 2) + chunk])
    assert isinstance(outcome.error, MalformedStreamError)
    assert "InvokeModelWithResponseStream" in outcome.error.message


def _first_frames(data: bytes, count: int) -> bytes:
    """The first ``count`` event stream messages of ``data``."""
    end = 0
    for _ in range(count):
        end += int.from_bytes(data[end : end + 4], "big")
    return data[:end]


@pytest.mark.parametrize("provider", [None, "bedrock", "anthropic"])
@pytest.mark.parametrize(
    ("inner", "keys"),
    [
        ({"outputText": "Hi", "index": 0, "completionReason": "FINISH"}, "outputText"),
        ({"generation": "Hi", "stop_reason": None}, "generation"),
        ({"completion": "Hi", "stop_reason": "stop_sequence", "stop": "\n\nHuman:"}, "completion"),
    ],
    ids=["titan", "llama", "text-completions"],
)
def test_a_chunk_of_another_model_family_says_so(
    provider: str | None, inner: dict[str, Any], keys: str
) -> None:
    """Chunks of a model that is not Anthropic's hold no Messages event: a clear error
    at the first one, never frames dropped and then an incomplete stream."""
    outcome = run_chunks([_invoke_chunk(inner) * 3], provider=provider)
    assert isinstance(outcome.error, MalformedStreamError)
    assert "not an Anthropic Messages event" in outcome.error.message
    assert keys in outcome.error.message
    assert outcome.events == []


# -- a body that is only an AWS error ---------------------------------------------------


@pytest.mark.parametrize("provider", [None, "bedrock", "openai", "anthropic", "gemini"])
@pytest.mark.parametrize(
    ("body", "error_type", "message"),
    [
        ({"message": "The security token included in the request is expired"}, "error", None),
        ({"Message": "User is not authorized"}, "error", None),
        (
            {"__type": "com.amazon.coral.validate#ValidationException", "message": "bad model"},
            "ValidationException",
            None,
        ),
        ({"__type": "ThrottlingException", "Message": "slow down"}, "ThrottlingException", None),
    ],
)
def test_an_aws_error_body_is_a_provider_error_whoever_is_named(
    provider: str | None, body: dict[str, Any], error_type: str, message: str | None
) -> None:
    with pytest.raises(ProviderError) as info:
        laminate.normalize(json.dumps(body), provider=provider)
    assert info.value.error_type == error_type
    assert info.value.message == body.get("message", body.get("Message"))
    assert info.value.retryable is (error_type == "ThrottlingException")
    # The same body as the whole of a "stream".
    outcome = run_chunks([json.dumps(body).encode()], provider=provider)
    assert isinstance(outcome.error, ProviderError)
    assert outcome.error.error_type == error_type


@pytest.mark.parametrize(
    ("body", "header", "error_type", "retryable"),
    [
        (
            b'{"message":"Too many requests"}',
            "ThrottlingException:http://internal",
            "ThrottlingException",
            True,
        ),
        (b'{"Message":"no access"}', "AccessDeniedException", "AccessDeniedException", False),
        (b'{"__type":"ValidationException","message":"m"}', None, "ValidationException", False),
    ],
)
def test_an_aws_error_answer_takes_its_type_from_the_header(
    body: bytes, header: str | None, error_type: str, retryable: bool
) -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        headers = {"content-type": "application/json"}
        if header is not None:
            headers["x-amzn-ErrorType"] = header
        return httpx.Response(429 if retryable else 400, content=body, headers=headers)

    url = f"{_RUNTIME}/model/m/converse-stream"
    client = httpx.Client(transport=httpx.MockTransport(answer))
    with client, client.stream("POST", url) as response, pytest.raises(ProviderError) as info:
        laminate.collect_sync(response)
    assert info.value.error_type == error_type
    assert info.value.retryable is retryable
    assert info.value.status_code == (429 if retryable else 400)
