"""Claude Code's other ways in: the proxy serves Anthropic Messages on Bedrock's
InvokeModel (``/model/{id}/invoke``, ``/invoke-with-response-stream``) and on Vertex's
rawPredict (``.../publishers/anthropic/models/{m}:rawPredict``, ``:streamRawPredict``,
``count-tokens:rawPredict``), in front of a backend of any API.

The judges are the anthropic SDK's ``AnthropicBedrock`` and ``AnthropicVertex`` clients
(sync and async, on asyncio and trio), their base URL at the proxy: a two-turn tool loop,
streamed and not, against the strict scripted backend (tests/scripted_backend.py) of
each API, which refuses what the real API would refuse; and their errors. The wire
itself is checked too: the InvokeModelWithResponseStream answer is AWS's binary event
stream of ``chunk`` messages, each holding one Anthropic event in base64.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any, Final

import httpx
import pytest

from laminate import StreamNormalizer
from laminate._framing import EventStreamDecoder
from laminate._framing.writers import ChunkWriter
from laminate.proxy import Backend, ProxyConfig, Timeouts, proxy_server

from .scripted_backend import ScriptedBackend, scripted_backend
from .sdk_clients import DESCRIPTION, SCHEMA, result_for
from .support import wait_for

anthropic = pytest.importorskip("anthropic")
pytest.importorskip("botocore", reason="the AnthropicBedrock client reads its stream with it")

BACKENDS: Final = ("anthropic", "openai", "gemini", "bedrock")
WAYS: Final = ("bedrock", "vertex")
FAILURES: Final = ("fail-429", "fail-mid")
TOKEN: Final = "proxy-token"
REGION: Final = "us-east-1"
PROJECT: Final = "laminate-test"
# A Bedrock model id as Claude Code sends one (the SDK leaves its colon unquoted), and an
# inference profile's ARN (its slash quoted).
CLAUDE_ON_AWS: Final = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
PROFILE_ARN: Final = "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.x"
TOOLS: Final[list[Any]] = [
    {"name": "get_weather", "description": DESCRIPTION, "input_schema": SCHEMA}
]


def _base(api: str, url: str) -> str:
    return f"{url}/v1" if api == "openai" else url


@pytest.fixture(scope="module")
def aws_env() -> Iterator[None]:
    # For the SigV4 signatures: of the Bedrock backend, and of the signing client.
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
        patch.setenv("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")
        patch.setenv("AWS_REGION", REGION)
        patch.delenv("AWS_BEARER_TOKEN_BEDROCK", raising=False)
        patch.delenv("ANTHROPIC_BEDROCK_BASE_URL", raising=False)
        patch.delenv("ANTHROPIC_VERTEX_BASE_URL", raising=False)
        yield


@pytest.fixture(scope="module")
def backend(aws_env: None) -> Iterator[tuple[str, ScriptedBackend]]:
    with scripted_backend(pace=0.0) as found:
        yield found


@pytest.fixture(autouse=True)
def nothing_refused(
    backend: tuple[str, ScriptedBackend], request: pytest.FixtureRequest
) -> Iterator[None]:
    """Every request that reached the scripted backend is one its API's servers take."""
    record = backend[1].record
    before = len(record.refused)
    yield
    refused = record.refused[before:]
    assert not refused, "the backend's API refuses a request:\n" + "\n".join(refused)


def _config(url: str, key: str | None, lines: list[str] | None = None) -> ProxyConfig:
    backends = tuple(
        Backend(
            api,
            _base(api, url),
            models={
                f"to-{api}": f"to-{api}",
                **{f"{failure}-{api}": failure for failure in FAILURES},
                **(
                    {CLAUDE_ON_AWS: "to-anthropic", PROFILE_ARN: "to-anthropic"}
                    if api == "anthropic"
                    else {}
                ),
            },
        )
        for api in BACKENDS
    )
    return ProxyConfig(
        backends=backends,
        api_key=key,
        timeouts=Timeouts(connect=10, read=60, idle=60),
        max_request_bytes=64 * 1024,
        log=(lines.append if lines is not None else lambda _: None),
    )


