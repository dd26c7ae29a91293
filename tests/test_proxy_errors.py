"""Whose error it is, through the proxy: a backend's context overflow, its refusal of the
proxy's credentials and its broken stream, each as the client's own API says it.

Real loopback servers: the scripted backend (``tests/scripted_backend.py``) answers as
every API and is told what to fail by the model (``fail-overflow``, ``fail-overflow-mid``,
``fail-401``, ``fail-cut``, ...); the proxy runs in a thread; the client is each API's
official SDK (``tests/sdk_clients.py``), streamed and not. The proxy routes
``<scenario>-<api>`` to the backend of that API as ``<scenario>``, with the operator's
key.
"""

from __future__ import annotations

import gc
import json
import warnings
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import laminate
from laminate import (
    StreamEncoder,
    StreamNormalizer,
    TranslationError,
    translate_request,
)
from laminate._apis.registry import APIS
from laminate._core.response import ToolUse
from laminate.proxy import Backend, ProxyConfig, Timeouts, app, proxy_server

from .scripted_backend import ScriptedBackend, scripted_backend
from .sdk_clients import tool_loop

CLIENTS = tuple(name for name, record in APIS.items() if record.http is not None)
SCENARIOS = (
    "to",
    "fail-overflow",
    "fail-overflow-mid",
    "fail-overflow-vllm",
    "fail-overflow-llamacpp",
    "fail-401",
    "fail-403",
    "fail-cut",
    "fail-junk",
)
OPERATOR_KEY = "operator-key"


def _translates(source: str, target: str) -> bool:
    try:
        translate_request({"model": "m"}, source, target)
    except TranslationError as exc:
        return exc.reason != "unsupported"
    return True


def pairs() -> list[tuple[str, str]]:
    return [(c, t) for c in CLIENTS for t in CLIENTS if c == t or _translates(c, t)]


def _config(url: str) -> ProxyConfig:
    backends = tuple(
        Backend(
            api,
            url + APIS[api].http.base_path,  # type: ignore[union-attr]
            key=OPERATOR_KEY,
            models={f"{s}-{api}": s for s in SCENARIOS},
        )
        for api in CLIENTS
    )
    return ProxyConfig(
        backends=backends, timeouts=Timeouts(connect=10, read=60, idle=60), log=lambda _: None
    )


@pytest.fixture(scope="module")
def backend() -> Iterator[tuple[str, ScriptedBackend]]:
    # Paced, so that what comes after the first frames comes in a read of its own.
    with scripted_backend(pace=0.02) as found:
        yield found


@pytest.fixture(scope="module")
def proxy(backend: tuple[str, ScriptedBackend]) -> Iterator[str]:
    with proxy_server(_config(backend[0])) as url:
        yield url


def once(json_backend: str) -> None:
    if json_backend != "stdlib":
        pytest.skip("the proxy does not depend on the JSON backend; run once")


def raised(client: str, proxy: str, model: str, stream: bool) -> BaseException:
    """What ``client``'s SDK raises for a tool loop on ``model``."""
    try:
        tool_loop(client, proxy, model, "x", stream)
    except Exception as exc:
        return exc
    finally:
        # An SDK leaves the connection of a stream it failed to read to the garbage
        # collector (botocore's, for one): collected here, not in a later test.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ResourceWarning)
            gc.collect()
    raise AssertionError(f"{client} on {model}: no error")


def told(client: str, exc: BaseException) -> tuple[int | None, str, str]:
    """``(HTTP status, error type or code, message)`` as ``client``'s SDK hands them over
    (the status is ``None`` for an error inside a stream that began as a 200)."""
    if client in ("openai", "openai-responses"):
        import openai

        assert isinstance(exc, openai.APIError), repr(exc)
        status = exc.status_code if isinstance(exc, openai.APIStatusError) else None
        body = exc.body
        inner = body.get("error", body) if isinstance(body, dict) else {}
        kind = str(exc.code or exc.type or "")
        return status, kind, str(inner.get("message", exc.message))
    if client == "anthropic":
        import anthropic

        assert isinstance(exc, anthropic.APIStatusError), repr(exc)
        error = exc.body["error"] if isinstance(exc.body, dict) else {}
        status = None if exc.status_code == 200 else exc.status_code
        return status, error["type"], error["message"]
    if client == "gemini":
        from google.genai import errors

        assert isinstance(exc, errors.APIError), repr(exc)
        return exc.code, str(exc.status), str(exc.message)
    if client == "bedrock":
        from botocore.exceptions import ClientError, EventStreamError

        assert isinstance(exc, ClientError), repr(exc)
        error = exc.response["Error"]
        status = None
        if not isinstance(exc, EventStreamError):
            status = exc.response["ResponseMetadata"]["HTTPStatusCode"]
        return status, error["Code"], error["Message"]
    if client == "ollama":
        import ollama

        assert isinstance(exc, ollama.ResponseError), repr(exc)
        status = None if exc.status_code == -1 else exc.status_code
        return status, "", exc.error
    import cohere

    if isinstance(exc, cohere.core.ApiError):
        body = exc.body if isinstance(exc.body, dict) else {}
        inner = body.get("error", body)
        return exc.status_code, str(inner.get("type", "")), str(inner.get("message", ""))
    raise AssertionError(repr(exc))


