"""The Gemini, Cohere and Bedrock stream writers' own shapes (the round trip of every
writer is ``test_encode``'s), the citations written back, and the AI SDK's sources.

Real clients: google-genai's ``GenerateContentResponse`` per chunk, botocore's
``EventStreamBuffer`` (every CRC), and the google-genai and boto3 clients pointed at
``laminate serve --as gemini|bedrock`` on loopback.
"""

from __future__ import annotations

import json
import warnings
from typing import Any

import pytest

import laminate
from laminate import (
    BlockEnd,
    BlockStart,
    NormalizedResponse,
    Reasoning,
    ReasoningDelta,
    ResponseDone,
    ResponseStart,
    StopReason,
    Text,
    TextDelta,
    ToolInputDelta,
    ToolUse,
    Usage,
)
from laminate._apis.bedrock import write_stream as bedrock_write_stream
from laminate._encode.ai_sdk import AISDKWriter
from laminate._framing import SSEDecoder
from laminate._framing.eventstream import encode_message
from laminate.testing import mock_server

from .support import FIXTURES, STREAM_SUFFIXES
from .test_encode import SOURCES, Source, encode, events_of

TARGETS = ("gemini", "cohere", "bedrock")
COMPLETE = [s for s in SOURCES if events_of(s) is not None]


def _done(source: Source) -> NormalizedResponse:
    events = events_of(source)
    assert events is not None
    done = events[-1]
    assert isinstance(done, ResponseDone)
    return done.response


# -- live ------------------------------------------------------------------------------------

PARALLEL = FIXTURES / "anthropic" / "parallel-tool-calls.sse"


def _events(path: Any, provider: str | None = None) -> list[laminate.Event]:
    normalizer = laminate.StreamNormalizer(provider)
    return normalizer.feed(path.read_bytes()) + normalizer.close()


@pytest.mark.parametrize("target", TARGETS)
def test_every_delta_becomes_bytes_at_once(target: str) -> None:
    """Text and reasoning always; argument fragments too, except for Gemini, whose calls
    carry a whole ``args`` object and are written when they end."""
    encoder = laminate.StreamEncoder(target)
    for event in _events(PARALLEL):
        data = encoder.encode(event)
        if isinstance(event, TextDelta | ReasoningDelta):
            assert json.dumps(event.text, ensure_ascii=False)[1:-1].encode() in data
        elif isinstance(event, ToolInputDelta) and event.fragment:
            assert bool(data) == (target != "gemini")
        elif (
            isinstance(event, BlockEnd) and isinstance(event.block, ToolUse) and target == "gemini"
        ):
            assert b'"functionCall":' in data
            assert event.block.id.encode() in data


# -- Gemini ----------------------------------------------------------------------------------


def sse_payloads(data: bytes) -> list[Any]:
    decoder = SSEDecoder()
    return [json.loads(f.data) for f in decoder.feed(data) + decoder.close()]


def test_gemini_frames_are_crlf_sse_without_done() -> None:
    data = encode(_events(PARALLEL), "gemini")
    assert data.startswith(b"data: {")
    assert data.endswith(b"}\r\n\r\n")
    assert b"\n" not in data.replace(b"\r\n", b"")
    assert b"[DONE]" not in data
    chunks = sse_payloads(data)
    last = chunks[-1]
    assert last["candidates"][0]["finishReason"] == "STOP"
    assert all("finishReason" not in c["candidates"][0] for c in chunks[:-1])
    calls = [
        part["functionCall"]
        for chunk in chunks
        for part in chunk["candidates"][0].get("content", {}).get("parts", [])
        if "functionCall" in part
    ]
    assert [(c["id"], c["name"], c["args"]) for c in calls] == [
        (b.id, b.name, b.input.value) for b in _done_of(PARALLEL).tool_uses()
    ]


def _done_of(path: Any, provider: str | None = None) -> NormalizedResponse:
    done = _events(path, provider)[-1]
    assert isinstance(done, ResponseDone)
    return done.response


def _done_event(response: NormalizedResponse) -> list[laminate.Event]:
    return [ResponseStart(response.id, response.model, response.provider), ResponseDone(response)]


