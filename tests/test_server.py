"""The mock provider: a real uvicorn server on a loopback port chosen at run time,
queried with httpx, plus its recording-selection rules and body renderers."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, MutableMapping
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from laminate import (
    InvalidToolUse,
    LaminateError,
    NormalizedResponse,
    StreamNormalizer,
    collect,
    normalize,
)
from laminate._apis.registry import APIS
from laminate._cli.demo import ENDPOINTS as DEMO_ENDPOINTS
from laminate._cli.server import (
    DEMO_STREAMS,
    PROVIDERS,
    ROUTES,
    MockProvider,
    Recording,
    choose_recording,
    find_recordings,
    mock_server,
    model_turns,
    split_frames,
)

from .support import FIXTURES

ENDPOINTS = {route.provider: path for path, route in ROUTES.items()}
SUFFIX = {
    "openai": ".sse",
    "openai-responses": ".sse",
    "anthropic": ".sse",
    "ollama": ".ndjson",
    "gemini": ".sse",
    "cohere": ".sse",
    "bedrock": ".eventstream",
}


@pytest.fixture(scope="module")
def fixtures_url() -> Iterator[str]:
    with mock_server(FIXTURES) as url:
        yield url


@pytest.fixture(scope="module")
def demo_url() -> Iterator[str]:
    with mock_server() as url:
        yield url


@pytest.fixture(scope="module")
def http() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=10) as client:
        yield client


@pytest.fixture
def post(http: httpx.Client) -> Any:
    def post(url: str, path: str, body: Any, **headers: str) -> httpx.Response:
        return http.post(url + path, json=body, headers=headers)

    return post


def stream_bytes(provider: str, name: str, root: Path = FIXTURES) -> bytes:
    return (root / provider / (name + SUFFIX[provider])).read_bytes()


# -- streaming and not --------------------------------------------------------------------


@pytest.mark.parametrize("provider", sorted(ENDPOINTS))
def test_streaming_answers_the_recording_byte_for_byte(fixtures_url: str, provider: str) -> None:
    name = "parallel-function-calls" if provider == "openai-responses" else "parallel-tool-calls"
    with httpx.stream(
        "POST",
        fixtures_url + ENDPOINTS[provider],
        json={"model": name, "stream": True},
        timeout=10,
    ) as response:
        body = response.read()
    assert response.status_code == 200
    assert body == stream_bytes(provider, name)
    expected_type = "application/x-ndjson" if provider == "ollama" else "text/event-stream"
    assert response.headers["content-type"].startswith(expected_type)
    assert response.headers["x-laminate-fixture"] == f"{provider}/{name}"


@pytest.mark.parametrize("provider", sorted(ENDPOINTS))
def test_a_non_streaming_request_gets_a_complete_body(
    post: Any, fixtures_url: str, provider: str
) -> None:
    name = "parallel-function-calls" if provider == "openai-responses" else "parallel-tool-calls"
    answer = post(fixtures_url, ENDPOINTS[provider], {"model": name, "stream": False})
    assert answer.status_code == 200
    assert answer.headers["content-type"] == "application/json"
    from_body = normalize(answer.content)
    normalizer = StreamNormalizer(provider)
    normalizer.feed(stream_bytes(provider, name))
    normalizer.close()
    from_stream = normalizer.response
    assert from_stream is not None
    assert from_body.provider == provider
    assert from_body.content == from_stream.content
    assert from_body.stop_reason == from_stream.stop_reason
    assert from_body.usage == from_stream.usage


def test_a_body_file_is_served_as_it_is(post: Any, fixtures_url: str) -> None:
    answer = post(fixtures_url, "/v1/chat/completions", {"model": "text"})
    assert answer.content == (FIXTURES / "openai" / "text.body.json").read_bytes()


@pytest.mark.parametrize(
    ("path", "body", "streams"),
    [
        ("/api/chat", {"model": "text"}, True),  # Ollama streams unless told not to
        ("/api/chat", {"model": "text", "stream": False}, False),
        ("/v1/chat/completions", {"model": "text"}, False),
        ("/v1/messages", {"model": "text"}, False),
        ("/v1/responses", {"model": "text"}, False),
        ("/v1/messages", {"model": "text", "stream": True}, True),
    ],
)
def test_the_stream_field_and_its_default(
    post: Any, fixtures_url: str, path: str, body: dict[str, Any], streams: bool
) -> None:
    answer = post(fixtures_url, path, body)
    assert answer.status_code == 200
    assert (answer.headers["content-type"] != "application/json") is streams


def test_a_recording_that_ends_in_an_error_answers_with_that_error(
    post: Any, fixtures_url: str
) -> None:
    answer = post(fixtures_url, "/v1/messages", {"model": "error"})
    assert answer.status_code == 500  # overloaded: retryable
    assert answer.json() == {
        "type": "error",
        "error": {"type": "overloaded_error", "message": "Overloaded"},
    }
    answer = post(fixtures_url, "/api/chat", {"model": "error", "stream": False})
    assert answer.status_code == 400
    assert "out of memory" in answer.json()["error"]


def test_a_truncated_recording_has_no_complete_body(post: Any, fixtures_url: str) -> None:
    answer = post(fixtures_url, "/v1/chat/completions", {"model": "truncated"})
    assert answer.status_code == 500
    assert "has no complete answer" in answer.json()["error"]["message"]


# -- choosing a recording -------------------------------------------------------------------


def test_the_header_picks_the_recording(post: Any, fixtures_url: str) -> None:
    answer = post(
        fixtures_url,
        "/v1/messages",
        {"model": "text", "stream": True},
        **{"X-Laminate-Fixture": "thinking"},
    )
    assert answer.content == stream_bytes("anthropic", "thinking")


def test_an_unknown_fixture_name_is_a_provider_shaped_404(post: Any, fixtures_url: str) -> None:
    headers = {"X-Laminate-Fixture": "nope"}
    anthropic = post(fixtures_url, "/v1/messages", {}, **headers)
    assert anthropic.status_code == 404
    assert anthropic.json()["type"] == "error"
    assert anthropic.json()["error"]["message"] == "no recording named 'nope' (X-Laminate-Fixture)"
    openai = post(fixtures_url, "/v1/chat/completions", {}, **headers)
    assert openai.json()["error"]["type"] == "not_found_error"
    ollama = post(fixtures_url, "/api/chat", {}, **headers)
    assert ollama.json() == {"error": "no recording named 'nope' (X-Laminate-Fixture)"}


def test_the_model_picks_the_recording(post: Any, fixtures_url: str) -> None:
    answer = post(fixtures_url, "/v1/chat/completions", {"model": "usage", "stream": True})
    assert answer.content == stream_bytes("openai", "usage")


def test_the_turn_picks_the_recording(post: Any, demo_url: str) -> None:
    user = {"role": "user", "content": "hi"}
    conversations = {
        0: [user],
        1: [user, {"role": "assistant", "content": "x"}, {"role": "tool", "content": "y"}],
        5: [user, {"role": "assistant", "content": "x"}] * 5,  # past the end: the last one
    }
    names = {0: "1-tool-calls", 1: "2-answer", 5: "2-answer"}
    for turn, messages in conversations.items():
        answer = post(demo_url, "/v1/chat/completions", {"stream": True, "messages": messages})
        assert answer.headers["x-laminate-fixture"] == f"openai/{names[turn]}", turn
        assert answer.content == stream_bytes("openai", names[turn], DEMO_STREAMS)


@pytest.mark.parametrize(
    ("request_body", "turns"),
    [
        ({}, 0),
        ({"input": "a plain string"}, 0),
        ({"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]}, 0),
        # Chat Completions / Ollama: an assistant message and its tool results are one turn
        (
            {
                "messages": [
                    {"role": "user"},
                    {"role": "assistant", "tool_calls": []},
                    {"role": "tool"},
                    {"role": "tool"},
                ]
            },
            1,
        ),
        # Anthropic: tool results come back in a user message
        (
            {
                "messages": [
                    {"role": "user"},
                    {"role": "assistant"},
                    {"role": "user"},
                    {"role": "assistant"},
                    {"role": "user"},
                ]
            },
            2,
        ),
        # Responses: items without a role (function calls and their outputs) are the model's
        (
            {
                "input": [
                    {"role": "user", "content": "u"},
                    {"type": "function_call", "call_id": "c"},
                    {"type": "function_call_output", "call_id": "c"},
                    {"type": "message", "role": "developer"},
                    {"type": "reasoning"},
                ]
            },
            2,
        ),
    ],
)
def test_model_turns(request_body: dict[str, Any], turns: int) -> None:
    assert model_turns(request_body) == turns


def test_choose_recording_rules() -> None:
    recordings = [Recording(n, "openai", Path(f"{n}.sse")) for n in ("a", "b", "gpt-x")]
    two_turns = {"model": "zzz", "messages": [{"role": "assistant"}, {"role": "user"}]}
    assert choose_recording(recordings, two_turns).name == "b"
    assert choose_recording(recordings, {**two_turns, "model": "gpt-x"}).name == "gpt-x"
    assert choose_recording(recordings, {"model": "gpt-x"}, fixture="a").name == "a"
    with pytest.raises(LookupError):
        choose_recording(recordings, {}, fixture="../etc/passwd")


def test_find_recordings_sorted_by_name() -> None:
    names = [r.name for r in find_recordings(FIXTURES, "ollama")]
    assert names == sorted(names)
    assert "tool-call" in names
    assert find_recordings(FIXTURES / "nowhere", "ollama") == []


# -- other requests -------------------------------------------------------------------------


def test_the_listing(http: httpx.Client, fixtures_url: str) -> None:
    listing = http.get(fixtures_url + "/").json()
    assert set(listing) == set(PROVIDERS)
    assert set(ENDPOINTS) < set(PROVIDERS)
    assert "parallel-tools" in listing["bedrock"]
    assert "tool-call" in listing["anthropic"]


def test_unknown_path_wrong_method_and_bad_json(
    http: httpx.Client, post: Any, fixtures_url: str
) -> None:
    assert post(fixtures_url, "/v9/nowhere", {}).status_code == 404
    assert http.get(fixtures_url + "/v1/messages").status_code == 405
    bad = http.post(fixtures_url + "/v1/messages", content=b"{nope")
    assert bad.status_code == 400
    assert bad.json()["error"]["type"] == "invalid_request_error"


def test_an_empty_folder_is_a_404(post: Any, tmp_path: Path) -> None:
    with mock_server(tmp_path) as url:
        answer = post(url, "/v1/messages", {})
    assert answer.status_code == 404
    assert "no recordings in" in answer.json()["error"]["message"]


# -- pacing ---------------------------------------------------------------------------------


def test_pace_sends_frames_apart(tmp_path: Path) -> None:
    data = stream_bytes("ollama", "2-answer", DEMO_STREAMS)
    frames = split_frames(data, "ndjson")
    pace = 0.02
    with mock_server(pace=pace) as url:
        started = time.perf_counter()
        chunks = []
        with httpx.stream(
            "POST", url + "/api/chat", json={"model": "2-answer"}, timeout=10
        ) as response:
            chunks = list(response.iter_raw())
        elapsed = time.perf_counter() - started
    assert b"".join(chunks) == data
    assert len(chunks) > 1
    assert elapsed >= (len(frames) - 1) * pace


def test_split_frames_keeps_every_byte() -> None:
    sse = b"data: a\n\ndata: b\r\n\r\n: c\r\rdata: d\n\n\ndata: tail"
    assert split_frames(sse, "sse") == [
        b"data: a\n\n",
        b"data: b\r\n\r\n",
        b": c\r\r",
        b"data: d\n\n",
        b"\ndata: tail",
    ]
    assert split_frames(b'{"a":1}\n{"b":2}', "ndjson") == [b'{"a":1}\n', b'{"b":2}']


@pytest.mark.anyio
async def test_pacing_stops_when_the_client_goes_away() -> None:
    app = MockProvider(pace=0.01)
    sent: list[MutableMapping[str, Any]] = []
    request = json.dumps({"model": "1-tool-calls", "stream": True}).encode()
    messages = iter([{"type": "http.request", "body": request, "more_body": False}])

    async def receive() -> dict[str, Any]:
        message = next(messages, None)
        if message is not None:
            return message
        while len(sent) < 4:  # the client reads three frames, then hangs up
            await anyio.sleep(0.005)
        return {"type": "http.disconnect"}

    async def send(message: MutableMapping[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "POST", "path": "/v1/messages", "headers": []}
    with anyio.fail_after(5):
        await app(scope, receive, send)
    frames = split_frames(stream_bytes("anthropic", "1-tool-calls", DEMO_STREAMS), "sse")
    assert sent[0]["type"] == "http.response.start"
    assert 4 <= len(sent) < len(frames) // 2


# -- an agent's view: laminate over httpx over the mock ----------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize("provider", PROVIDERS)
async def test_collect_from_the_demo_streams(demo_url: str, provider: str) -> None:
    endpoint = DEMO_ENDPOINTS[provider]  # Gemini's and Bedrock's name the model in the path
    async with (
        httpx.AsyncClient(base_url=demo_url) as client,
        client.stream("POST", endpoint, json={"stream": True, "messages": []}) as http,
    ):
        response = await collect(http)  # provider detected from the URL path
    assert response.provider == provider
    assert [c.name for c in response.tool_uses()] == ["write_file", "run_command"]
    assert response.tool_uses()[0].input["path"].value == "slugify.py"
    assert response.reasoning()
    # Cohere answers a tool turn with its plan (a reasoning block), not with text; Gemini
    # with its thought summary alone, which does not name the file.
    said = response.text() or "".join(b.text for b in response.reasoning())
    assert "slugify.py" in said or (provider == "gemini" and said)


# -- complete bodies built from streams ----------------------------------------------------


def _complete(recording: Recording) -> NormalizedResponse | None:
    normalizer = StreamNormalizer(recording.provider)
    try:
        normalizer.feed(recording.stream.read_bytes())
        normalizer.close()
    except LaminateError:
        return None
    return normalizer.response


def _renderable() -> list[Any]:
    """Every recording that completes without a cut-off call (one that ends in an error
    is served as that error; a cut-off call has no complete-body form in every API)."""
    found = []
    for root in (FIXTURES, DEMO_STREAMS):
        for provider in PROVIDERS:
            for recording in find_recordings(root, provider):
                response = _complete(recording)
                if response is not None and not any(
                    isinstance(b, InvalidToolUse) for b in response.content
                ):
                    found.append(
                        pytest.param(recording, response, id=f"{provider}/{recording.name}")
                    )
    return found


@pytest.mark.parametrize(("recording", "from_stream"), _renderable())
def test_render_body_normalizes_like_the_stream(
    recording: Recording, from_stream: NormalizedResponse
) -> None:
    body = APIS[from_stream.provider].write_body(from_stream)
    json.dumps(body)  # plain JSON
    from_body = normalize(body)
    assert from_body.provider == recording.provider
    assert from_body.content == from_stream.content
    assert from_body.stop_reason == from_stream.stop_reason
    assert from_body.usage == from_stream.usage
