"""Real clients read what the writers wrote (each test is skipped when its client is absent).

- ``ai-sdk``: the ``ai`` npm package's own ``parseJsonEventStream`` + ``uiMessageChunkSchema``
  + ``readUIMessageStream`` (``tests/ai_sdk/read_ui_stream.mjs``; install with
  ``npm install --prefix tests/ai_sdk``), and a reader written here from the protocol;
- ``openai``: the openai SDK's ``ChatCompletionStreamState``;
- ``openai-responses``: the openai SDK's ``ResponseStreamState``;
- ``anthropic``: the anthropic SDK's message accumulator.

Each client's final message must hold the source answer's text, reasoning and tool calls
(ids, names, arguments) and its stop reason.

Complete bodies (``encode_response``) of every API with a writer are read by that API's
own client the way it reads an answer: the openai, anthropic and cohere SDKs' model
construction, google-genai's and ollama's validated models, botocore's REST-JSON parser
for ``converse()`` (every third answer, as for the streams; laminate's own reader reads
every body back in test_encode). Each must give the answer's text and valid tool calls,
and a stop value in the client's own vocabulary whenever the target names the stop's kind.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import typing
from pathlib import Path
from typing import Any

import pytest

import laminate
from laminate import (
    InvalidToolUse,
    NormalizedResponse,
    Reasoning,
    ResponseDone,
    StreamNormalizer,
    ToolUse,
    Unknown,
)
from laminate._encode.ai_sdk import FINISH_REASONS
from laminate._framing import SSEDecoder

from .support import FIXTURES
from .test_encode import SOURCES, WRITERS, carries, encode, events_of, expected_stop

AI_SDK = Path(__file__).resolve().parent / "ai_sdk"
COMPLETE = [s for s in SOURCES if events_of(s) is not None]
# The SDK clients are slower to drive: every third answer (all providers are among them).
SAMPLE = COMPLETE[::3]


def answer(source: Any) -> NormalizedResponse:
    events = events_of(source)
    assert events is not None
    done = events[-1]
    assert isinstance(done, ResponseDone)
    return done.response


def frames(data: bytes) -> list[tuple[str | None, Any]]:
    decoder = SSEDecoder()
    found = decoder.feed(data) + decoder.close()
    return [(f.event, None if f.data == "[DONE]" else json.loads(f.data)) for f in found]


def reasoning_text(response: NormalizedResponse) -> str:
    return "".join(b.text for b in response.content if isinstance(b, Reasoning))


# -- ai-sdk ----------------------------------------------------------------------------------


def expected_parts(response: NormalizedResponse) -> dict[str, Any]:
    calls = []
    for block in response.content:
        if isinstance(block, ToolUse):
            calls.append([block.id, block.name, "input-available", block.input.value])
        elif isinstance(block, InvalidToolUse):
            calls.append([block.id, block.name, "output-error", block.raw_input])
    return {"text": response.text(), "reasoning": reasoning_text(response), "calls": calls}


def parts_of(message: dict[str, Any]) -> dict[str, Any]:
    parts = message["parts"]
    return {
        "text": "".join(p["text"] for p in parts if p["type"] == "text"),
        "reasoning": "".join(p["text"] for p in parts if p["type"] == "reasoning"),
        "calls": [
            [p["toolCallId"], p["type"].removeprefix("tool-"), p["state"], p["input"]]
            for p in parts
            if p["type"].startswith("tool-")
        ],
    }


@pytest.mark.parametrize("source", COMPLETE, ids=[s.name for s in COMPLETE])
def test_ai_sdk_chunks_follow_the_protocol(source: Any) -> None:
    """A reader of the protocol's rules, written here: parts open before their deltas and
    close once, and the finished message is the answer."""
    response = answer(source)
    found = frames(encode(events_of(source) or [], "ai-sdk"))
    assert found[-1] == (None, None)  # data: [DONE]
    chunks = [c for _, c in found[:-1]]
    assert chunks[0]["type"] == "start"
    assert chunks[-1] == {"type": "finish", "finishReason": _finish(response)}
    text: list[str] = []
    reasoning: list[str] = []
    calls: dict[str, list[Any]] = {}
    live: set[str] = set()
    for chunk in chunks:
        kind = chunk["type"]
        key = chunk.get("id", chunk.get("toolCallId"))
        if kind.endswith("-start") and kind not in ("start", "start-step"):
            assert key not in live
            live.add(key)
            if kind == "tool-input-start":
                calls[key] = [key, chunk["toolName"], "", None]
        elif kind in ("text-delta", "reasoning-delta", "tool-input-delta"):
            assert key in live
            (text if kind == "text-delta" else reasoning).append(chunk.get("delta", ""))
        elif kind in ("text-end", "reasoning-end"):
            live.remove(key)
        elif kind in ("tool-input-available", "tool-input-error"):
            live.remove(key)
            state = "input-available" if kind == "tool-input-available" else "output-error"
            calls[key][2:] = [state, chunk["input"]]
    assert not live
    got = {"text": "".join(text), "reasoning": "".join(reasoning), "calls": list(calls.values())}
    assert got == expected_parts(response)


def _finish(response: NormalizedResponse) -> str:
    return FINISH_REASONS.get(response.stop_reason.kind or "", "other")


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
@pytest.mark.skipif(
    not (AI_SDK / "node_modules" / "ai").is_dir(),
    reason="the ai npm package is not installed (npm install --prefix tests/ai_sdk)",
)
def test_the_ai_package_reads_every_answer(tmp_path: Path) -> None:
    paths = []
    for n, source in enumerate(COMPLETE):
        path = tmp_path / f"{n}.sse"
        path.write_bytes(encode(events_of(source) or [], "ai-sdk"))
        paths.append(path)
    script = AI_SDK / "read_ui_stream.mjs"
    run = subprocess.run(
        ["node", str(script), *map(str, paths)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    messages = [json.loads(line) or {"parts": []} for line in run.stdout.split("\n")[:-1]]
    assert len(messages) == len(COMPLETE)
    for source, message in zip(COMPLETE, messages, strict=True):
        assert parts_of(message) == expected_parts(answer(source)), source.name
        urls = [part["url"] for part in message["parts"] if part["type"] == "source-url"]
        assert urls == cited_urls(answer(source)), source.name


# The documents each answer cites, as the `ai` package lists them: written by hand from
# the fixtures (titles, and a type by how the document is cited or by its file name).
CITED_DOCUMENTS = {
    "anthropic/document-citations.sse": [
        {"mediaType": "text/plain", "title": "Remote work policy"},
        {"mediaType": "application/pdf", "title": "Document 1"},  # untitled: its number
    ],
    "cohere/citations.sse": [{"mediaType": "text/plain", "title": "Hours"}],
    "openai-responses/file-citations.sse": [
        {"mediaType": "application/pdf", "title": "handbook.pdf", "filename": "handbook.pdf"},
        {"mediaType": "text/plain", "title": "returns.txt", "filename": "returns.txt"},
    ],
}


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
@pytest.mark.skipif(
    not (AI_SDK / "node_modules" / "ai").is_dir(),
    reason="the ai npm package is not installed (npm install --prefix tests/ai_sdk)",
)
def test_the_ai_package_lists_cited_documents(tmp_path: Path) -> None:
    """A document cited without a URL is a `source-document` part, each document once
    however often it is cited; the `ai` package checks every chunk against its schema."""
    sources = [s for s in COMPLETE if s.name in CITED_DOCUMENTS]
    assert len(sources) == len(CITED_DOCUMENTS)
    paths = []
    for n, source in enumerate(sources):
        paths.append(tmp_path / f"{n}.sse")
        paths[-1].write_bytes(encode(events_of(source) or [], "ai-sdk"))
    run = subprocess.run(
        ["node", str(AI_SDK / "read_ui_stream.mjs"), *map(str, paths)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    messages = [json.loads(line) for line in run.stdout.split("\n")[:-1]]
    for source, message in zip(sources, messages, strict=True):
        documents = [p for p in message["parts"] if p["type"] == "source-document"]
        assert [p.pop("sourceId") for p in documents] == [
            f"source-{n}" for n in range(1, len(documents) + 1)
        ]
        assert [{k: v for k, v in p.items() if k != "type"} for p in documents] == (
            CITED_DOCUMENTS[source.name]
        ), source.name


def cited_urls(response: NormalizedResponse) -> list[str]:
    """The URLs an answer cites, each once, in order: what the sources must list."""
    urls: list[str] = []
    for block in response.content:
        if not isinstance(block, Unknown) or not isinstance(block.data.value, dict):
            continue
        data = block.data.value
        if block.block_type == "citation":
            inner = data.get("url_citation")
            found = [(inner if isinstance(inner, dict) else data).get("url")]
        elif block.block_type == "groundingMetadata":
            chunks = data.get("groundingChunks") or []
            found = [(c.get("web") or {}).get("uri") for c in chunks if isinstance(c, dict)]
        elif block.block_type == "citationMetadata":
            cited = data.get("citationSources", data.get("citations")) or []
            found = [c.get("uri") for c in cited if isinstance(c, dict)]
        else:
            found = []
        for url in found:
            if isinstance(url, str) and url and url not in urls:
                urls.append(url)
    return urls


# -- the official Python SDKs ------------------------------------------------------------------


def _calls(response: NormalizedResponse) -> list[tuple[str, str, Any]]:
    return [(b.id, b.name, b.input.value) for b in response.content if isinstance(b, ToolUse)]


@pytest.mark.parametrize("source", SAMPLE, ids=[s.name for s in SAMPLE])
def test_openai_sdk_stream_state_reads_chat_chunks(source: Any) -> None:
    streaming = pytest.importorskip("openai.lib.streaming.chat")
    chunk_type = pytest.importorskip("openai.types.chat").ChatCompletionChunk
    construct = pytest.importorskip("openai._models").construct_type
    response = answer(source)
    state = streaming.ChatCompletionStreamState()
    for _, payload in frames(encode(events_of(source) or [], "openai")):
        if payload is not None:  # the SDK builds chunks as its Stream does: unvalidated
            state.handle_chunk(construct(type_=chunk_type, value=payload))
    # (get_final_completion refuses a `length` finish; the snapshot is the same message)
    message = state.current_completion_snapshot.choices[0].message
    assert (message.content or "") == response.text()
    wanted = _calls(response)
    valid = {call[0] for call in wanted}
    got = [
        (c.id, c.function.name, json.loads(c.function.arguments or "{}"))
        for c in message.tool_calls or []
        if c.id in valid
    ]
    assert got == wanted


# Arguments that are not JSON are written as received; the anthropic SDK refuses them.
JSON_ARGUMENTS = [
    s
    for s in SAMPLE
    if not any(
        isinstance(b, InvalidToolUse) and "not valid JSON" in b.reason for b in answer(s).content
    )
]


@pytest.mark.parametrize("source", JSON_ARGUMENTS, ids=[s.name for s in JSON_ARGUMENTS])
def test_anthropic_sdk_accumulator_reads_messages_events(source: Any) -> None:
    messages = pytest.importorskip("anthropic.lib.streaming._messages")
    event_type = pytest.importorskip("anthropic.types").RawMessageStreamEvent
    construct = pytest.importorskip("anthropic._models").construct_type
    response = answer(source)
    snapshot: Any = None
    buffers: dict[int, bytes] = {}
    for _, payload in frames(encode(events_of(source) or [], "anthropic")):
        event = construct(type_=event_type, value=payload)
        snapshot = messages.accumulate_event(
            event=event, current_snapshot=snapshot, json_bufs=buffers
        )
    text = "".join(b.text for b in snapshot.content if b.type == "text")
    thinking = "".join(b.thinking for b in snapshot.content if b.type == "thinking")
    calls = [(b.id, b.name, b.input) for b in snapshot.content if b.type == "tool_use"]
    assert text == response.text()
    assert thinking == reasoning_text(response)
    invalid = {b.id for b in response.content if isinstance(b, InvalidToolUse)}
    assert [c for c in calls if c[0] not in invalid] == _calls(response)
    assert snapshot.stop_reason is not None
    if response.usage.output_tokens is not None:
        assert snapshot.usage.output_tokens == response.usage.output_tokens


@pytest.mark.parametrize("source", SAMPLE, ids=[s.name for s in SAMPLE])
def test_openai_sdk_response_stream_state_reads_responses_events(source: Any) -> None:
    responses = pytest.importorskip("openai.lib.streaming.responses._responses")
    event_type = pytest.importorskip("openai.types.responses").ResponseStreamEvent
    construct = pytest.importorskip("openai._models").construct_type
    omit = pytest.importorskip("openai").omit

    response = answer(source)
    state = responses.ResponseStreamState(input_tools=omit, text_format=omit)
    final: Any = None
    for _, payload in frames(encode(events_of(source) or [], "openai-responses")):
        for event in state.handle_event(construct(type_=event_type, value=payload)):
            if event.type in ("response.completed", "response.incomplete"):
                final = event.response
    assert final is not None
    text = "".join(
        part.text
        for item in final.output
        if item.type == "message"
        for part in item.content
        if part.type == "output_text"
    )
    wanted = _calls(response)
    valid = {call[0] for call in wanted}
    calls = [
        (item.call_id, item.name, json.loads(item.arguments or "{}"))
        for item in final.output
        if item.type == "function_call" and item.call_id in valid
    ]
    assert text == response.text()
    assert calls == wanted


@pytest.mark.parametrize(
    ("provider", "fixture"),
    [
        ("openai-responses", "openai-responses/web-search-unknown-item.sse"),
        ("anthropic", "anthropic-drift/server-tool-blocks.sse"),
        ("openai", "openai/web-search-annotations.sse"),
    ],
)
def test_the_sdks_read_citations_written_back_to_their_api(provider: str, fixture: str) -> None:
    normalizer = StreamNormalizer(provider)
    events = normalizer.feed((FIXTURES / fixture).read_bytes()) + normalizer.close()
    assert normalizer.response is not None
    cited = [
        b.data.value
        for b in normalizer.response.content
        if isinstance(b, Unknown) and b.block_type == "citation"
    ]
    assert cited
    body = encode(events, provider)
    if provider == "openai":
        completions = pytest.importorskip("openai.lib.streaming.chat._completions")
        chunk_type = pytest.importorskip("openai.types.chat").ChatCompletionChunk
        omit = pytest.importorskip("openai").omit
        chat = completions.ChatCompletionStreamState(input_tools=omit, response_format=omit)
        for _, payload in frames(body):
            if payload is not None:
                chat.handle_chunk(chunk_type.model_validate(payload))
        message = chat.get_final_completion().choices[0].message
        got = [a.model_dump(exclude_none=True) for a in message.annotations or []]
    elif provider == "openai-responses":
        responses = pytest.importorskip("openai.lib.streaming.responses._responses")
        event_type = pytest.importorskip("openai.types.responses").ResponseStreamEvent
        construct = pytest.importorskip("openai._models").construct_type
        omit = pytest.importorskip("openai").omit
        state = responses.ResponseStreamState(input_tools=omit, text_format=omit)
        final: Any = None
        for _, payload in frames(body):
            for event in state.handle_event(construct(type_=event_type, value=payload)):
                if event.type == "response.completed":
                    final = event.response
        got = [
            annotation.model_dump(exclude_none=True)
            for item in final.output
            if item.type == "message"
            for part in item.content
            for annotation in part.annotations
        ]
    else:
        messages = pytest.importorskip("anthropic.lib.streaming._messages")
        message_event = pytest.importorskip("anthropic.types").RawMessageStreamEvent
        construct = pytest.importorskip("anthropic._models").construct_type
        snapshot: Any = None
        buffers: dict[int, bytes] = {}
        for _, payload in frames(body):
            event = construct(type_=message_event, value=payload)
            snapshot = messages.accumulate_event(
                event=event, current_snapshot=snapshot, json_bufs=buffers
            )
        got = [
            citation.model_dump(exclude_none=True)
            for block in snapshot.content
            if block.type == "text"
            for citation in block.citations or []
        ]
    assert got == cited


# -- complete bodies, read by each API's own client --------------------------------------------

# What a client read of a body: (text, calls as (id, name, arguments), stop value), and the
# stop values the client knows (empty: it takes any string).
Read = tuple[str, list[tuple[Any, ...]], Any]


def _arguments(text: str) -> Any:
    """A call's arguments as its client's caller parses them (text that is not JSON: as
    it is, for the comparison to leave it out)."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def _openai_body(body: dict[str, Any]) -> tuple[Read, set[str]]:
    chat = pytest.importorskip("openai.types.chat")
    construct = pytest.importorskip("openai._models").construct_type
    completion = construct(type_=chat.ChatCompletion, value=body)
    choice = completion.choices[0]
    calls = [
        (c.id, c.function.name, _arguments(c.function.arguments))
        for c in choice.message.tool_calls or []
    ]
    known = typing.get_args(chat.chat_completion.Choice.model_fields["finish_reason"].annotation)
    return (choice.message.content or "", calls, choice.finish_reason), set(known)