def test_gemini_usage_counts_the_thoughts_apart() -> None:
    usage = Usage(
        input_tokens=10,
        output_tokens=50,
        cache_read_tokens=4,
        reasoning_tokens=30,
        input_includes_cache=True,
    )
    response = NormalizedResponse("r", "m", "openai", [], StopReason.END_TURN, usage)
    last = sse_payloads(encode(_done_event(response), "gemini"))[-1]
    assert last["usageMetadata"] == {
        "promptTokenCount": 10,
        "candidatesTokenCount": 20,
        "thoughtsTokenCount": 30,
        "cachedContentTokenCount": 4,
        "totalTokenCount": 60,
    }
    assert last["responseId"] == "r"
    assert last["modelVersion"] == "m"


@pytest.mark.parametrize(
    ("stop", "provider", "written"),
    [
        (StopReason.MAX_TOKENS.with_raw("length"), "openai", "MAX_TOKENS"),
        (StopReason.REFUSAL.with_raw("refusal"), "anthropic", "SAFETY"),
        (StopReason.unknown("eos_token"), "openai", "OTHER"),
        (StopReason.unknown("MALFORMED_FUNCTION_CALL"), "gemini", "MALFORMED_FUNCTION_CALL"),
        (StopReason.TOOL_USE.with_raw("tool_calls"), "openai", "STOP"),
    ],
)
def test_gemini_finish_reasons(stop: StopReason, provider: str, written: str) -> None:
    response = NormalizedResponse("r", "m", provider, [], stop, Usage())
    last = sse_payloads(encode(_done_event(response), "gemini"))[-1]
    assert last["candidates"][0]["finishReason"] == written


def _signed(response: NormalizedResponse) -> list[tuple[str, str]]:
    return [
        (type(block).__name__, block.signature)
        for block in response.content
        if isinstance(block, Text | Reasoning | ToolUse) and block.signature
    ]


def test_gemini_signatures_stay_on_their_blocks() -> None:
    path = FIXTURES / "gemini" / "thinking-signatures.sse"
    signed = _signed(_done_of(path, "gemini"))
    assert signed
    back = laminate.collect_sync([encode(_events(path, "gemini"), "gemini")], "gemini")
    assert _signed(back) == signed
    foreign = encode(_events(path, "gemini"), "anthropic")
    for _, signature in signed:
        assert signature.encode() not in foreign


def test_google_genai_reads_every_chunk() -> None:
    types = pytest.importorskip("google.genai.types")
    known = {reason.value for reason in types.FinishReason}
    read = 0
    for source in COMPLETE:
        response = _done(source)
        stop = response.stop_reason
        payloads = sse_payloads(encode(events_of(source) or [], "gemini"))
        with warnings.catch_warnings():
            # An unknown value Gemini itself sent is written back as it was: this SDK
            # warns and keeps it, or (with older pydantic) refuses it.
            warnings.filterwarnings("ignore", ".* is not a valid FinishReason")
            try:
                chunks = [types.GenerateContentResponse.model_validate(p) for p in payloads]
            except ValueError:
                assert response.provider == "gemini", source.name
                assert stop.is_unknown, source.name
                assert stop.raw not in known, source.name
                # ...as it refuses the recording's own value (a test server's FAKE_ENUM).
                with pytest.raises(ValueError, match="finishReason"):
                    types.GenerateContentResponse.model_validate(
                        {"candidates": [{"finishReason": stop.raw}]}
                    )
                continue
        read += 1
        parts = [
            part
            for chunk in chunks
            for candidate in chunk.candidates or []
            if candidate.content is not None
            for part in candidate.content.parts or []
        ]
        text = "".join(p.text or "" for p in parts if not p.thought)
        thought = "".join(p.text or "" for p in parts if p.thought)
        calls = [
            (p.function_call.id, p.function_call.name, p.function_call.args)
            for p in parts
            if p.function_call is not None
        ]
        assert text == response.text(), source.name
        assert thought == "".join(b.text for b in response.content if isinstance(b, Reasoning))
        assert calls == [(b.id, b.name, b.input.value) for b in response.tool_uses()]
        assert chunks[-1].candidates
        assert chunks[-1].candidates[0].finish_reason is not None
    assert read >= len(COMPLETE) - 1


# -- Cohere ----------------------------------------------------------------------------------


def sse_events(data: bytes) -> list[tuple[str | None, Any]]:
    decoder = SSEDecoder()
    found = decoder.feed(data) + decoder.close()
    return [(f.event, None if f.data == "[DONE]" else json.loads(f.data)) for f in found]