@pytest.fixture(scope="module")
def lines() -> list[str]:
    return []


@pytest.fixture(scope="module")
def proxy(backend: tuple[str, ScriptedBackend], lines: list[str]) -> Iterator[str]:
    """The proxy without a key of its own: what a SigV4-signed client needs."""
    with proxy_server(_config(backend[0], None, lines)) as url:
        yield url


@pytest.fixture(scope="module")
def guarded(backend: tuple[str, ScriptedBackend]) -> Iterator[str]:
    """The proxy with a key: a client presents it as its bearer token."""
    with proxy_server(_config(backend[0], TOKEN)) as url:
        yield url


def once(json_backend: str) -> None:
    if json_backend != "stdlib":
        pytest.skip("the proxy does not depend on the JSON backend; run once")


# -- the clients ---------------------------------------------------------------------------


def _client(way: str, url: str, *, sync: bool = True, **options: Any) -> Any:
    """The SDK's client of ``way`` at the proxy ``url``, retries off; Bedrock's with the
    proxy's key as its bearer token unless told otherwise."""
    if way == "bedrock":
        kind = anthropic.AnthropicBedrock if sync else anthropic.AsyncAnthropicBedrock
        if not {"aws_access_key", "api_key"} & options.keys():
            options["api_key"] = TOKEN
        return kind(base_url=url, aws_region=REGION, max_retries=0, **options)
    kind = anthropic.AnthropicVertex if sync else anthropic.AsyncAnthropicVertex
    options.setdefault("access_token", TOKEN)
    return kind(
        base_url=f"{url}/v1", region="us-east5", project_id=PROJECT, max_retries=0, **options
    )


def _second_turn(messages: list[Any], first: Any) -> dict[str, Any]:
    use = next(block for block in first.content if block.type == "tool_use")
    assert use.name == "get_weather"
    assert first.stop_reason == "tool_use"
    args = dict(use.input)
    messages.append(
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": use.id, "name": use.name, "input": args}],
        }
    )
    messages.append(
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": use.id, "content": result_for(args["city"])}
            ],
        }
    )
    return args


def _text(message: Any) -> str:
    return "".join(block.text for block in message.content if block.type == "text")


def tool_loop(client: Any, model: str, prompt: str, stream: bool) -> tuple[dict[str, Any], str]:
    """A two-turn tool loop: ``(the call's arguments, the final text)``."""
    messages: list[Any] = [{"role": "user", "content": prompt}]

    def ask() -> Any:
        if stream:
            with client.messages.stream(
                model=model, max_tokens=256, messages=messages, tools=TOOLS
            ) as events:
                return events.get_final_message()
        return client.messages.create(model=model, max_tokens=256, messages=messages, tools=TOOLS)

    with client:
        args = _second_turn(messages, ask())
        return args, _text(ask())


async def async_tool_loop(
    client: Any, model: str, prompt: str, stream: bool
) -> tuple[dict[str, Any], str]:
    messages: list[Any] = [{"role": "user", "content": prompt}]

    async def ask() -> Any:
        if stream:
            async with client.messages.stream(
                model=model, max_tokens=256, messages=messages, tools=TOOLS
            ) as events:
                return await events.get_final_message()
        return await client.messages.create(
            model=model, max_tokens=256, messages=messages, tools=TOOLS
        )

    async with client:
        args = _second_turn(messages, await ask())
        return args, _text(await ask())


# -- a tool loop through each way in, on each backend --------------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("target", BACKENDS)
@pytest.mark.parametrize("way", WAYS)
def test_each_clouds_client_plays_a_tool_loop_on_every_backend(
    guarded: str, way: str, target: str, stream: bool, json_backend: str
) -> None:
    once(json_backend)
    prompt = f"Paris {way}>{target} {stream}"
    args, text = tool_loop(_client(way, guarded), f"to-{target}", prompt, stream)
    assert args == {"city": prompt}
    assert text == f"The tool said: {result_for(prompt)}"