def _responses_body(body: dict[str, Any]) -> tuple[Read, set[str]]:
    responses = pytest.importorskip("openai.types.responses")
    construct = pytest.importorskip("openai._models").construct_type
    response = construct(type_=responses.Response, value=body)
    text = "".join(
        part.text if part.type == "output_text" else part.refusal
        for item in response.output
        if item.type == "message"
        for part in item.content
    )
    calls = [
        (item.call_id, item.name, _arguments(item.arguments))
        for item in response.output
        if item.type == "function_call"
    ]
    (status,) = typing.get_args(responses.Response.model_fields["status"].annotation)[:1]
    return (text, calls, response.status), set(typing.get_args(status))


def _anthropic_body(body: dict[str, Any]) -> tuple[Read, set[str]]:
    types = pytest.importorskip("anthropic.types")
    construct = pytest.importorskip("anthropic._models").construct_type
    message = construct(type_=types.Message, value=body)
    text = "".join(b.text for b in message.content if b.type == "text")
    calls = [(b.id, b.name, b.input) for b in message.content if b.type == "tool_use"]
    return (text, calls, message.stop_reason), set(typing.get_args(types.StopReason))


def _ollama_body(body: dict[str, Any]) -> tuple[Read, set[str]]:
    ollama = pytest.importorskip("ollama")
    response = ollama.ChatResponse.model_validate(body)
    calls = [
        (call.function.name, dict(call.function.arguments))
        for call in response.message.tool_calls or []
    ]
    return (response.message.content or "", calls, response.done_reason), set()