def test_cohere_numbers_content_and_calls_apart() -> None:
    found = sse_events(encode(_events(PARALLEL), "cohere"))
    assert found[-1] == (None, None)  # data: [DONE], as Cohere ends
    assert all(event == payload["type"] for event, payload in found[:-1])
    kinds = [(p["type"], p.get("index")) for _, p in found[:-1]]
    assert kinds[0] == ("message-start", None)
    assert ("content-start", 0) in kinds
    starts = [i for kind, i in kinds if kind == "tool-call-start"]
    assert starts == [0, 1]
    end = found[-2][1]
    assert end["type"] == "message-end"
    assert end["delta"]["finish_reason"] == "TOOL_CALL"
    usage = _done_of(PARALLEL).usage
    tokens = {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens}
    assert end["delta"]["usage"] == {"billed_units": tokens, "tokens": tokens}


def test_cohere_keeps_its_own_billed_units() -> None:
    path = FIXTURES / "cohere" / "text.sse"
    sent = _done_of(path, "cohere").usage.raw["billed_units"]
    end = sse_events(encode(_events(path, "cohere"), "cohere"))[-2][1]
    assert end["delta"]["usage"]["billed_units"] == sent


def _plan_events() -> list[laminate.Event]:
    """A Cohere answer with a tool plan, whose plan block starts with its id."""
    events = _events(FIXTURES / "cohere" / "parallel-tool-calls.sse", "cohere")
    plan = next(
        e.index for e in events if isinstance(e, BlockEnd) and isinstance(e.block, Reasoning)
    )
    return [
        BlockStart(plan, Reasoning("", id="tool_plan"))
        if isinstance(e, BlockStart) and e.index == plan
        else e
        for e in events
    ]


def test_cohere_writes_the_tool_plan_as_tool_plan_deltas() -> None:
    events = _plan_events()
    done = events[-1]
    assert isinstance(done, ResponseDone)
    plan = done.response.content[0]
    assert isinstance(plan, Reasoning)
    assert plan.id == "tool_plan"
    data = encode(events, "cohere")
    found = sse_events(data)
    deltas = [p["delta"]["message"]["tool_plan"] for _, p in found if p and "plan" in p["type"]]
    assert "".join(deltas) == plan.text
    assert not any(p and p["type"] == "content-start" for _, p in found)
    back = laminate.collect_sync([data], "cohere")
    assert back.content[0] == plan
    assert back.tool_uses() == done.response.tool_uses()


PLANNED = [
    s
    for s in COMPLETE
    if any(isinstance(b, Reasoning) and b.id == "tool_plan" for b in _done(s).content)
]


@pytest.mark.parametrize("source", PLANNED, ids=[s.name for s in PLANNED])
def test_cohere_recorded_tool_plans_come_back_as_plans(source: Source) -> None:
    events = events_of(source) or []
    starts = [e.block for e in events if isinstance(e, BlockStart)]
    assert any(isinstance(b, Reasoning) and b.id == "tool_plan" for b in starts)
    back = laminate.collect_sync([encode(events, "cohere")], "cohere")
    plans = [b for b in _done(source).content if isinstance(b, Reasoning)]
    assert [b for b in back.content if isinstance(b, Reasoning)] == plans


def test_cohere_writes_other_reasoning_as_thinking() -> None:
    path = FIXTURES / "anthropic" / "thinking.sse"
    found = sse_events(encode(_events(path), "cohere"))
    starts = [
        p["delta"]["message"]["content"] for _, p in found if p and p["type"] == "content-start"
    ]
    assert starts[0] == {"type": "thinking", "thinking": ""}
    assert not any(p and p["type"] == "tool-plan-delta" for _, p in found)


# -- Bedrock ---------------------------------------------------------------------------------


def test_botocore_reads_every_message_and_checks_every_crc() -> None:
    eventstream = pytest.importorskip("botocore.eventstream")
    for source in COMPLETE:
        data = encode(events_of(source) or [], "bedrock")
        buffer = eventstream.EventStreamBuffer()
        buffer.add_data(data)
        names = []
        for message in buffer:  # raises on a bad prelude or message CRC
            assert message.headers[":message-type"] == "event"
            assert message.headers[":content-type"] == "application/json"
            json.loads(message.payload)
            names.append(message.headers[":event-type"])
        assert names[0] == "messageStart", source.name
        assert names[-2:] == ["messageStop", "metadata"], source.name
    flipped = bytearray(encode(_events(PARALLEL), "bedrock"))
    flipped[40] ^= 1
    buffer = eventstream.EventStreamBuffer()
    buffer.add_data(bytes(flipped))
    with pytest.raises(eventstream.ChecksumMismatch):
        list(buffer)