@pytest.mark.anyio
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("target", ["anthropic", "openai"])
@pytest.mark.parametrize("way", WAYS)
async def test_the_async_clients_play_it_too(
    guarded: str, way: str, target: str, stream: bool, json_backend: str
) -> None:
    once(json_backend)
    prompt = f"Lyon {way}>{target} {stream}"
    client = _client(way, guarded, sync=False)
    args, text = await async_tool_loop(client, f"to-{target}", prompt, stream)
    assert args == {"city": prompt}
    assert text == f"The tool said: {result_for(prompt)}"


@pytest.mark.parametrize("model", [CLAUDE_ON_AWS, PROFILE_ARN])
def test_a_bedrock_model_id_or_arn_in_the_path_routes(
    proxy: str, backend: tuple[str, ScriptedBackend], model: str, json_backend: str
) -> None:
    once(json_backend)
    client = _client("bedrock", proxy, api_key="any")
    args, _ = tool_loop(client, model, "Oslo", stream=True)
    assert args == {"city": "Oslo"}
    assert backend[1].record.requests[-1][2]["model"] == "to-anthropic"


# -- what reaches the backend --------------------------------------------------------------


def test_the_request_is_unwrapped_into_the_apis_own(
    guarded: str, backend: tuple[str, ScriptedBackend], json_backend: str
) -> None:
    once(json_backend)
    scripted = backend[1]
    for way in WAYS:
        client = _client(way, guarded)
        with client:
            client.messages.create(
                model="to-anthropic",
                max_tokens=9,
                messages=[{"role": "user", "content": "hi"}],
                extra_headers={"anthropic-beta": "beta-one,beta-two"},
            )
        api, path, body, headers = scripted.record.requests[-1]
        # The Messages API's own request: the model named, the cloud's version gone, the
        # betas in their header, no key of the client's.
        assert (api, path) == ("anthropic", "/v1/messages"), way
        assert body["model"] == "to-anthropic"
        assert "anthropic_version" not in body
        assert "anthropic_beta" not in body
        assert "stream" not in body
        assert headers["anthropic-beta"] == "beta-one,beta-two"
        assert "authorization" not in headers
        assert "x-api-key" not in headers


def test_the_path_says_whether_the_answer_streams(
    proxy: str, backend: tuple[str, ScriptedBackend], json_backend: str
) -> None:
    once(json_backend)
    body = {
        "anthropic_version": "bedrock-2023-05-31",
        "max_tokens": 9,
        "messages": [{"role": "user", "content": "hi"}],
    }
    answer = httpx.post(f"{proxy}/model/to-openai/invoke", json=body, timeout=10)
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("application/json")
    assert answer.json()["content"] == [{"type": "text", "text": "echo: hi"}]
    assert backend[1].record.requests[-1][2].get("stream") in (None, False)
    answer = httpx.post(f"{proxy}/model/to-openai/invoke-with-response-stream", json=body)
    assert answer.headers["content-type"] == "application/vnd.amazon.eventstream"
    assert backend[1].record.requests[-1][2]["stream"] is True


# -- the binary event stream ---------------------------------------------------------------


@pytest.mark.parametrize("target", ["anthropic", "openai"])
def test_the_invoke_stream_is_chunk_messages_of_anthropic_events(
    proxy: str, target: str, json_backend: str
) -> None:
    once(json_backend)
    body = {
        "anthropic_version": "bedrock-2023-05-31",
        "max_tokens": 9,
        "messages": [{"role": "user", "content": "hi"}],
    }
    url = f"{proxy}/model/to-{target}/invoke-with-response-stream"
    content = httpx.post(url, json=body, timeout=10).content
    frames = EventStreamDecoder().feed(content)
    assert frames
    kinds = []
    for frame in frames:
        assert frame.event == "chunk"
        assert dict(frame.headers or {}) == {
            ":event-type": "chunk",
            ":content-type": "application/json",
            ":message-type": "event",
        }
        payload = json.loads(frame.data)
        assert list(payload) == ["bytes"]
        kinds.append(json.loads(base64.b64decode(payload["bytes"]))["type"])
    assert kinds[0] == "message_start"
    assert kinds[-1] == "message_stop"
    # laminate's own reader takes it as the Anthropic stream it holds.
    normalizer = StreamNormalizer("anthropic")
    normalizer.feed(content)
    normalizer.close()
    assert normalizer.response is not None
    assert normalizer.response.text() == "echo: hi"