def _gemini_body(body: dict[str, Any]) -> tuple[Read, set[str]]:
    types = pytest.importorskip("google.genai.types")
    response = types.GenerateContentResponse.model_validate(body)
    candidate = (response.candidates or [])[0]
    parts = candidate.content.parts or [] if candidate.content is not None else []
    text = "".join(p.text or "" for p in parts if not p.thought)
    calls = [
        (p.function_call.id, p.function_call.name, p.function_call.args)
        for p in parts
        if p.function_call is not None
    ]
    known = {reason.value for reason in types.FinishReason}
    finish = candidate.finish_reason
    return (text, calls, getattr(finish, "value", finish)), known


def _cohere_body(body: dict[str, Any]) -> tuple[Read, set[str]]:
    cohere = pytest.importorskip("cohere")
    construct = pytest.importorskip("cohere.core.unchecked_base_model").construct_type
    response = construct(type_=cohere.ChatResponse, object_=body)
    message = response.message
    text = "".join(item.text for item in message.content or [] if item.type == "text")
    calls = [
        (call.id, call.function.name, _arguments(call.function.arguments))
        for call in message.tool_calls or []
    ]
    (finish,) = typing.get_args(cohere.ChatFinishReason)[:1]
    return (text, calls, response.finish_reason), set(typing.get_args(finish))