def test_bedrock_messages_are_the_framing_writers_bytes() -> None:
    payload = '{"contentBlockIndex":0,"delta":{"text":"héllo"}}'.encode()
    headers = {
        ":event-type": "contentBlockDelta",
        ":content-type": "application/json",
        ":message-type": "event",
    }
    assert bedrock_write_stream._event("contentBlockDelta", payload) == encode_message(
        headers, payload
    )


def test_bedrock_signatures_only_to_bedrock() -> None:
    path = FIXTURES / "bedrock" / "reasoning.eventstream"
    signature = _done_of(path, "bedrock").reasoning()[0].signature
    assert signature
    assert signature.encode() in encode(_events(path, "bedrock"), "bedrock")
    thinking = FIXTURES / "anthropic" / "thinking.sse"
    anthropic_signature = _done_of(thinking).reasoning()[0].signature
    assert anthropic_signature
    assert anthropic_signature.encode() not in encode(_events(thinking), "bedrock")


# -- real clients on loopback ----------------------------------------------------------------

RECORDINGS = [
    "anthropic/parallel-tool-calls",
    "openai/parallel-tool-calls",
    "gemini/thinking-signatures",
    "bedrock/parallel-tools",
    "cohere/parallel-tool-calls",
]


def _recorded(name: str) -> NormalizedResponse:
    provider, stem = name.split("/")
    path = next(
        p
        for p in (FIXTURES / provider).iterdir()
        if p.name.startswith(stem + ".") and p.name.endswith(STREAM_SUFFIXES)
    )
    return _done_of(path, provider)


@pytest.mark.parametrize("name", RECORDINGS)
def test_google_genai_client_reads_laminate_serve_as_gemini(name: str) -> None:
    pytest.importorskip("uvicorn")
    genai = pytest.importorskip("google.genai")
    types = genai.types
    want = _recorded(name)
    with mock_server(FIXTURES, as_format="gemini") as url:
        options = types.HttpOptions(base_url=url, headers={"x-laminate-fixture": name})
        client = genai.Client(api_key="test", http_options=options)
        chunks = list(client.models.generate_content_stream(model="m", contents="hi"))
    parts = [
        part
        for chunk in chunks
        for candidate in chunk.candidates or []
        if candidate.content is not None
        for part in candidate.content.parts or []
    ]
    assert "".join(p.text or "" for p in parts if not p.thought) == want.text()
    calls = [
        (p.function_call.id, p.function_call.name, p.function_call.args)
        for p in parts
        if p.function_call is not None
    ]
    assert calls == [(b.id, b.name, b.input.value) for b in want.tool_uses()]
    assert chunks[-1].candidates[0].finish_reason == "STOP"


@pytest.mark.parametrize("name", RECORDINGS)
def test_boto3_client_reads_laminate_serve_as_bedrock(name: str) -> None:
    pytest.importorskip("uvicorn")
    boto3 = pytest.importorskip("boto3")
    want = _recorded(name)
    with mock_server(FIXTURES, as_format="bedrock") as url:
        client = boto3.client(
            "bedrock-runtime",
            endpoint_url=url,
            region_name="us-east-1",
            aws_access_key_id="test",
            aws_secret_access_key="test",
        )

        def fixture_header(request: Any, **_: Any) -> None:
            request.headers["x-laminate-fixture"] = name

        client.meta.events.register("before-sign.bedrock-runtime.ConverseStream", fixture_header)
        answer = client.converse_stream(modelId="m", messages=[])
        events = list(answer["stream"])
    text: list[str] = []
    calls: dict[int, list[Any]] = {}
    stop = usage = None
    for event in events:
        if "contentBlockStart" in event:
            start = event["contentBlockStart"]
            tool = start["start"]["toolUse"]
            calls[start["contentBlockIndex"]] = [tool["toolUseId"], tool["name"], ""]
        elif "contentBlockDelta" in event:
            delta = event["contentBlockDelta"]
            if "text" in delta["delta"]:
                text.append(delta["delta"]["text"])
            elif "toolUse" in delta["delta"]:
                calls[delta["contentBlockIndex"]][2] += delta["delta"]["toolUse"]["input"]
        elif "messageStop" in event:
            stop = event["messageStop"]["stopReason"]
        elif "metadata" in event:
            usage = event["metadata"]["usage"]
    assert "".join(text) == want.text()
    got = [(i, n, json.loads(a or "{}")) for i, n, a in calls.values()]
    assert got == [(b.id, b.name, b.input.value) for b in want.tool_uses()]
    assert stop == ("tool_use" if want.tool_uses() else "end_turn")
    assert usage is not None
    assert usage["outputTokens"] == (want.usage.output_tokens or 0)