def responses_stream_error(proxy: str, model: str) -> dict[str, Any]:
    """The ``error`` event of a streamed Responses answer (the openai SDK hands it over
    as an event, not an exception)."""
    body = {"model": model, "input": "x", "stream": True}
    answer = httpx.post(proxy + "/v1/responses", json=body, timeout=30)
    if answer.status_code != 200:
        return {"status": answer.status_code, **answer.json()["error"]}
    for block in answer.text.split("\n\n"):
        if block.startswith("event: error"):
            data: dict[str, Any] = json.loads(block.split("data: ", 1)[1])
            return data
    raise AssertionError(f"no error event in {answer.text[-300:]!r}")


def cohere_stream_error(proxy: str, model: str) -> tuple[int | None, str, str]:
    """The error of a streamed Cohere answer: its ``message-end`` with ``ERROR`` (the
    cohere SDK hands it over as an event, not an exception)."""
    body = {"model": model, "messages": [{"role": "user", "content": "x"}], "stream": True}
    answer = httpx.post(proxy + "/v2/chat", json=body, timeout=30)
    if answer.status_code != 200:
        body = answer.json()
        return answer.status_code, "", str(body.get("error", body)["message"])
    for block in answer.text.split("\n\n"):
        if block.startswith("event: message-end"):
            delta = json.loads(block.split("data: ", 1)[1])["delta"]
            return None, delta["finish_reason"], str(delta.get("error"))
    raise AssertionError(f"no message-end in {answer.text[-300:]!r}")


def seen(client: str, proxy: str, model: str, stream: bool) -> tuple[int | None, str, str]:
    """What ``client`` is told when its request for ``model`` fails."""
    if client == "openai-responses" and stream:
        error = responses_stream_error(proxy, model)
        return error.get("status"), str(error.get("code")), str(error.get("message"))
    if client == "cohere" and stream:
        return cohere_stream_error(proxy, model)
    return told(client, raised(client, proxy, model, stream))


# -- a context overflow reads as one --------------------------------------------------------


def reads_as_overflow(client: str, kind: str, message: str) -> bool:
    """Whether ``client``'s agents would read the error as a context overflow (each API's
    own way of saying it)."""
    lowered = message.lower()
    match client:
        case "anthropic":
            # Claude Code (the installed CLI, 2.1.x) lower-cases an API error's message
            # and looks for the words "prompt is too long" in it (or Bedrock's "input is
            # too long for requested model"); it then turns the answer into its
            # "Prompt is too long" message, which starts a compaction of the
            # conversation. `test_claude_code_matches_what_an_anthropic_client_is_told`
            # checks that the CLI still holds that test.
            return kind == "invalid_request_error" and lowered.startswith("prompt is too long")
        case "openai" | "openai-responses":
            return kind == "context_length_exceeded"
        case "gemini":
            return kind == "INVALID_ARGUMENT"
        case "bedrock":
            return kind.lower() == "validationexception" and lowered.startswith(
                "input is too long for requested model"
            )
        case "ollama":
            return lowered.startswith("the input length exceeds the context length")
        case _:
            return lowered.startswith("too many tokens")


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize(("client", "target"), pairs())
def test_a_backends_overflow_reaches_each_client_as_its_own(
    proxy: str, client: str, target: str, stream: bool, json_backend: str
) -> None:
    once(json_backend)
    status, kind, message = seen(client, proxy, f"fail-overflow-{target}", stream)
    if client == target:  # passed through as sent: the API's own overflow already
        assert status == 400
        return
    assert status == 400, (status, kind, message)
    assert reads_as_overflow(client, kind, message), (kind, message)