def _bedrock_body(body: dict[str, Any]) -> tuple[Read, set[str]]:
    session = pytest.importorskip("botocore.session").get_session()
    parsers = pytest.importorskip("botocore.parsers")
    model = session.get_service_model("bedrock-runtime")
    shape = model.operation_model("Converse").output_shape
    raw = {"body": json.dumps(body).encode(), "headers": {}, "status_code": 200}
    output = parsers.create_parser(model.protocol).parse(raw, shape)
    content = output["output"]["message"]["content"]
    text = "".join(
        piece["text"]
        for item in content
        for piece in item.get("citationsContent", {}).get("content", [item])
        if "text" in piece
    )
    calls = [
        (item["toolUse"]["toolUseId"], item["toolUse"]["name"], item["toolUse"]["input"])
        for item in content
        if "toolUse" in item
    ]
    return (text, calls, output["stopReason"]), set(shape.members["stopReason"].enum)


BODY_CLIENTS = {
    "openai": _openai_body,
    "openai-responses": _responses_body,
    "anthropic": _anthropic_body,
    "ollama": _ollama_body,
    "gemini": _gemini_body,
    "cohere": _cohere_body,
    "bedrock": _bedrock_body,
}


def test_every_writer_has_a_body_client() -> None:
    assert set(BODY_CLIENTS) == set(WRITERS)


def _body_cases() -> list[Any]:
    return [
        pytest.param(source, target, id=f"{source.name}->{target}")
        for source in SAMPLE
        for target in WRITERS
    ]


@pytest.mark.parametrize(("source", "target"), _body_cases())
def test_each_api_client_reads_its_complete_bodies(source: Any, target: str) -> None:
    response = answer(source)
    body = json.loads(json.dumps(laminate.encode_response(response, target)))
    try:
        (text, calls, stop), known = BODY_CLIENTS[target](body)
    except ValueError:
        # A stop value the API itself sent and does not know goes back as it was: a
        # client that checks its vocabulary refuses it, as it refused the original.
        assert response.provider == target, source.name
        assert response.stop_reason.is_unknown, source.name
        return
    assert text == response.text()
    wanted: list[tuple[Any, ...]] = list(_calls(response))
    if not carries(target).call_ids:
        wanted = [call[1:] for call in wanted]
    valid = {json.dumps(call, sort_keys=True) for call in wanted}
    assert [c for c in calls if json.dumps(c, sort_keys=True) in valid] == wanted
    assert isinstance(stop, str)
    if known and expected_stop(response, target, "body") is not None:
        assert stop in known, (response.stop_reason, stop)
