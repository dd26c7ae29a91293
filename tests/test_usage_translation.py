"""Usage through a translator: each writer gives the client the counts in its own API's
meaning, from any API's answer, streamed and complete, read by the client's own SDK.

Every source answer below prompted 5,000 tokens, 4,096 of them read from a cache. The
APIs whose input count holds the cached tokens (Chat Completions, Responses, Gemini,
Cohere, Ollama) report 5,000 with 4,096 cached; Anthropic and Bedrock report the
uncached rest apart (here 804, with 100 more written to the cache). Whatever the source,
a client whose input count holds the cache sees 5,000 in it; an Anthropic or Bedrock
client sees only the uncached rest, so a context meter or a cost counts no token twice.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

import laminate
from laminate import (
    BlockEnd,
    BlockStart,
    Event,
    NormalizedResponse,
    ResponseDone,
    ResponseStart,
    StreamNormalizer,
    Text,
    TextDelta,
    Usage,
)
from laminate._apis.registry import APIS
from laminate._framing import SSEDecoder

from .support import wait_for
from .test_encode import WRITERS, encode

TOTAL, CACHED, WRITTEN, OUTPUT = 5000, 4096, 100, 20
INCLUSIVE = ("openai", "openai-responses", "gemini", "cohere", "ollama")
EXCLUSIVE = ("anthropic", "bedrock")

_MESSAGE = {"role": "assistant", "content": "hi"}
# What each API's backend answers, as it answers it.
BODIES: dict[str, dict[str, Any]] = {
    "openai": {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "message": _MESSAGE, "finish_reason": "stop"}],
        "usage": {
            "prompt_tokens": TOTAL,
            "completion_tokens": OUTPUT,
            "total_tokens": TOTAL + OUTPUT,
            "prompt_tokens_details": {"cached_tokens": CACHED},
        },
    },
    "openai-responses": {
        "id": "resp_1",
        "object": "response",
        "created_at": 0,
        "status": "completed",
        "model": "m",
        "output": [
            {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": "hi", "annotations": []}],
            }
        ],
        "usage": {
            "input_tokens": TOTAL,
            "output_tokens": OUTPUT,
            "total_tokens": TOTAL + OUTPUT,
            "input_tokens_details": {"cached_tokens": CACHED},
            "output_tokens_details": {"reasoning_tokens": 0},
        },
    },
    "gemini": {
        "candidates": [
            {"content": {"role": "model", "parts": [{"text": "hi"}]}, "finishReason": "STOP"}
        ],
        "modelVersion": "m",
        "responseId": "r1",
        "usageMetadata": {
            "promptTokenCount": TOTAL,
            "candidatesTokenCount": OUTPUT,
            "cachedContentTokenCount": CACHED,
            "totalTokenCount": TOTAL + OUTPUT,
        },
    },
    "cohere": {
        "id": "c1",
        "message": {"role": "assistant", "content": [{"type": "text", "text": "hi"}]},
        "finish_reason": "COMPLETE",
        "usage": {
            "billed_units": {"input_tokens": TOTAL - CACHED, "output_tokens": OUTPUT},
            "tokens": {"input_tokens": TOTAL, "output_tokens": OUTPUT},
            "cached_tokens": CACHED,
        },
    },
    "ollama": {
        "model": "m",
        "created_at": "1970-01-01T00:00:00Z",
        "message": _MESSAGE,
        "done": True,
        "done_reason": "stop",
        "prompt_eval_count": TOTAL,
        "prompt_eval_cached_count": CACHED,
        "eval_count": OUTPUT,
    },
    "anthropic": {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "m",
        "content": [{"type": "text", "text": "hi"}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {
            "input_tokens": TOTAL - CACHED - WRITTEN,
            "output_tokens": OUTPUT,
            "cache_read_input_tokens": CACHED,
            "cache_creation_input_tokens": WRITTEN,
        },
    },
    "bedrock": {
        "output": {"message": {"role": "assistant", "content": [{"text": "hi"}]}},
        "stopReason": "end_turn",
        "usage": {
            "inputTokens": TOTAL - CACHED - WRITTEN,
            "outputTokens": OUTPUT,
            "totalTokens": TOTAL + OUTPUT,
            "cacheReadInputTokens": CACHED,
            "cacheWriteInputTokens": WRITTEN,
        },
        "metrics": {"latencyMs": 1},
    },
}


def source_answer(api: str) -> NormalizedResponse:
    return laminate.normalize(json.dumps(BODIES[api]), provider=api)


def events(response: NormalizedResponse) -> list[Event]:
    return [
        ResponseStart(response.id, response.model, response.provider),
        BlockStart(0, Text("")),
        TextDelta(0, "hi"),
        BlockEnd(0, Text("hi")),
        ResponseDone(response),
    ]


# What a client sees: (its input count, cache reads, cache writes), or None for a count
# its API has no field for.
Seen = tuple[int | None, int | None, int | None]


def expected(source: str, target: str) -> Seen:
    wrote = WRITTEN if source in EXCLUSIVE else None
    if target in EXCLUSIVE:
        return (TOTAL - CACHED - (wrote or 0), CACHED, wrote)
    if target == "openai":  # a server's `cache_write_tokens` detail, kept where reported
        return (TOTAL, CACHED, wrote)
    return (TOTAL, CACHED, None)


def test_every_reader_says_what_its_input_count_means() -> None:
    for api in BODIES:
        usage = source_answer(api).usage
        assert usage.input_includes_cache is (api in INCLUSIVE), api
        assert usage.total_input_tokens == TOTAL, api
        assert usage.cache_read_tokens == CACHED, api
    assert set(BODIES) == set(WRITERS) == set(INCLUSIVE + EXCLUSIVE)


def test_usage_means_the_same_whichever_convention_holds_it() -> None:
    inclusive = Usage(TOTAL, OUTPUT, CACHED, input_includes_cache=True)
    exclusive = Usage(TOTAL - CACHED, OUTPUT, CACHED)
    assert inclusive == exclusive
    assert hash(inclusive) == hash(exclusive)
    assert inclusive.uncached_input_tokens == exclusive.input_tokens == TOTAL - CACHED
    assert exclusive.total_input_tokens == inclusive.input_tokens == TOTAL
    assert Usage(TOTAL, OUTPUT, CACHED) != inclusive  # the cached tokens counted twice
    unreported = Usage(None, OUTPUT, CACHED, input_includes_cache=True)
    assert unreported.total_input_tokens is None
    assert unreported.uncached_input_tokens is None
    assert Usage(10, 1).total_input_tokens == Usage(10, 1).uncached_input_tokens == 10
    # A provider that reports more cached tokens than input: never a negative count.
    assert Usage(10, 1, 20, input_includes_cache=True).uncached_input_tokens == 0


def test_the_convention_survives_to_dict() -> None:
    response = source_answer("openai")
    data = json.loads(json.dumps(response.to_dict()))
    assert data["usage"]["input_includes_cache"] is True
    back = NormalizedResponse.from_dict(data)
    assert back.usage.input_includes_cache
    assert back.usage == response.usage
    assert "input_includes_cache" not in source_answer("anthropic").to_dict()["usage"]
    data["usage"]["input_includes_cache"] = "yes"
    with pytest.raises(ValueError, match="input_includes_cache"):
        NormalizedResponse.from_dict(data)


# -- what each client's SDK reads ------------------------------------------------------------


def _sse(data: bytes) -> list[Any]:
    decoder = SSEDecoder()
    return [json.loads(f.data) for f in decoder.feed(data) + decoder.close() if f.data != "[DONE]"]


def _openai_stream(data: bytes) -> Seen:
    streaming = pytest.importorskip("openai.lib.streaming.chat")
    chunk_type = pytest.importorskip("openai.types.chat").ChatCompletionChunk
    construct = pytest.importorskip("openai._models").construct_type
    state = streaming.ChatCompletionStreamState()
    payloads = _sse(data)
    for payload in payloads:
        state.handle_chunk(construct(type_=chunk_type, value=payload))
    usage = state.current_completion_snapshot.usage
    details = payloads[-1]["usage"].get("prompt_tokens_details", {})
    return (usage.prompt_tokens, usage.prompt_tokens_details.cached_tokens,
            details.get("cache_write_tokens"))  # fmt: skip


def _openai_body(body: dict[str, Any]) -> Seen:
    chat = pytest.importorskip("openai.types.chat")
    construct = pytest.importorskip("openai._models").construct_type
    usage = construct(type_=chat.ChatCompletion, value=body).usage
    details = body["usage"].get("prompt_tokens_details", {})
    return (usage.prompt_tokens, usage.prompt_tokens_details.cached_tokens,
            details.get("cache_write_tokens"))  # fmt: skip


def _responses_usage(usage: Any) -> Seen:
    return (usage.input_tokens, usage.input_tokens_details.cached_tokens, None)


def _responses_stream(data: bytes) -> Seen:
    responses = pytest.importorskip("openai.lib.streaming.responses._responses")
    event_type = pytest.importorskip("openai.types.responses").ResponseStreamEvent
    construct = pytest.importorskip("openai._models").construct_type
    omit = pytest.importorskip("openai").omit
    state = responses.ResponseStreamState(input_tools=omit, text_format=omit)
    final: Any = None
    for payload in _sse(data):
        for event in state.handle_event(construct(type_=event_type, value=payload)):
            if event.type == "response.completed":
                final = event.response
    return _responses_usage(final.usage)


def _responses_body(body: dict[str, Any]) -> Seen:
    types = pytest.importorskip("openai.types.responses")
    construct = pytest.importorskip("openai._models").construct_type
    return _responses_usage(construct(type_=types.Response, value=body).usage)


def _anthropic_usage(usage: Any) -> Seen:
    return (usage.input_tokens, usage.cache_read_input_tokens, usage.cache_creation_input_tokens)


def _anthropic_stream(data: bytes) -> Seen:
    messages = pytest.importorskip("anthropic.lib.streaming._messages")
    event_type = pytest.importorskip("anthropic.types").RawMessageStreamEvent
    construct = pytest.importorskip("anthropic._models").construct_type
    snapshot: Any = None
    buffers: dict[int, bytes] = {}
    for payload in _sse(data):
        event = construct(type_=event_type, value=payload)
        snapshot = messages.accumulate_event(
            event=event, current_snapshot=snapshot, json_bufs=buffers
        )
    return _anthropic_usage(snapshot.usage)


def _anthropic_body(body: dict[str, Any]) -> Seen:
    types = pytest.importorskip("anthropic.types")
    construct = pytest.importorskip("anthropic._models").construct_type
    return _anthropic_usage(construct(type_=types.Message, value=body).usage)


def _gemini_body(body: dict[str, Any]) -> Seen:
    types = pytest.importorskip("google.genai.types")
    usage = types.GenerateContentResponse.model_validate(body).usage_metadata
    return (usage.prompt_token_count, usage.cached_content_token_count, None)


def _gemini_stream(data: bytes) -> Seen:
    return _gemini_body(_sse(data)[-1])


def _cohere_body(body: dict[str, Any]) -> Seen:
    cohere = pytest.importorskip("cohere")
    construct = pytest.importorskip("cohere.core.unchecked_base_model").construct_type
    usage = construct(type_=cohere.ChatResponse, object_=body).usage
    return (usage.tokens.input_tokens, usage.cached_tokens, None)


def _cohere_stream(data: bytes) -> Seen:
    cohere = pytest.importorskip("cohere")
    construct = pytest.importorskip("cohere.core.unchecked_base_model").construct_type
    (end,) = [p for p in _sse(data) if p.get("type") == "message-end"]
    usage = construct(type_=cohere.StreamedChatResponseV2, object_=end).delta.usage
    return (usage.tokens.input_tokens, usage.cached_tokens, None)


def _ollama_body(body: dict[str, Any]) -> Seen:
    ollama = pytest.importorskip("ollama")
    response = ollama.ChatResponse.model_validate(body)
    # The SDK has no field for the cache reads yet: they are read from the JSON.
    return (response.prompt_eval_count, body.get("prompt_eval_cached_count"), None)


def _ollama_stream(data: bytes) -> Seen:
    lines = [json.loads(line) for line in data.splitlines() if line.strip()]
    return _ollama_body(lines[-1])


def _bedrock_usage(usage: dict[str, Any]) -> Seen:
    assert usage["totalTokens"] == TOTAL + OUTPUT
    return (usage["inputTokens"], usage.get("cacheReadInputTokens"),
            usage.get("cacheWriteInputTokens"))  # fmt: skip


def _bedrock_stream(data: bytes) -> Seen:
    eventstream = pytest.importorskip("botocore.eventstream")
    buffer = eventstream.EventStreamBuffer()
    buffer.add_data(data)
    (metadata,) = [json.loads(m.payload) for m in buffer if m.headers[":event-type"] == "metadata"]
    return _bedrock_usage(metadata["usage"])


def _bedrock_body(body: dict[str, Any]) -> Seen:
    session = pytest.importorskip("botocore.session").get_session()
    parsers = pytest.importorskip("botocore.parsers")
    model = session.get_service_model("bedrock-runtime")
    shape = model.operation_model("Converse").output_shape
    raw = {"body": json.dumps(body).encode(), "headers": {}, "status_code": 200}
    output = parsers.create_parser(model.protocol).parse(raw, shape)
    return _bedrock_usage(output["usage"])


CLIENTS: dict[str, tuple[Callable[[bytes], Seen], Callable[[dict[str, Any]], Seen]]] = {
    "openai": (_openai_stream, _openai_body),
    "openai-responses": (_responses_stream, _responses_body),
    "anthropic": (_anthropic_stream, _anthropic_body),
    "gemini": (_gemini_stream, _gemini_body),
    "cohere": (_cohere_stream, _cohere_body),
    "ollama": (_ollama_stream, _ollama_body),
    "bedrock": (_bedrock_stream, _bedrock_body),
}


def _inputs(usage: Usage) -> tuple[int | None, ...]:
    """The input counts in both meanings, and the output (a target may write a 0 for a
    reasoning count the source left out)."""
    return (
        usage.total_input_tokens,
        usage.uncached_input_tokens,
        usage.cache_read_tokens,
        usage.cache_write_tokens,
        usage.output_tokens,
    )


PAIRS = [
    pytest.param(source, target, id=f"{source}->{target}")
    for source in BODIES
    for target in CLIENTS
]


@pytest.mark.parametrize(("source", "target"), PAIRS)
def test_a_streamed_answer_counts_usage_in_the_clients_meaning(source: str, target: str) -> None:
    response = source_answer(source)
    data = encode(events(response), target)
    assert CLIENTS[target][0](data) == expected(source, target)
    # laminate reads back the same usage, in the target's meaning.
    back = StreamNormalizer(target)
    written = [*back.feed(data), *back.close()]
    done = written[-1]
    assert isinstance(done, ResponseDone)
    assert done.response.usage.input_includes_cache is APIS[target].input_includes_cache
    assert done.response.usage.total_input_tokens == TOTAL
    if expected(source, target)[2] is not None or source in INCLUSIVE:
        assert _inputs(done.response.usage) == _inputs(response.usage)


@pytest.mark.parametrize(("source", "target"), PAIRS)
def test_a_complete_body_counts_usage_in_the_clients_meaning(source: str, target: str) -> None:
    response = source_answer(source)
    body = json.loads(json.dumps(laminate.encode_response(response, target)))
    assert CLIENTS[target][1](body) == expected(source, target)
    back = laminate.normalize(json.dumps(body), provider=target)
    assert back.usage.total_input_tokens == TOTAL
    if expected(source, target)[2] is not None or source in INCLUSIVE:
        assert _inputs(back.usage) == _inputs(response.usage)


@pytest.mark.parametrize("target", list(CLIENTS))
def test_an_own_answer_keeps_its_counts_as_sent(target: str) -> None:
    response = source_answer(target)
    body = laminate.encode_response(response, target)
    assert laminate.normalize(json.dumps(body), provider=target).usage.input_tokens == (
        response.usage.input_tokens
    )


# -- every streamed answer carries usage -----------------------------------------------------


@pytest.mark.parametrize("target", list(CLIENTS))
def test_every_stream_carries_the_usage(target: str) -> None:
    response = source_answer("ollama")
    assert CLIENTS[target][0](encode(events(response), target))[0] is not None


# -- an answer without ids (Ollama's) gets them ----------------------------------------------

_OLLAMA_CALL = (
    b'{"model":"m","created_at":"1970-01-01T00:00:00Z","message":{"role":"assistant",'
    b'"content":"","tool_calls":[{"function":{"name":"f","arguments":{"a":1}}}]},'
    b'"done":false}\n'
    b'{"model":"m","created_at":"1970-01-01T00:00:00Z","message":{"role":"assistant",'
    b'"content":""},"done":true,"done_reason":"stop","prompt_eval_count":5,"eval_count":2}\n'
)

# Where each API's answer names itself: (stream payload, key) and the body's key.
_ID_IN_STREAM: dict[str, Callable[[list[Any]], str]] = {
    "openai": lambda payloads: payloads[0]["id"],
    "openai-responses": lambda payloads: payloads[0]["response"]["id"],
    "anthropic": lambda payloads: payloads[0]["message"]["id"],
    "gemini": lambda payloads: payloads[0]["responseId"],
    "cohere": lambda payloads: payloads[0]["id"],
}
_PREFIXES = {
    "openai": "chatcmpl-",
    "openai-responses": "resp_",
    "anthropic": "msg_",
    "gemini": "resp-",
    "cohere": "msg-",
}
_ID_IN_BODY = {
    "openai": "id",
    "openai-responses": "id",
    "anthropic": "id",
    "gemini": "responseId",
    "cohere": "id",
}


def _ollama_answer() -> tuple[list[Event], NormalizedResponse]:
    normalizer = StreamNormalizer("ollama")
    found = [*normalizer.feed(_OLLAMA_CALL), *normalizer.close()]
    done = found[-1]
    assert isinstance(done, ResponseDone)
    assert done.response.id == ""  # Ollama names no answer
    return found, done.response


@pytest.mark.parametrize("target", list(_ID_IN_STREAM))
def test_an_answer_without_an_id_gets_one_in_every_api(target: str) -> None:
    found, response = _ollama_answer()
    (call,) = response.tool_uses()
    assert call.id  # the reader names the call
    payloads = _sse(encode(found, target))
    streamed = _ID_IN_STREAM[target](payloads)
    assert streamed.startswith(_PREFIXES[target])
    assert len(streamed) > len(_PREFIXES[target])
    if target == "openai":
        assert {p["id"] for p in payloads} == {streamed}
    if target == "openai-responses":
        assert payloads[-1]["response"]["id"] == streamed
    assert call.id.encode() in encode(found, target)
    body = laminate.encode_response(response, target)
    assert body[_ID_IN_BODY[target]].startswith(_PREFIXES[target])
    back = laminate.normalize(json.dumps(body), provider=target)
    assert back.id == body[_ID_IN_BODY[target]]
    assert [c.id for c in back.tool_uses()] == [call.id]
    # Each answer gets its own.
    assert laminate.encode_response(response, target)[_ID_IN_BODY[target]] != back.id


def test_the_anthropic_sdk_reads_an_ollama_answers_ids() -> None:
    construct = pytest.importorskip("anthropic._models").construct_type
    types = pytest.importorskip("anthropic.types")
    _, response = _ollama_answer()
    message = construct(type_=types.Message, value=laminate.encode_response(response, "anthropic"))
    assert message.id.startswith("msg_")
    written = [b.id for b in message.content if isinstance(b, types.ToolUseBlock)]
    assert written == [c.id for c in response.tool_uses()]
    assert all(written)


# -- through the proxy -----------------------------------------------------------------------

_CHUNK = {"id": "chatcmpl-9", "object": "chat.completion.chunk", "created": 0, "model": "m"}


def _chat_answer() -> bytes:
    chunks = [
        {**_CHUNK, "choices": [{"index": 0, "delta": {"role": "assistant", "content": "hi"}}]},
        {**_CHUNK, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
        {**_CHUNK, "choices": [], "usage": BODIES["openai"]["usage"]},
    ]
    return b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks) + (
        b"data: [DONE]\n\n"
    )


def _anthropic_answer() -> bytes:
    usage = dict(BODIES["anthropic"]["usage"])
    start = {**BODIES["anthropic"], "content": [], "stop_reason": None}
    events: list[tuple[str, dict[str, Any]]] = [
        ("message_start", {"message": {**start, "usage": {**usage, "output_tokens": 1}}}),
        ("content_block_start", {"index": 0, "content_block": {"type": "text", "text": ""}}),
        ("content_block_delta", {"index": 0, "delta": {"type": "text_delta", "text": "hi"}}),
        ("content_block_stop", {"index": 0}),
        ("message_delta", {"delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 20}}),
        ("message_stop", {}),
    ]
    return b"".join(
        f"event: {name}\ndata: {json.dumps({'type': name, **data})}\n\n".encode()
        for name, data in events
    )


# Each backend's API: the path the proxy asks after the backend's base, and its stream
# (its complete body is the API's in BODIES).
_BACKENDS: dict[str, tuple[str, Callable[[], bytes]]] = {
    "openai": ("/chat/completions", _chat_answer),
    "anthropic": ("/v1/messages", _anthropic_answer),
}


@pytest.fixture(scope="module")
def cached_proxy() -> Any:
    """A proxy in front of a Chat Completions and an Anthropic backend that report cached
    tokens (model `<api>-streamed` or `<api>-whole` goes to the backend of that API,
    which answers as its name says); and the proxy's log lines."""
    loopback = pytest.importorskip("tests.loopback")
    proxy = pytest.importorskip("laminate.proxy")
    with loopback.LoopbackServer() as server:
        backends = []
        for api, (path, streamed) in _BACKENDS.items():
            # A body per base: the backend's path is its base plus the API's own.
            bodies = {
                "streamed": ("text/event-stream", streamed()),
                "whole": ("application/json", json.dumps(BODIES[api]).encode()),
            }
            for name, answer in bodies.items():
                server.app.bodies[f"{api}-{name}{path}"] = answer
                base = f"{server.url}/body/{api}-{name}"
                backends.append(proxy.Backend(api, base, models={f"{api}-{name}": "m"}))
        lines: list[str] = []
        config = proxy.ProxyConfig(
            backends=tuple(backends),
            timeouts=proxy.Timeouts(connect=10, read=60, idle=60),
            log=lines.append,
        )
        with proxy.proxy_server(config) as url:
            yield url, lines


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "body"])
def test_an_anthropic_client_behind_the_proxy_counts_no_token_twice(
    cached_proxy: Any, stream: bool
) -> None:
    anthropic = pytest.importorskip("anthropic")
    url, lines = cached_proxy
    before = len(lines)
    client = anthropic.Anthropic(base_url=url, api_key="unused", max_retries=0)
    asked: dict[str, Any] = {
        "model": "openai-streamed" if stream else "openai-whole",
        "max_tokens": 64,
        "messages": [{"role": "user", "content": "hi"}],
    }
    if stream:
        with client.messages.stream(**asked) as answer:
            message = answer.get_final_message()
    else:
        message = client.messages.create(**asked)
    assert message.id
    assert [b.text for b in message.content if b.type == "text"] == ["hi"]
    usage = message.usage
    assert usage.input_tokens == TOTAL - CACHED
    assert usage.cache_read_input_tokens == CACHED
    assert usage.cache_creation_input_tokens is None
    assert usage.output_tokens == OUTPUT
    # The log counts every input token, cached or not, as every backend's answer does.
    logged = json.loads(wait_for(lines, before + 1)[-1])
    assert (logged["input_tokens"], logged["output_tokens"]) == (TOTAL, OUTPUT)


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "body"])
def test_an_openai_client_behind_the_proxy_sees_every_input_token(
    cached_proxy: Any, stream: bool
) -> None:
    openai = pytest.importorskip("openai")
    url, lines = cached_proxy
    before = len(lines)
    client = openai.OpenAI(base_url=url + "/v1", api_key="unused", max_retries=0)
    asked: dict[str, Any] = {
        "model": "anthropic-streamed" if stream else "anthropic-whole",
        "messages": [{"role": "user", "content": "hi"}],
    }
    if stream:
        chunks = list(
            client.chat.completions.create(
                **asked, stream=True, stream_options={"include_usage": True}
            )
        )
        assert chunks[0].id
        usage = chunks[-1].usage
    else:
        completion = client.chat.completions.create(**asked)
        assert completion.id
        usage = completion.usage
    assert usage is not None
    assert usage.prompt_tokens == TOTAL
    assert usage.prompt_tokens_details is not None
    assert usage.prompt_tokens_details.cached_tokens == CACHED
    assert usage.completion_tokens == OUTPUT
    assert usage.total_tokens == TOTAL + OUTPUT
    # The log counts the Anthropic backend's input as every other backend's: all of it.
    logged = json.loads(wait_for(lines, before + 1)[-1])
    assert (logged["input_tokens"], logged["output_tokens"]) == (TOTAL, OUTPUT)