@pytest.mark.parametrize("server", ["vllm", "llamacpp"])
@pytest.mark.parametrize("client", [c for c in CLIENTS if c != "openai"])
def test_compatible_servers_overflows_are_recognised(
    proxy: str, client: str, server: str, json_backend: str
) -> None:
    once(json_backend)
    if not _translates(client, "openai"):
        pytest.skip(f"requests are not yet translated from {client} to openai")
    status, kind, message = seen(client, proxy, f"fail-overflow-{server}-openai", False)
    assert status == 400
    assert reads_as_overflow(client, kind, message), (kind, message)


MID_TARGETS = ("openai", "anthropic", "gemini", "bedrock", "ollama")


@pytest.mark.parametrize(
    ("client", "target"), [(c, t) for c, t in pairs() if c != t and t in MID_TARGETS]
)
def test_an_overflow_inside_the_stream_is_the_clients_in_stream_overflow(
    proxy: str, client: str, target: str, json_backend: str
) -> None:
    once(json_backend)
    status, kind, message = seen(client, proxy, f"fail-overflow-mid-{target}", True)
    # After the first bytes the API's in-stream error (no status); a backend whose first
    # frames and error come in one read is answered before the first byte (a 400).
    assert status in (None, 400), (status, kind, message)
    assert reads_as_overflow(client, kind, message), (kind, message)


def test_claude_code_matches_what_an_anthropic_client_is_told(json_backend: str) -> None:
    once(json_backend)
    from .agents import CLAUDE, pinned

    found = [a for a in pinned(CLAUDE) if a.missing() is None]
    if not found:
        pytest.skip("Claude Code is not installed (.ci/run installs it)")
    for agent in found:
        # The CLI is one JavaScript bundle (or a binary holding it): its overflow test
        # looks for the words below in the lower-cased message.
        files = [p for p in agent.prefix().rglob("*") if p.is_file() and p.name in CLI_FILES]
        assert files, f"no CLI bundle under {agent.prefix()}"
        text = b"".join(p.read_bytes() for p in files)
        assert b'includes("prompt is too long")' in text, agent.id
    told_ = APIS["anthropic"].http.overflow.message("The input token count (9) exceeds")  # type: ignore[union-attr]
    assert told_.lower().startswith("prompt is too long")


CLI_FILES = frozenset({"cli.js", "claude", "claude.exe"})


# -- errors say whose they are ---------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("status", [401, 403])
@pytest.mark.parametrize(("client", "target"), pairs())
def test_a_backend_refusing_the_operators_key_is_a_502_with_its_message(
    proxy: str, client: str, target: str, *, status: int, stream: bool, json_backend: str
) -> None:
    once(json_backend)
    if stream and status == 403:
        pytest.skip("the same path as 401's")
    got, _, message = seen(client, proxy, f"fail-{status}-{target}", stream)
    assert got == 502, (got, message)
    if client != "cohere":  # its SDK keeps no message for a 502
        assert f"scripted {status}" in message, message


SERVER_KINDS = {
    "openai": {"server_error"},
    "openai-responses": {"server_error"},
    "anthropic": {"api_error"},
    "gemini": {"INTERNAL", "UNAVAILABLE"},
    "bedrock": {"internalServerException", "InternalServerException"},
}


@pytest.mark.parametrize("failure", ["fail-cut", "fail-junk"])
@pytest.mark.parametrize(("client", "target"), pairs())
def test_a_broken_backend_stream_is_the_clients_server_error(
    proxy: str, client: str, target: str, failure: str, json_backend: str
) -> None:
    once(json_backend)
    if failure == "fail-junk" and client == target:
        pytest.skip("passed through as sent: the client reads the same bytes")
    if client in ("ollama", "cohere"):
        pytest.skip("no error types in its API")
    status, kind, message = seen(client, proxy, f"{failure}-{target}", True)
    assert status in (None, 502), (status, kind, message)
    if status == 502 and client in ("openai", "openai-responses"):
        return  # the status says it: the SDK's error has no type for a 502 it wrote
    assert kind in SERVER_KINDS[client], (status, kind, message)
    assert kind != "invalid_request_error"


# -- an Anthropic client sees each block stopped before the next starts ---------------------

# One Chat Completions chunk's delta: text, or a piece of tool call `n`'s arguments (the
# first piece of each call names it), so that calls interleave as parallel calls may.
_PIECE = st.one_of(
    st.tuples(st.just("text"), st.text(min_size=1, max_size=6)),
    st.tuples(st.integers(0, 2), st.text(alphabet="abc xyz", min_size=1, max_size=6)),
)