def test_the_chunk_writer_takes_sse_split_anywhere() -> None:
    sse = (
        b'event: message_start\ndata: {"type":"message_start"}\n\n'
        b": a comment\n\n"
        b'event: ping\ndata: {"type": "ping"}\n\n'
        b'event: error\ndata: {"type":"error","error":{"type":"x","message":"m"}}\n\n'
        b'event: message_stop\ndata: {"type":"message_stop"}\n\n'
    )

    def error(event: str | None, data: str) -> tuple[str, str] | None:
        return ("someException", json.loads(data)["error"]["message"]) if event == "error" else None

    whole = ChunkWriter(error, "failedException")
    expected = whole.feed(sse) + whole.close()
    for size in (1, 2, 7, 50):
        writer = ChunkWriter(error, "failedException")
        pieces = [writer.feed(sse[at : at + size]) for at in range(0, len(sse), size)]
        assert b"".join(pieces) + writer.close() == expected
    frames = EventStreamDecoder().feed(expected)
    # The comment writes nothing; the error ends the stream as an exception message.
    assert [f.event for f in frames] == ["chunk", "chunk", "someException"]
    assert frames[-1].headers is not None
    assert frames[-1].headers[":message-type"] == "exception"
    assert json.loads(frames[-1].data) == {"message": "m"}
    broken = ChunkWriter(error, "failedException")
    frames = EventStreamDecoder().feed(broken.feed(b"data: " + b"\xff" * 3 + b"\n\n"))
    assert [f.event for f in frames] == ["failedException"]
    assert broken.feed(sse) == b""
    assert broken.close() == b""


# -- errors in each client's shape ---------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("target", ["anthropic", "openai"])
@pytest.mark.parametrize("way", WAYS)
def test_a_backend_status_is_the_clients_error(
    guarded: str, way: str, target: str, stream: bool, json_backend: str
) -> None:
    once(json_backend)
    with pytest.raises(anthropic.RateLimitError) as raised:
        tool_loop(_client(way, guarded), f"fail-429-{target}", "x", stream)
    response = raised.value.response
    assert response.status_code == 429
    assert response.headers["retry-after"] == "7"
    body = response.json()
    if way == "bedrock":  # AWS's shape: the message, the type in a header
        assert response.headers["x-amzn-errortype"] == "ThrottlingException"
        assert list(body) == ["message"]
        assert body["message"]
    else:  # Vertex passes Anthropic's own on
        assert body["type"] == "error"
        assert body["error"]["type"] == "rate_limit_error"


@pytest.mark.parametrize("target", ["anthropic", "openai"])
@pytest.mark.parametrize("way", WAYS)
def test_a_failure_mid_stream_is_the_clients_in_stream_error(
    proxy: str, way: str, target: str, json_backend: str
) -> None:
    once(json_backend)
    client = _client(way, proxy, api_key="any") if way == "bedrock" else _client(way, proxy)
    with pytest.raises(anthropic.APIStatusError, match="overload"):
        tool_loop(client, f"fail-mid-{target}", "x", True)


def test_a_failure_mid_stream_is_an_exception_message(proxy: str, json_backend: str) -> None:
    once(json_backend)
    body = {"max_tokens": 9, "messages": [{"role": "user", "content": "hi"}]}
    url = f"{proxy}/model/fail-mid-anthropic/invoke-with-response-stream"
    frames = EventStreamDecoder().feed(httpx.post(url, json=body, timeout=10).content)
    assert [f.event for f in frames[:-1]] == ["chunk"] * (len(frames) - 1)
    last = frames[-1]
    assert last.headers is not None
    assert last.headers[":message-type"] == "exception"
    assert last.event == "serviceUnavailableException"  # Anthropic's overloaded_error
    assert "overload" in json.loads(last.data)["message"].lower()


