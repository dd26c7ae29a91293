"""The translating proxy (``laminate proxy``, ``laminate.proxy.app``), end to end.

Real loopback servers only: the scripted backend (``tests/scripted_backend.py``) answers
as every API, the proxy runs in a thread (``proxy_server``), and every API's official SDK
is the client (``tests/sdk_clients.py``). One proxy routes by model: ``to-<api>`` goes to
the backend of that API under the same name (so a same-API request passes through byte
for byte); ``fail-<what>-<api>`` goes to that backend as ``fail-<what>``, which scripts a
failure. The scripted backend refuses what the real API would refuse, and no test may
see a request refused.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, MutableMapping
from pathlib import Path
from typing import Any

import httpx
import pytest

from laminate import TranslationError, translate_request
from laminate._apis.registry import APIS
from laminate.proxy import (
    Backend,
    ProxyConfig,
    Timeouts,
    app,
    config_from_toml,
    estimate_tokens,
    proxy_server,
)

from .scripted_backend import ScriptedBackend, scripted_backend
from .sdk_clients import DESCRIPTION, KEY, SCHEMA, result_for, tool_loop
from .support import wait_for

CLIENTS = tuple(name for name, record in APIS.items() if record.http is not None)
FAILURES = ("fail-429", "fail-503", "fail-mid", "fail-garbage", "fail-slow", "fail-stall")
ROOT = Path(__file__).resolve().parent.parent


def _translates(source: str, target: str) -> bool:
    """Whether requests of ``source`` can be written for ``target`` in this build."""
    try:
        translate_request({"model": "m"}, source, target)
    except TranslationError as exc:
        return exc.reason != "unsupported"
    return True


def base_for(api: str, url: str) -> str:
    return url + APIS[api].http.base_path  # type: ignore[union-attr]


def backends(url: str, **keys: str) -> tuple[Backend, ...]:
    return tuple(
        Backend(
            api,
            base_for(api, url),
            key=keys.get(api.replace("-", "_")),
            models={
                f"to-{api}": f"to-{api}",
                f"bulk-{api}": "bulk",
                **{f"{f}-{api}": f for f in FAILURES},
            },
        )
        for api in CLIENTS
    )


@pytest.fixture(scope="module")
def aws_env() -> Iterator[None]:
    # The usual AWS environment, for the SigV4 signature of Bedrock backends without a key.
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
        patch.setenv("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")
        patch.setenv("AWS_REGION", "us-east-1")
        yield


@pytest.fixture(scope="module")
def backend(aws_env: None) -> Iterator[tuple[str, ScriptedBackend]]:
    with scripted_backend(pace=0.0) as found:
        yield found


@pytest.fixture(autouse=True)
def nothing_refused(
    backend: tuple[str, ScriptedBackend], request: pytest.FixtureRequest
) -> Iterator[None]:
    """Every request that reached the scripted backend is one its API's servers take (a
    test marked as failing for a known defect says so itself)."""
    record = backend[1].record
    before = len(record.refused)
    yield
    refused = record.refused[before:]
    if request.node.get_closest_marker("xfail") is None:
        assert not refused, "the backend's API refuses a request:\n" + "\n".join(refused)


@pytest.fixture(scope="module")
def lines() -> list[str]:
    return []


@pytest.fixture(scope="module")
def proxy(backend: tuple[str, ScriptedBackend], lines: list[str]) -> Iterator[str]:
    # Timeouts a loaded machine cannot reach: what these tests check is not time.
    config = ProxyConfig(
        backends=backends(backend[0]),
        timeouts=Timeouts(connect=10, read=60, idle=60),
        max_request_bytes=64 * 1024,
        log=lines.append,
    )
    with proxy_server(config) as url:
        yield url


@pytest.fixture(scope="module")
def hasty_proxy(backend: tuple[str, ScriptedBackend]) -> Iterator[str]:
    # Short timeouts, for the tests of what a timeout does.
    config = ProxyConfig(
        backends=backends(backend[0]),
        timeouts=Timeouts(connect=2, read=1.5, idle=1.5),
        max_request_bytes=64 * 1024,
    )
    with proxy_server(config) as url:
        yield url


def once(json_backend: str) -> None:
    if json_backend != "stdlib":
        pytest.skip("the proxy does not depend on the JSON backend; run once")


# -- every SDK through the proxy against every backend ----------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("target", CLIENTS)
@pytest.mark.parametrize("client", CLIENTS)
def test_every_sdk_plays_a_tool_loop_on_every_backend(
    proxy: str, client: str, target: str, stream: bool, json_backend: str
) -> None:
    once(json_backend)
    if client != target and not _translates(client, target):
        pytest.skip(f"requests are not yet translated from {client} to {target}")
    prompt = f"Paris {client}>{target} {stream}"
    args, text = tool_loop(client, proxy, f"to-{target}", prompt, stream)
    assert args == {"city": prompt}
    assert text == f"The tool said: {result_for(prompt)}"


# -- same API on both sides: byte for byte ------------------------------------------------

REQUESTS: dict[str, tuple[str, dict[str, Any]]] = {
    "openai": ("/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}]}),
    "openai-responses": ("/v1/responses", {"input": "hi"}),
    "anthropic": (
        "/v1/messages",
        {"max_tokens": 9, "messages": [{"role": "user", "content": "hi"}]},
    ),
    "ollama": ("/api/chat", {"messages": [{"role": "user", "content": "hi"}]}),
    "gemini": (
        "/v1beta/models/{model}:streamGenerateContent?alt=sse",
        {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]},
    ),
    "cohere": ("/v2/chat", {"messages": [{"role": "user", "content": "hi"}]}),
    "bedrock": (
        "/model/{model}/converse-stream",
        {"messages": [{"role": "user", "content": [{"text": "hi"}]}]},
    ),
}


def _request(api: str, model: str, stream: bool = True) -> tuple[str, bytes]:
    path, body = REQUESTS[api]
    if "{model}" in path:
        return path.format(model=model), json.dumps(body).encode()
    return path, json.dumps({"model": model, **body, "stream": stream}).encode()


@pytest.mark.parametrize("api", CLIENTS)
def test_same_api_passes_request_and_answer_through_byte_for_byte(
    proxy: str, backend: tuple[str, ScriptedBackend], api: str, json_backend: str
) -> None:
    once(json_backend)
    url, scripted = backend
    path, body = _request(api, f"to-{api}")
    headers = {"content-type": "application/json", "x-api-key": KEY, "x-custom": "kept"}
    through = httpx.post(proxy + path, content=body, headers=headers, timeout=10)
    seen = scripted.record.requests[-1]
    direct = httpx.post(url + path, content=body, headers=headers, timeout=10)
    assert through.status_code == direct.status_code == 200
    assert through.content == direct.content
    assert json.dumps(seen[2]).encode() == json.dumps(json.loads(body)).encode()
    assert seen[3]["x-custom"] == "kept"
    assert "x-api-key" not in seen[3]  # a client's key is never forwarded
    assert through.headers["content-type"] == direct.headers["content-type"]


# A body each API's servers refuse although its types take it: a message with no content.
EMPTY_TURN: dict[str, tuple[str, dict[str, Any]]] = {
    "openai": ("messages", {"role": "user", "content": []}),
    "openai-responses": ("input", {"role": "user", "content": []}),
    "anthropic": ("messages", {"role": "user", "content": []}),
    "gemini": ("contents", {"role": "user", "parts": []}),
    "bedrock": ("messages", {"role": "user", "content": []}),
    "cohere": ("messages", {"role": "user", "content": []}),
}


@pytest.mark.parametrize("api", sorted(EMPTY_TURN))
def test_a_request_the_backend_refuses_reaches_the_client_as_its_400(
    proxy: str, backend: tuple[str, ScriptedBackend], api: str, json_backend: str
) -> None:
    once(json_backend)
    # The scripted backend is as strict as the real API: the client sees the refusal.
    record = backend[1].record
    before = len(record.refused)
    path, body = _request(api, f"to-{api}", stream=False)
    sent = json.loads(body)
    key, turn = EMPTY_TURN[api]
    sent[key] = [turn, *(sent[key] if isinstance(sent[key], list) else [])]
    answer = httpx.post(proxy + path, json=sent, timeout=10)
    refused = record.refused[before:]
    del record.refused[before:]
    assert answer.status_code == 400, answer.text
    assert len(refused) == 1, refused
    assert "empty" in refused[0] or "at least 1 token" in refused[0], refused[0]


def _texts(chunks: list[dict[str, Any]]) -> str:
    parts = [p for c in chunks for p in c["candidates"][0]["content"].get("parts", [])]
    return "".join(p.get("text", "") for p in parts)


@pytest.mark.parametrize("target", CLIENTS)
def test_gemini_answers_in_the_framing_its_client_asked(
    proxy: str, target: str, lines: list[str], json_backend: str
) -> None:
    once(json_backend)
    # google-genai streams with `alt=sse`; without it Gemini streams one JSON array, and
    # `:generateContent` answers one complete body. The same from every backend.
    body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    base = f"{proxy}/v1beta/models/to-{target}"
    before = len(lines)
    array = httpx.post(base + ":streamGenerateContent", json=body, timeout=10)
    assert array.status_code == 200
    assert array.headers["content-type"].startswith("application/json")
    chunks = array.json()
    assert isinstance(chunks, list)
    assert len(chunks) > 1
    assert _texts(chunks) == "echo: hi"
    assert chunks[-1]["candidates"][0]["finishReason"] == "STOP"
    logged = json.loads(wait_for(lines, before + 1)[before])
    assert (logged["input_tokens"], logged["output_tokens"]) == (11, 7)
    sse = httpx.post(base + ":streamGenerateContent?alt=sse", json=body, timeout=10)
    assert sse.headers["content-type"].startswith("text/event-stream")
    frames = [json.loads(line[5:]) for line in sse.text.splitlines() if line.startswith("data:")]
    assert _texts(frames) == "echo: hi"
    whole = httpx.post(base + ":generateContent", json=body, timeout=10)
    assert whole.headers["content-type"].startswith("application/json")
    assert _texts([whole.json()]) == "echo: hi"
    assert whole.json()["candidates"][0]["finishReason"] == "STOP"
    assert len(wait_for(lines, before + 3)) == before + 3  # one line each
    failed = httpx.post(f"{proxy}/v1beta/models/fail-mid-{target}:streamGenerateContent", json=body)
    assert failed.status_code == 200
    assert "error" in failed.json()[-1]  # the array is still whole JSON
    assert len(wait_for(lines, before + 4)) == before + 4


def test_a_request_body_that_arrives_in_pieces_is_sent_on_whole(
    proxy: str, backend: tuple[str, ScriptedBackend], json_backend: str
) -> None:
    once(json_backend)
    # The client's disconnect is watched for only once its body is read: a watcher that
    # ran alongside the reading could take a piece of the body for itself.
    text = "y" * 60_000
    body = {
        "model": "to-anthropic",
        "max_tokens": 5,
        "messages": [{"role": "user", "content": text}],
    }
    content = json.dumps(body).encode()

    def slowly() -> Iterator[bytes]:
        for at in range(0, len(content), 6_000):
            yield content[at : at + 6_000]
            time.sleep(0.01)

    headers = {"content-length": str(len(content))}
    answer = httpx.post(proxy + "/v1/messages", content=slowly(), headers=headers, timeout=10)
    assert answer.status_code == 200
    assert backend[1].record.requests[-1][2]["messages"][0]["content"] == text


def test_bedrock_backends_are_signed_or_sent_their_key(
    backend: tuple[str, ScriptedBackend], json_backend: str
) -> None:
    once(json_backend)
    url, scripted = backend
    path, body = _request("bedrock", "to-bedrock")
    for key in (None, "bedrock-key"):
        config = ProxyConfig(backends=(Backend("bedrock", url, key=key),), log=lambda _: None)
        with proxy_server(config) as proxy:
            answer = httpx.post(proxy + path, content=body, timeout=10)
        assert answer.status_code == 200
        sent = scripted.record.requests[-1][3]["authorization"]
        if key is None:
            assert sent.startswith("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/")
            assert "/us-east-1/bedrock/aws4_request" in sent
        else:
            assert sent == "Bearer bedrock-key"


def test_backend_keys_go_in_each_apis_own_header(
    backend: tuple[str, ScriptedBackend], json_backend: str
) -> None:
    once(json_backend)
    url, scripted = backend
    expected = {
        "openai": ("authorization", "Bearer k-openai"),
        "anthropic": ("x-api-key", "k-anthropic"),
        "gemini": ("x-goog-api-key", "k-gemini"),
        "cohere": ("authorization", "Bearer k-cohere"),
    }
    keys = {api: f"k-{api}" for api in expected}
    config = ProxyConfig(backends=backends(url, **keys), log=lambda _: None)
    with proxy_server(config) as proxy:
        for api, (header, value) in expected.items():
            path, body = _request(api, f"to-{api}")
            answer = httpx.post(
                proxy + path, content=body, headers={"authorization": "Bearer client"}, timeout=10
            )
            assert answer.status_code == 200
            seen = scripted.record.requests[-1][3]
            assert seen[header] == value
            assert "client" not in json.dumps(seen)
    assert scripted.record.requests[-1][3].get("anthropic-version") is None  # cohere's request


@pytest.mark.parametrize("transport", ["picked", "sent"])
def test_a_backend_gets_the_headers_an_httpx_client_sends(
    backend: tuple[str, ScriptedBackend],
    json_backend: str,
    transport: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    once(json_backend)
    if transport == "sent":  # an httpx without the private method: the client's send
        monkeypatch.setattr(sys.modules["laminate._proxy.calls"], "_PICK_TRANSPORT", "_gone")
    # The request is built without AsyncClient.build_request: the same headers still go,
    # and the user info of a backend's URL is its basic auth, as httpx makes it.
    url, scripted = backend
    host = url.removeprefix("http://")
    config = ProxyConfig(
        backends=(Backend("openai", f"http://us%40er:p%3Ass@{host}/v1", model="to-openai"),),
        log=lambda _: None,
    )
    with proxy_server(config) as proxy:
        path, body = _request("anthropic", "m")
        answer = httpx.post(proxy + path, content=body, timeout=10)
    assert answer.status_code == 200
    seen = scripted.record.requests[-1][3]
    # The translated request as the proxy writes it: compact JSON, characters as they are.
    asked = scripted.record.requests[-1][2]
    sent = json.dumps(asked, separators=(",", ":"), ensure_ascii=False).encode()
    assert seen == {
        "host": host,
        "content-length": str(len(sent)),
        "accept": "*/*",
        "accept-encoding": "identity",
        "connection": "keep-alive",
        "user-agent": f"python-httpx/{httpx.__version__}",
        "content-type": "application/json",
        "authorization": "Basic dXNAZXI6cDpzcw==",  # us@er:p:ss
    }


# -- the proxy's own key --------------------------------------------------------------------

KEY_HEADERS = {
    "openai": {"authorization": "Bearer {key}"},
    "openai-responses": {"authorization": "Bearer {key}"},
    "anthropic": {"x-api-key": "{key}"},
    "ollama": {"authorization": "Bearer {key}"},
    "gemini": {"x-goog-api-key": "{key}"},
    "cohere": {"authorization": "Bearer {key}"},
    "bedrock": {"authorization": "Bearer {key}"},
}


@pytest.fixture(scope="module")
def guarded(backend: tuple[str, ScriptedBackend]) -> Iterator[str]:
    config = ProxyConfig(backends=backends(backend[0]), api_key="s3cret", log=lambda _: None)
    with proxy_server(config) as url:
        yield url


@pytest.mark.parametrize("api", CLIENTS)
def test_clients_must_present_the_proxy_key_in_their_apis_header(
    guarded: str, api: str, json_backend: str
) -> None:
    once(json_backend)
    path, body = _request(api, f"to-{api}")
    for key, status in (("s3cret", 200), ("wrong", 401), (None, 401)):
        headers = {"content-type": "application/json"}
        if key is not None:
            headers |= {k: v.format(key=key) for k, v in KEY_HEADERS[api].items()}
        answer = httpx.post(guarded + path, content=body, headers=headers, timeout=10)
        assert answer.status_code == status, (api, key)
        if status == 401:
            assert "key" in answer.text
    if api == "gemini":  # the `key=` query parameter too
        query = "&key=s3cret" if "?" in path else "?key=s3cret"
        answer = httpx.post(guarded + path + query, content=body, timeout=10)
        assert answer.status_code == 200


def test_the_sdks_raise_their_authentication_error_without_the_key(
    guarded: str, json_backend: str
) -> None:
    once(json_backend)
    import anthropic
    import openai

    with pytest.raises(anthropic.AuthenticationError):
        tool_loop("anthropic", guarded, "to-anthropic", "x", False)
    with pytest.raises(openai.AuthenticationError):
        tool_loop("openai", guarded, "to-openai", "x", True)


# -- failures reach each SDK as its own error ---------------------------------------------


def _sdk_error(api: str, status: int) -> tuple[type[BaseException], ...]:
    import anthropic
    import cohere
    import ollama
    import openai
    from botocore.exceptions import ClientError, EventStreamError
    from google.genai import errors

    by_status_openai = {429: openai.RateLimitError, 503: openai.InternalServerError}
    by_status_anthropic = {429: anthropic.RateLimitError, 503: anthropic.InternalServerError}
    by_status_cohere: dict[int, type[BaseException]] = {
        429: cohere.TooManyRequestsError,
        503: cohere.ServiceUnavailableError,
    }
    table: dict[str, tuple[type[BaseException], ...]] = {
        "openai": (by_status_openai.get(status, openai.APIStatusError),),
        "openai-responses": (by_status_openai.get(status, openai.APIStatusError),),
        "anthropic": (by_status_anthropic.get(status, anthropic.APIStatusError),),
        "gemini": (errors.ClientError if status < 500 else errors.ServerError,),
        "ollama": (ollama.ResponseError,),
        "bedrock": (ClientError, EventStreamError),
        "cohere": (by_status_cohere.get(status, cohere.core.ApiError),),
    }
    return table[api]


@pytest.mark.parametrize("status", [429, 503])
@pytest.mark.parametrize("target", CLIENTS)
@pytest.mark.parametrize("client", CLIENTS)
def test_a_backend_status_reaches_each_sdk_as_its_own_error(
    proxy: str, client: str, target: str, status: int, json_backend: str
) -> None:
    once(json_backend)
    if client != target and not _translates(client, target):
        pytest.skip(f"requests are not yet translated from {client} to {target}")
    with pytest.raises(_sdk_error(client, status)) as raised:
        tool_loop(client, proxy, f"fail-{status}-{target}", "x", True)
    assert str(status) in str(raised.value) or getattr(raised.value, "status_code", 0) == status


@pytest.mark.parametrize("api", CLIENTS)
def test_the_status_and_retry_after_are_kept(proxy: str, api: str, json_backend: str) -> None:
    once(json_backend)
    for target in CLIENTS:
        if api != target and not _translates(api, target):
            continue
        path, body = _request(api, f"fail-429-{target}")
        answer = httpx.post(proxy + path, content=body, timeout=10)
        assert answer.status_code == 429
        assert answer.headers["retry-after"] == "7"
        assert answer.json()  # the client API's error body


def test_failures_before_the_first_byte_are_statuses(hasty_proxy: str, json_backend: str) -> None:
    once(json_backend)
    import anthropic

    path, body = _request("anthropic", "fail-slow-anthropic")
    started = time.perf_counter()
    answer = httpx.post(hasty_proxy + path, content=body, timeout=10)
    assert answer.status_code == 504
    assert time.perf_counter() - started < 4
    assert answer.json()["type"] == "error"
    big = json.dumps(
        {
            "model": "to-anthropic",
            "max_tokens": 1,
            "messages": [{"role": "user", "content": "x" * 70_000}],
        }
    )
    answer = httpx.post(hasty_proxy + "/v1/messages", content=big, timeout=10)
    assert answer.status_code == 413
    assert answer.json()["error"]["type"] == "request_too_large"
    with pytest.raises(anthropic.APIStatusError) as raised:
        tool_loop("anthropic", hasty_proxy, "fail-slow-anthropic", "x", True)
    assert raised.value.status_code == 504


def test_an_unreachable_backend_is_a_502_in_the_clients_shape(json_backend: str) -> None:
    once(json_backend)
    import openai
    from google.genai import errors

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    dead = f"http://127.0.0.1:{port}"
    config = ProxyConfig(
        backends=tuple(Backend(api, base_for(api, dead)) for api in CLIENTS[:1]),
        log=lambda _: None,
    )
    with proxy_server(config) as proxy:
        with pytest.raises(openai.APIStatusError) as raised:
            tool_loop("openai", proxy, "m", "x", True)
        assert raised.value.status_code == 502
        if _translates("gemini", CLIENTS[0]):
            with pytest.raises(errors.ServerError):
                tool_loop("gemini", proxy, "m", "x", False)


def test_a_failure_mid_stream_is_the_apis_in_stream_error(proxy: str, json_backend: str) -> None:
    once(json_backend)
    import anthropic
    import openai

    with pytest.raises(anthropic.APIStatusError, match="overload"):
        tool_loop("anthropic", proxy, "fail-mid-anthropic", "x", True)
    with pytest.raises(openai.APIError, match="overload"):
        tool_loop("openai", proxy, "fail-mid-openai", "x", True)


def test_an_answer_that_cannot_be_read_is_a_502(proxy: str, json_backend: str) -> None:
    once(json_backend)
    for client in CLIENTS:
        target = next((t for t in CLIENTS if t != client and _translates(client, t)), None)
        if target is None:
            continue
        path, body = _request(client, f"fail-garbage-{target}")
        answer = httpx.post(proxy + path, content=body, timeout=10)
        assert answer.status_code == 502, (client, target)


@pytest.mark.parametrize("target", CLIENTS)
def test_a_long_answer_arrives_whole_in_every_clients_api(
    proxy: str, target: str, json_backend: str
) -> None:
    once(json_backend)
    from laminate import StreamNormalizer, TextDelta

    # Thousands of frames sent at once, read from the backend in reads of up to 64 KiB
    # and written on in pieces: every word arrives once, in order, whatever the pair. A
    # client of another API gets each read's deltas of one block as one (a few long
    # deltas); one of the same API gets every frame as sent.
    words = " ".join(f"w{n}" for n in range(6000))
    for client in ("anthropic", "openai"):
        path, _ = REQUESTS[client]
        body = {"model": f"bulk-{target}", "max_tokens": 9, "stream": True}
        body["messages"] = [{"role": "user", "content": words}]
        with httpx.stream("POST", proxy + path, json=body, timeout=60) as answer:
            assert answer.status_code == 200
            normalizer = StreamNormalizer(client)
            events = [e for chunk in answer.iter_raw() for e in normalizer.feed(chunk)]
            events += normalizer.close()
        texts = [event.text for event in events if isinstance(event, TextDelta)]
        assert "".join(texts) == f"echo: {words}", (client, target)
        if client == target:
            assert len(texts) > 2000, client
        else:
            assert len(texts) < 600, (client, target)


@pytest.mark.parametrize("target", ["anthropic", "openai"])
def test_the_backends_connection_is_kept_for_the_next_request(
    proxy: str, backend: tuple[str, ScriptedBackend], target: str, json_backend: str
) -> None:
    once(json_backend)
    # A translated answer is complete at its terminal event; the rest of the body is
    # still read, so that the connection goes back to the pool instead of being closed.
    scripted = backend[1]
    path, body = _request("anthropic", f"to-{target}")
    with httpx.Client(timeout=10) as client:
        for _ in range(3):
            assert client.post(proxy + path, content=body).status_code == 200
    assert len(set(scripted.record.peers[-3:])) == 1


def test_a_request_the_backend_cannot_take_is_a_400_that_sdks_do_not_retry(
    backend: tuple[str, ScriptedBackend], monkeypatch: pytest.MonkeyPatch, json_backend: str
) -> None:
    once(json_backend)
    import anthropic
    import openai

    from laminate._core.errors import TranslationError as Refused

    # Every pair translates in this build: a pair that does not is played by a writer
    # that refuses, as one without a request writer would.
    def refuse(*_: Any, **__: Any) -> Any:
        raise Refused("requests of 'ollama' cannot be written yet", reason="unsupported")

    monkeypatch.setattr(sys.modules["laminate._proxy.calls"], "write_request", refuse)
    seen: list[str] = []
    url, scripted = backend
    before = len(scripted.record.requests)
    config = ProxyConfig(backends=(Backend("ollama", url),), log=seen.append)
    with proxy_server(config) as proxy:
        client = anthropic.Anthropic(base_url=proxy, api_key=KEY, max_retries=2)
        with pytest.raises(anthropic.BadRequestError) as raised:
            client.messages.create(
                model="m", max_tokens=9, messages=[{"role": "user", "content": "hi"}]
            )
        assert "the Ollama backend cannot take this request" in str(raised.value)
        body: Any = raised.value.body
        assert body["error"]["type"] == "invalid_request_error"
        chat = openai.OpenAI(base_url=proxy + "/v1", api_key=KEY, max_retries=2)
        with pytest.raises(openai.BadRequestError, match="the Ollama backend"):
            chat.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
    assert len(seen) == 2  # one request each: not retried
    assert [json.loads(line)["status"] for line in seen] == [400, 400]
    assert len(scripted.record.requests) == before  # nothing reached the backend


def test_a_request_that_cannot_be_translated_is_a_400_in_the_clients_shape(
    proxy: str, json_backend: str
) -> None:
    once(json_backend)
    body = {"model": "to-openai", "max_tokens": 9, "messages": "not a list"}
    answer = httpx.post(proxy + "/v1/messages", json=body, timeout=10)
    assert answer.status_code == 400
    assert answer.json()["error"]["type"] == "invalid_request_error"
    assert "the Chat Completions backend" in answer.json()["error"]["message"]


def _wait_for_disconnect(scripted: ScriptedBackend, before: int) -> None:
    """Until the scripted backend has seen one more `fail-stall` request close (3 s)."""
    deadline = time.monotonic() + 3
    while scripted.record.disconnects.count("fail-stall") == before:
        assert time.monotonic() < deadline, "the backend's request stayed open"
        time.sleep(0.01)


@pytest.mark.parametrize("target", ["anthropic", "openai"])
def test_a_backend_silent_past_the_idle_timeout_ends_the_stream_with_an_error(
    hasty_proxy: str, backend: tuple[str, ScriptedBackend], target: str, json_backend: str
) -> None:
    once(json_backend)
    # `fail-stall` sends its first chunks, then nothing: past the idle timeout (1.5 s
    # here) the client gets its API's in-stream error and the backend's request closes.
    scripted = backend[1]
    before = scripted.record.disconnects.count("fail-stall")
    path, body = _request("anthropic", f"fail-stall-{target}")
    started = time.monotonic()
    with httpx.stream("POST", hasty_proxy + path, content=body, timeout=10) as answer:
        assert answer.status_code == 200
        text = answer.read().decode()
    assert 1.4 < time.monotonic() - started < 4
    assert text.startswith("event: message_start")
    assert "event: error" in text
    _wait_for_disconnect(scripted, before)


# -- a client that leaves ---------------------------------------------------------------


@pytest.mark.parametrize("api", ["anthropic", "bedrock"])
def test_a_client_that_leaves_closes_the_backend_request(
    proxy: str, backend: tuple[str, ScriptedBackend], api: str, json_backend: str
) -> None:
    once(json_backend)
    scripted = backend[1]
    before = scripted.record.disconnects.count("fail-stall")
    path, body = _request(api, f"fail-stall-{api}")
    with (
        httpx.Client(timeout=10) as client,
        client.stream("POST", proxy + path, content=body) as answer,
    ):
        assert answer.status_code == 200
        next(answer.iter_raw())
    _wait_for_disconnect(scripted, before)


def test_the_app_answers_on_trio_too(
    backend: tuple[str, ScriptedBackend], json_backend: str
) -> None:
    once(json_backend)
    # On asyncio the client is watched by a bare task; on another event loop, by a task
    # group. The same answers either way.
    import trio

    asgi = app(ProxyConfig(backends=backends(backend[0]), log=lambda _: None))

    async def ask() -> list[httpx.Response]:
        transport = httpx.ASGITransport(app=asgi)
        async with (
            asgi.router.lifespan_context(asgi),
            httpx.AsyncClient(transport=transport, base_url="http://proxy") as client,
        ):
            return [
                await client.post("/v1/messages", content=_request("anthropic", f"to-{t}")[1])
                for t in ("anthropic", "openai")
            ]

    for answer in trio.run(ask):
        assert answer.status_code == 200
        assert answer.text.rstrip().endswith('data: {"type":"message_stop"}')


@pytest.mark.parametrize(
    ("client", "backend_api"), [("anthropic", "openai"), ("openai", "anthropic")]
)
def test_a_translated_answer_s_last_events_go_with_its_end(
    backend: tuple[str, ScriptedBackend], client: str, backend_api: str, json_backend: str
) -> None:
    once(json_backend)
    # The piece that completes the answer is written with the end of the body, in one
    # write: the client's last bytes do not wait for the close and the log's usage.
    asgi = app(ProxyConfig(backends=backends(backend[0]), log=lambda _: None))
    path, body = _request(client, f"bulk-{backend_api}")
    asked_for = json.loads(body)  # an answer of 400 words: longer than a first piece
    asked_for["messages"][0]["content"] = " ".join(f"w{n}" for n in range(400))
    body = json.dumps(asked_for).encode()
    sent: list[dict[str, Any]] = []

    async def ask() -> None:
        asked = [{"type": "http.request", "body": body, "more_body": False}]

        async def receive() -> dict[str, Any]:
            if asked:
                return asked.pop()
            await asyncio.Event().wait()  # the client stays until its answer ends
            raise AssertionError("never")

        async def send(message: MutableMapping[str, Any]) -> None:
            sent.append(dict(message))

        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": "POST",
            "scheme": "http",
            "path": path,
            "raw_path": path.encode(),
            "query_string": b"",
            "root_path": "",
            "headers": [(b"content-type", b"application/json"), (b"host", b"proxy")],
            "client": ("127.0.0.1", 50000),
            "server": ("127.0.0.1", 8080),
        }
        async with asgi.router.lifespan_context(asgi):
            await asgi(scope, receive, send)

    asyncio.run(ask())
    bodies = [m for m in sent if m["type"] == "http.response.body"]
    end = b"message_stop" if client == "anthropic" else b"[DONE]"
    assert sent[0]["status"] == 200
    assert bodies[-1].get("more_body", False) is False
    assert end in bodies[-1]["body"]
    assert not any(end in m["body"] for m in bodies[:-1])
    # The events before the end went on as they came: the first piece's alone.
    assert len(bodies) >= 2
    assert b"w0" in bodies[0]["body"]
    assert b"w399" in bodies[-1]["body"]


# -- the other endpoints, the log -----------------------------------------------------------


def test_models_lists_what_the_configuration_routes(proxy: str, json_backend: str) -> None:
    once(json_backend)
    import anthropic
    import openai

    listed = [m.id for m in openai.OpenAI(base_url=proxy + "/v1", api_key=KEY).models.list()]
    assert "to-openai" in listed
    assert "fail-429-bedrock" in listed
    page = anthropic.Anthropic(base_url=proxy, api_key=KEY).models.list()
    assert "to-anthropic" in [m.id for m in page.data]


# The backends whose API has a counting endpoint; the scripted backend counts
# 1000 + the user's text + 10 per tool, as read from that endpoint's request.
COUNTED = ("anthropic", "gemini", "openai-responses", "bedrock")


@pytest.mark.parametrize("target", CLIENTS)
def test_count_tokens_asks_the_backends_that_count_and_estimates_for_the_others(
    proxy: str,
    backend: tuple[str, ScriptedBackend],
    lines: list[str],
    target: str,
    json_backend: str,
) -> None:
    once(json_backend)
    import anthropic

    scripted = backend[1]
    client = anthropic.Anthropic(base_url=proxy, api_key=KEY, max_retries=0)
    before = len(scripted.record.requests)
    counted = client.messages.count_tokens(
        model=f"to-{target}",
        system="Be brief.",
        messages=[{"role": "user", "content": "x" * 400}],
        tools=[{"name": "get_weather", "description": DESCRIPTION, "input_schema": SCHEMA}],
    )
    logged = json.loads(lines[-1])
    assert logged["input_tokens"] == counted.input_tokens
    if target not in COUNTED:  # the documented estimate: a token per 4 characters of JSON
        assert 120 <= counted.input_tokens <= 200
        assert len(scripted.record.requests) == before
        return
    assert counted.input_tokens == 1000 + 400 + 10
    assert logged["error"] is None
    asked = scripted.record.requests[-1]
    assert "x-api-key" not in asked[3]  # the client's key stays here
    if target == "gemini":  # the system instruction and the tools are counted too
        request = asked[2]["generateContentRequest"]
        assert request["model"] == "models/to-gemini"
        assert "systemInstruction" in request
        assert "tools" in request
    if target == "bedrock":
        assert asked[1] == "/model/to-bedrock/count-tokens"
        assert asked[3]["authorization"].startswith("AWS4-HMAC-SHA256 ")
        assert "system" in asked[2]["input"]["converse"]


@pytest.mark.parametrize("failure", ["fail-503", "fail-garbage"])
@pytest.mark.parametrize("target", COUNTED)
def test_a_count_the_backend_cannot_give_is_estimated_and_logged_so(
    proxy: str, lines: list[str], target: str, failure: str, json_backend: str
) -> None:
    once(json_backend)
    secret = "prompt-text-that-must-not-be-logged "
    body = {"model": f"{failure}-{target}", "messages": [{"role": "user", "content": secret * 9}]}
    answer = httpx.post(proxy + "/v1/messages/count_tokens", json=body, timeout=10)
    assert answer.status_code == 200
    assert answer.json() == {"input_tokens": estimate_tokens(body)}
    logged = json.loads(lines[-1])
    assert logged["status"] == 200
    assert "estimated" in logged["error"]
    assert secret not in lines[-1]


def test_a_count_from_an_unreachable_backend_is_estimated(json_backend: str) -> None:
    once(json_backend)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    seen: list[str] = []
    config = ProxyConfig(backends=(Backend("gemini", f"http://127.0.0.1:{port}"),), log=seen.append)
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    with proxy_server(config) as proxy:
        answer = httpx.post(proxy + "/v1/messages/count_tokens", json=body, timeout=10)
    assert answer.json() == {"input_tokens": estimate_tokens(body)}
    assert "cannot be reached" in json.loads(seen[-1])["error"]


def test_each_request_logs_one_json_line_without_prompt_answer_or_key(
    proxy: str, lines: list[str], json_backend: str
) -> None:
    once(json_backend)
    secret = "prompt-text-that-must-not-be-logged"
    before = len(lines)
    tool_loop("anthropic", proxy, "to-anthropic", secret, True)
    time.sleep(0.1)
    logged = [json.loads(line) for line in lines[before:]]
    assert len(logged) == 2
    for entry in logged:
        assert entry["api"] == "anthropic"
        assert entry["backend"] == "anthropic"
        assert entry["client_model"] == "to-anthropic"
        assert entry["backend_model"] == "to-anthropic"
        assert entry["status"] == 200
        assert entry["ttfb_ms"] <= entry["duration_ms"]
        assert entry["input_tokens"] == 11
        assert entry["output_tokens"] == 7
    text = "\n".join(lines[before:])
    assert secret not in text
    assert "sunny" not in text
    assert KEY not in text


def test_a_toml_file_routes_several_backends(tmp_path: Path, json_backend: str) -> None:
    once(json_backend)
    path = tmp_path / "proxy.toml"
    path.write_text(
        'api_key_env = "PROXY_KEY"\n'
        "[timeouts]\nread = 30\n"
        '[[backend]]\napi = "openai"\nbase_url = "http://127.0.0.1:1/v1"\nmodel = "qwen3"\n'
        '[[backend]]\napi = "anthropic"\nbase_url = "http://127.0.0.1:2"\nkey_env = "AKEY"\n'
        'models = { "claude-x" = "claude-sonnet-4-5" }\n',
        encoding="utf-8",
    )
    config = config_from_toml(path, {"PROXY_KEY": "p", "AKEY": "a"})
    assert config.api_key == "p"
    assert config.timeouts.read == 30
    assert config.route("claude-x")[0].api == "anthropic"
    assert config.route("claude-x")[1] == "claude-sonnet-4-5"
    assert config.route("anything")[0].api == "openai"
    assert config.route("anything")[1] == "qwen3"
    assert "a" not in repr(config.backends[1]).split("key")[0] or "'a'" not in repr(config)


# -- load: 200 streams at once through two workers -----------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def two_workers(backend: tuple[str, ScriptedBackend]) -> Iterator[str]:
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    process = subprocess.Popen(
        [
            sys.executable, "-m", "laminate", "proxy",
            "--backend", f"anthropic:{backend[0]}",
            "--port", str(port), "--workers", "2",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(url + "/v1/models", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert process.poll() is None, "the proxy did not start"
            assert time.monotonic() < deadline, "the proxy did not start in time"
            time.sleep(0.1)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_200_streams_at_once_each_get_their_own_answer(two_workers: str, json_backend: str) -> None:
    once(json_backend)
    from laminate import collect

    async def one(client: httpx.AsyncClient, n: int) -> str:
        body = {
            "model": "m",
            "max_tokens": 50,
            "stream": True,
            "messages": [{"role": "user", "content": f"marker-{n}"}],
        }
        async with client.stream("POST", two_workers + "/v1/messages", json=body) as answer:
            assert answer.status_code == 200
            return (await collect(answer, "anthropic")).text()

    async def run() -> list[str]:
        limits = httpx.Limits(max_connections=None)
        async with httpx.AsyncClient(timeout=60, limits=limits) as client:
            return await asyncio.gather(*(one(client, n) for n in range(200)))

    texts = asyncio.run(run())
    assert texts == [f"echo: marker-{n}" for n in range(200)]