def _chat_stream(pieces: list[tuple[object, str]]) -> bytes:
    head = {"id": "c1", "object": "chat.completion.chunk", "model": "m"}
    chunks: list[dict[str, Any]] = []
    named: set[object] = set()
    # Each call's arguments are the JSON object {"a": <its pieces>}, closed at the end.
    closing = [(n, '"}') for n in dict.fromkeys(w for w, _ in pieces if w != "text")]
    for what, piece in [*pieces, *closing]:
        if what == "text":
            delta: dict[str, Any] = {"content": piece}
        else:
            call: dict[str, Any] = {"index": what, "function": {"arguments": piece}}
            if what not in named:
                named.add(what)
                call.update(id=f"call_{what}", type="function")
                call["function"]["name"] = f"tool_{what}"
                call["function"]["arguments"] = '{"a":"' + piece
            delta = {"tool_calls": [call]}
        chunks.append({**head, "choices": [{"index": 0, "delta": delta}]})
    stop = "tool_calls" if named else "stop"
    chunks.append({**head, "choices": [{"index": 0, "delta": {}, "finish_reason": stop}]})
    return b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks) + (
        b"data: [DONE]\n\n"
    )


def _wire_events(body: bytes) -> list[dict[str, Any]]:
    return [
        json.loads(frame.split(b"data: ", 1)[1])
        for frame in body.split(b"\n\n")
        if b"data: " in frame
    ]


@settings(max_examples=300, deadline=None)
@given(st.lists(_PIECE, max_size=14))
def test_anthropic_blocks_are_stopped_in_order_and_keep_every_byte(
    pieces: list[tuple[object, str]],
) -> None:
    source = StreamNormalizer("openai")
    events = source.feed(_chat_stream(pieces)) + source.close()
    sent = source.response
    assert sent is not None
    encoder = StreamEncoder("anthropic")
    body = b"".join(map(encoder.encode, events)) + encoder.close()
    # One block open at a time: each stopped before the next starts, in index order.
    open_now: int | None = None
    started: list[int] = []
    for frame in _wire_events(body):
        if frame["type"] == "content_block_start":
            assert open_now is None, f"block {frame['index']} starts while {open_now} is open"
            open_now = frame["index"]
            started.append(frame["index"])
        elif frame["type"] == "content_block_delta":
            assert frame["index"] == open_now
        elif frame["type"] == "content_block_stop":
            assert frame["index"] == open_now
            open_now = None
    assert open_now is None
    assert started == list(range(len(started)))
    # Read back: the same text, the same calls with every byte of their arguments.
    back = StreamNormalizer("anthropic")
    back.feed(body)
    back.close()
    got = back.response
    assert got is not None
    assert got.text() == sent.text()
    calls = [(c.id, c.name, c.input.value) for c in sent.content if isinstance(c, ToolUse)]
    assert len(calls) == len({w for w, _ in pieces if w != "text"})
    assert [(c.id, c.name, c.input.value) for c in got.content if isinstance(c, ToolUse)] == calls


# -- usage where the client's API carries it; an id on every answer ------------------------

# A request of each API that streams when asked ("{model}": the model).
REQUESTS: dict[str, tuple[str, str, dict[str, Any]]] = {
    "openai": (
        "/v1/chat/completions",
        "/v1/chat/completions",
        {"messages": [{"role": "user", "content": "hi"}]},
    ),
    "openai-responses": ("/v1/responses", "/v1/responses", {"input": "hi"}),
    "anthropic": (
        "/v1/messages",
        "/v1/messages",
        {"max_tokens": 9, "messages": [{"role": "user", "content": "hi"}]},
    ),
    "ollama": ("/api/chat", "/api/chat", {"messages": [{"role": "user", "content": "hi"}]}),
    "gemini": (
        "/v1beta/models/{model}:generateContent",
        "/v1beta/models/{model}:streamGenerateContent?alt=sse",
        {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]},
    ),
    "cohere": ("/v2/chat", "/v2/chat", {"messages": [{"role": "user", "content": "hi"}]}),
    "bedrock": (
        "/model/{model}/converse",
        "/model/{model}/converse-stream",
        {"messages": [{"role": "user", "content": [{"text": "hi"}]}]},
    ),
}


def ask(proxy: str, api: str, model: str, stream: bool, **more: Any) -> httpx.Response:
    whole, streamed, body = REQUESTS[api]
    path = streamed if stream else whole
    if "{model}" in path:
        data = {**body, **more}
    else:
        data = {"model": model, **body, "stream": stream, **more}
    answer = httpx.post(proxy + path.format(model=model), json=data, timeout=30)
    assert answer.status_code == 200, answer.text
    return answer


def _chunks(answer: httpx.Response) -> list[dict[str, Any]]:
    return [json.loads(line[6:]) for line in answer.text.splitlines() if line.startswith("data: {")]