def test_a_request_that_is_not_json_is_refused_in_the_clouds_shape(
    proxy: str, json_backend: str
) -> None:
    once(json_backend)
    answer = httpx.post(f"{proxy}/model/to-openai/invoke", content=b"[1]", timeout=10)
    assert answer.status_code == 400
    assert answer.headers["x-amzn-errortype"] == "ValidationException"
    assert "JSON object" in answer.json()["message"]
    path = f"/v1/projects/{PROJECT}/locations/us-east5/publishers/anthropic/models/to-openai"
    answer = httpx.post(f"{proxy}{path}:rawPredict", content=b"{", timeout=10)
    assert answer.status_code == 400
    assert answer.json()["error"]["type"] == "invalid_request_error"


# -- the key -------------------------------------------------------------------------------


@pytest.mark.parametrize("way", WAYS)
def test_the_proxys_key_is_the_clients_bearer_token(
    guarded: str, way: str, json_backend: str
) -> None:
    once(json_backend)
    wrong: dict[str, Any] = {"api_key": "wrong"} if way == "bedrock" else {"access_token": "wrong"}
    with pytest.raises(anthropic.AuthenticationError) as raised:
        tool_loop(_client(way, guarded, **wrong), "to-anthropic", "x", False)
    if way == "bedrock":
        assert raised.value.response.headers["x-amzn-errortype"] == "UnrecognizedClientException"
        assert "key" in raised.value.response.json()["message"]


def test_a_sigv4_signed_client_needs_a_proxy_without_a_key(
    proxy: str, guarded: str, backend: tuple[str, ScriptedBackend], json_backend: str
) -> None:
    once(json_backend)
    keys: dict[str, Any] = {"aws_access_key": "AKIDCLIENT", "aws_secret_key": "client-secret"}
    # The proxy cannot check an AWS signature: with a key of its own it refuses one ...
    with pytest.raises(anthropic.AuthenticationError):
        tool_loop(_client("bedrock", guarded, **keys), "to-anthropic", "x", False)
    # ... and without, it takes the request; the signature never reaches the backend.
    args, _ = tool_loop(_client("bedrock", proxy, **keys), "to-anthropic", "Rome", True)
    assert args == {"city": "Rome"}
    headers = backend[1].record.requests[-1][3]
    assert "authorization" not in headers
    assert not any(name.startswith("x-amz-") for name in headers)


# -- counting, the log ---------------------------------------------------------------------


@pytest.mark.parametrize("target", ["anthropic", "gemini", "openai"])
def test_vertex_counts_tokens(
    guarded: str, backend: tuple[str, ScriptedBackend], target: str, json_backend: str
) -> None:
    once(json_backend)
    scripted = backend[1]
    before = len(scripted.record.requests)
    with _client("vertex", guarded) as client:
        counted = client.messages.count_tokens(
            model=f"to-{target}", messages=[{"role": "user", "content": "hello there"}]
        )
    assert isinstance(counted.input_tokens, int)
    assert counted.input_tokens > 0
    if target == "openai":  # no counting endpoint: estimated
        assert scripted.record.requests[before:] == []
        return
    # The backend's own count (the scripted one), asked as its API's count.
    assert counted.input_tokens == 1000 + len("hello there")
    _, path, body, _ = scripted.record.requests[-1]
    if target == "anthropic":  # the Messages API's own count, the cloud's fields gone
        assert path == "/v1/messages/count_tokens"
        assert body["model"] == "to-anthropic"
        assert "anthropic_version" not in body


def test_each_request_logs_its_line(proxy: str, lines: list[str], json_backend: str) -> None:
    once(json_backend)
    before = len(lines)
    tool_loop(_client("bedrock", proxy, api_key="any"), "to-gemini", "Bern", True)
    logged = [json.loads(line) for line in wait_for(lines, before + 2)[before:]]
    assert [(x["api"], x["backend"], x["backend_model"], x["status"]) for x in logged] == [
        ("anthropic", "gemini", "to-gemini", 200)
    ] * 2
    assert all(x["stream"] is True and x["output_tokens"] for x in logged)