# -- citations ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("provider", "citation"),
    [
        ("anthropic", {"type": "char_location", "cited_text": "Four", "document_index": 0}),
        ("bedrock", {"title": "doc", "location": {"documentChar": {"start": 0, "end": 4}}}),
    ],
)
def test_citations_go_back_to_the_text_block_they_follow(
    provider: str, citation: dict[str, Any]
) -> None:
    unknown = laminate.Unknown("citation", laminate.FlexValue(citation))
    response = NormalizedResponse(
        "r", "m", provider, [Text("Four legs."), unknown], StopReason.END_TURN, Usage()
    )
    events: list[laminate.Event] = [
        ResponseStart("r", "m", provider),
        BlockStart(0, Text("")),
        BlockStart(1, unknown),
        BlockEnd(1, unknown),
        TextDelta(0, "Four legs."),
        BlockEnd(0, Text("Four legs.")),
        ResponseDone(response),
    ]
    stream = laminate.collect_sync([encode(events, provider)], provider)
    assert stream.content == response.content
    body = laminate.encode_response(response, provider)
    assert laminate.normalize(json.dumps(body).encode(), provider).content == response.content
    # Another API has no place for them: the text alone.
    other = laminate.collect_sync([encode(events, "openai")], "openai")
    assert other.content == [Text("Four legs.")]


# -- the AI SDK's sources ----------------------------------------------------------------------


def _doc(media_type: str, title: str = "Lease") -> dict[str, str]:
    return {"type": "source-document", "mediaType": media_type, "title": title}


def _web(url: str, title: str | None = None) -> dict[str, str]:
    return {"type": "source-url", "url": url} | ({"title": title} if title else {})


PDF, TEXT = "application/pdf", "text/plain"