@pytest.mark.parametrize("target", [t for t in CLIENTS if t != "openai"])
def test_a_chat_client_gets_usage_in_its_stream_only_when_it_asked(
    proxy: str, target: str, json_backend: str
) -> None:
    once(json_backend)
    if not _translates("openai", target):
        pytest.skip(f"requests are not yet translated from openai to {target}")
    plain = _chunks(ask(proxy, "openai", f"to-{target}", True))
    assert plain
    assert not [c for c in plain if c.get("usage")]
    asked = _chunks(
        ask(proxy, "openai", f"to-{target}", True, stream_options={"include_usage": True})
    )
    usage = [c for c in asked if c.get("usage")]
    assert len(usage) == 1
    assert usage[0]["choices"] == []
    assert usage[0]["usage"]["completion_tokens"] == 7


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("client", [c for c in CLIENTS if c != "ollama"])
def test_every_answer_has_an_id_when_the_backend_gives_none(
    proxy: str, client: str, stream: bool, json_backend: str
) -> None:
    once(json_backend)
    if not _translates(client, "ollama"):
        pytest.skip(f"requests are not yet translated from {client} to ollama")
    answer = ask(proxy, client, "to-ollama", stream)
    if client == "bedrock":  # Converse names no answer id; the request id is a header
        return
    if stream:
        reader = StreamNormalizer(client, content_type=answer.headers["content-type"])
        reader.feed(answer.content)
        reader.close()
        assert reader.response is not None
        assert reader.response.id, answer.text[:300]
    else:
        assert laminate.normalize(answer.content, client).id, answer.text[:300]
    # Other clients' streams carry usage always (only Chat Completions asks for it).
    if stream and client != "openai":
        assert reader.response is not None
        assert reader.response.usage.output_tokens == 7


# -- the same on every event loop (the app in process, the SDKs' async clients) -----------


async def _async_told(client: str, asgi: Any, model: str, stream: bool) -> Any:
    import anthropic
    import httpx2  # the SDKs' HTTP client
    import openai

    messages: Any = [{"role": "user", "content": "x"}]
    try:
        if client == "anthropic":
            http2 = httpx2.AsyncClient(transport=httpx2.ASGITransport(app=asgi))
            claude = anthropic.AsyncAnthropic(
                base_url="http://proxy", api_key="k", http_client=http2, max_retries=0
            )
            if stream:
                async with claude.messages.stream(
                    model=model, max_tokens=9, messages=messages
                ) as events:
                    await events.get_final_message()
            else:
                await claude.messages.create(model=model, max_tokens=9, messages=messages)
        else:
            http = httpx2.AsyncClient(transport=httpx2.ASGITransport(app=asgi))
            chat = openai.AsyncOpenAI(
                base_url="http://proxy/v1", api_key="k", http_client=http, max_retries=0
            )
            if stream:
                async with chat.chat.completions.stream(model=model, messages=messages) as events:
                    await events.get_final_completion()
            else:
                await chat.chat.completions.create(model=model, messages=messages)
    except Exception as exc:
        return told(client, exc)
    finally:
        # The SDK leaves the stream it failed to read to the garbage collector.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ResourceWarning)
            gc.collect()
    raise AssertionError(f"{client} on {model}: no error")


# The SDKs do not close the async generators of a stream that failed; trio warns when it
# finalizes them.
@pytest.mark.filterwarnings("ignore:Async generator:ResourceWarning")
@pytest.mark.anyio
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("client", ["anthropic", "openai"])
async def test_errors_are_told_alike_on_every_event_loop(
    backend: tuple[str, ScriptedBackend], client: str, stream: bool, json_backend: str
) -> None:
    once(json_backend)
    asgi = app(_config(backend[0]))
    async with asgi.router.lifespan_context(asgi):
        target = "gemini" if client == "openai" else "openai"
        status, kind, message = await _async_told(client, asgi, f"fail-overflow-{target}", stream)
        assert status == 400
        assert reads_as_overflow(client, kind, message), (kind, message)
        status, kind, message = await _async_told(client, asgi, f"fail-401-{target}", stream)
        assert status == 502
        assert "scripted 401" in message
        if stream:
            status, kind, message = await _async_told(client, asgi, f"fail-cut-{target}", True)
            assert status in (None, 502)
            assert kind in {*SERVER_KINDS[client], ""}
            if status is None:
                assert kind in SERVER_KINDS[client]
            status, kind, message = await _async_told(
                client, asgi, f"fail-overflow-mid-{target}", True
            )
            assert reads_as_overflow(client, kind, message), (kind, message)