@pytest.mark.parametrize(
    ("provider", "block_type", "data", "chunks"),
    [
        # A URL, wherever each API puts it.
        (
            "openai",
            "citation",
            {"type": "url_citation", "url_citation": {"url": "https://b.ex"}},
            [_web("https://b.ex")],
        ),
        (
            "openai-responses",
            "citation",
            {"type": "url_citation", "url": "https://a.ex", "title": "A"},
            [_web("https://a.ex", "A")],
        ),
        (
            "bedrock",
            "citation",
            {"title": "W", "location": {"web": {"url": "https://w.ex", "domain": "w"}}},
            [_web("https://w.ex", "W")],
        ),
        (
            "anthropic",
            "citation",
            {"type": "web_search_result_location", "url": "https://t.ex", "title": "T"},
            [_web("https://t.ex", "T")],
        ),
        (
            "anthropic",
            "citation",
            {"type": "search_result_location", "source": "https://s.ex/1", "title": "S"},
            [_web("https://s.ex/1", "S")],
        ),
        (
            "gemini",
            "groundingMetadata",
            {
                "groundingChunks": [
                    {"web": {"uri": "https://g.ex", "title": "g"}},
                    {"retrievedContext": {}},
                ]
            },
            [_web("https://g.ex", "g")],
        ),
        (
            "gemini",
            "citationMetadata",
            {"citationSources": [{"startIndex": 1, "uri": "https://c.ex"}, {"license": "mit"}]},
            [_web("https://c.ex")],
        ),
        (
            "gemini",
            "citationMetadata",
            {"citations": [{"uri": "https://v.ex", "title": "V"}]},
            [_web("https://v.ex", "V")],
        ),
        # A document of the request: by pages a PDF, otherwise text; untitled, its number.
        (
            "anthropic",
            "citation",
            {"type": "page_location", "document_index": 2, "document_title": "Lease"},
            [_doc(PDF)],
        ),
        (
            "anthropic",
            "citation",
            {"type": "content_block_location", "document_index": 3, "document_title": None},
            [_doc(TEXT, "Document 3")],
        ),
        (
            "anthropic",
            "citation",
            {"type": "search_result_location", "source": "kb://leases/7", "title": "Lease"},
            [_doc(TEXT)],
        ),
        (
            "bedrock",
            "citation",
            {
                "title": "Lease",
                "location": {"documentPage": {"documentIndex": 0, "start": 1, "end": 2}},
            },
            [_doc(PDF)],
        ),
        (
            "bedrock",
            "citation",
            {
                "title": "Lease",
                "location": {"documentChunk": {"documentIndex": 0, "start": 1, "end": 2}},
            },
            [_doc(TEXT)],
        ),
        (
            "bedrock",
            "citation",
            {"location": {"documentChar": {"start": 0, "end": 4}}},
            [_doc(TEXT, "Document")],
        ),
        # Cohere: its document sources, not its tool outputs.
        (
            "cohere",
            "citation",
            {
                "type": "TEXT_CONTENT",
                "sources": [
                    {"type": "tool", "id": "t:0", "tool_output": {"x": 1}},
                    {"type": "document", "id": "doc:1", "document": {"title": "Lease"}},
                    {"type": "document", "id": "doc:2", "document": {"snippet": "..."}},
                ],
            },
            [_doc(TEXT), _doc(TEXT, "doc:2")],
        ),
        # The Responses API's files: the type by the file's name, if it tells.
        (
            "openai-responses",
            "citation",
            {"type": "container_file_citation", "file_id": "cfile_1", "filename": "data.csv"},
            [_doc("text/csv", "data.csv") | {"filename": "data.csv"}],
        ),
        (
            "openai-responses",
            "citation",
            {"type": "file_path", "file_id": "file-9", "index": 3},
            [_doc("application/octet-stream", "file-9")],
        ),
        # Odd data: read for what it names, never an error.
        (
            "openai-responses",
            "citation",
            {"type": "file_citation", "file_id": "f", "filename": "//[x"},
            [_doc("application/octet-stream", "//[x") | {"filename": "//[x"}],
        ),
        (
            "openai-responses",
            "citation",
            {"type": "file_citation", "file_id": "f", "filename": "A.PDF"},
            [_doc(PDF, "A.PDF") | {"filename": "A.PDF"}],
        ),
        ("anthropic", "citation", {"type": ["char_location"], "document_index": 0}, []),
        (
            "anthropic",
            "citation",
            {"type": {"x": 1}, "url": "https://u.ex"},
            [_web("https://u.ex")],
        ),
        (
            "bedrock",
            "citation",
            {"title": 7, "location": {"documentChar": {"documentIndex": "0"}}},
            [_doc(TEXT, "Document")],
        ),
        # Nothing to name, or not this API's: no chunk.
        ("openai-responses", "citation", {"type": "file_citation", "filename": "x.pdf"}, []),
        ("anthropic", "citation", {"type": "future_location", "where": 1}, []),
        ("anthropic", "citation", ["not", "an", "object"], []),
        ("anthropic", "server_tool_use", {"url": "https://not.a.citation"}, []),
        ("openai", "citation", {"location": {"documentPage": {"documentIndex": 0}}}, []),
        ("ollama", "citation", {"url": "https://o.ex"}, []),
        ("", "citation", {"url": "https://o.ex"}, []),
    ],
)
def test_the_ai_sdk_lists_what_a_citation_cites(
    provider: str, block_type: str, data: Any, chunks: list[dict[str, str]]
) -> None:
    """Each API reads its own citations; each source is listed once, however often cited."""
    block = laminate.Unknown(block_type, laminate.FlexValue(data))
    writer = AISDKWriter()
    writer.start(ResponseStart("r", "m", provider))
    written = writer.block_end(0, block) + writer.block_end(1, block)  # the same source twice
    found = [json.loads(line.removeprefix(b"data: ")) for line in written.split(b"\n\n")[:-1]]
    assert [c.pop("sourceId") for c in found] == [f"source-{n + 1}" for n in range(len(chunks))]
    assert found == chunks


def test_the_ai_sdk_tells_sources_apart_by_what_names_them() -> None:
    """Documents without a number are told apart by their titles; a URL that reads like
    a document's key is still a URL of its own."""
    writer = AISDKWriter()
    writer.start(ResponseStart("r", "m", "anthropic"))
    cited = [
        {"type": "char_location", "document_title": "Lease"},
        {"type": "char_location", "document_title": "Deed"},
        {"type": "char_location", "document_title": "Lease"},
        {"type": "char_location", "document_index": 0, "document_title": "Lease"},
        {"type": "web_search_result_location", "url": "document:0"},
    ]
    written = b"".join(
        writer.block_end(n, laminate.Unknown("citation", laminate.FlexValue(data)))
        for n, data in enumerate(cited)
    )
    found = [json.loads(line.removeprefix(b"data: ")) for line in written.split(b"\n\n")[:-1]]
    assert [(c["type"], c.get("title"), c.get("url")) for c in found] == [
        ("source-document", "Lease", None),
        ("source-document", "Deed", None),
        ("source-document", "Lease", None),  # document 0: a number, so another key
        ("source-url", None, "document:0"),
    ]
