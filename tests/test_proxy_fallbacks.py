"""The proxy's retries, fallbacks and key pools: loopback backends scripted to fail in each
way (a closed port, 503s, a 429 with ``retry-after``, a stream cut short, a 400, a key
refused, every key rate limited), asked through the official SDKs with their own retries
off, on asyncio and trio; and the configuration's checks of names and fallbacks."""

from __future__ import annotations

import argparse
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from laminate._proxy.calls import _retry_after
from laminate._proxy.serve import _dump, _load
from laminate.proxy import (
    Backend,
    ConfigError,
    ProxyConfig,
    Retry,
    Timeouts,
    app,
    config_from_toml,
    proxy_server,
)

from .support import wait_for

QUICK = Retry(base=0.01, max=8)


@pytest.fixture(autouse=True)
def once(json_backend: str) -> None:
    if json_backend != "stdlib":
        pytest.skip("the proxy does not depend on the JSON backend; run once")


# -- a backend that fails as it is told ------------------------------------------------------


@dataclass
class Reply:
    """One scripted answer: a status with its headers and body, or the answer proper
    (``status`` 200, no ``body``), optionally cut after its first chunk."""

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes | None = None
    cut: bool = False


@dataclass
class Seen:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


class Script:
    """What a scripted backend answers, in turn (then the answer proper), and what it
    saw. ``by_key`` answers by the key a request carries instead."""

    def __init__(self) -> None:
        self.replies: list[Reply] = []
        self.by_key: dict[str, Reply] = {}
        self.seen: list[Seen] = []
        self.lock = threading.Lock()

    def next_reply(self, key: str) -> Reply:
        with self.lock:
            if key in self.by_key:
                return self.by_key[key]
            return self.replies.pop(0) if self.replies else Reply()

    def keys(self) -> list[str]:
        return [_key_of(seen.headers) for seen in self.seen]


def _key_of(headers: dict[str, str]) -> str:
    value = headers.get("authorization") or headers.get("x-api-key") or ""
    return value.removeprefix("Bearer ")


def _openai_answer(model: str, stream: bool) -> list[bytes]:
    head = {"id": "chatcmpl-1", "created": 0, "model": model}
    if not stream:
        body = {
            **head,
            "object": "chat.completion",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": "hello"},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4},
        }
        return [json.dumps(body).encode()]
    chunk = {**head, "object": "chat.completion.chunk"}
    frames = [
        {**chunk, "choices": [{"index": 0, "delta": {"role": "assistant", "content": "hel"}}]},
        {**chunk, "choices": [{"index": 0, "delta": {"content": "lo"}}]},
        {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
        {
            **chunk,
            "choices": [],
            "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4},
        },
    ]
    return [f"data: {json.dumps(frame)}\n\n".encode() for frame in frames] + [b"data: [DONE]\n\n"]


def _anthropic_answer(model: str, stream: bool) -> list[bytes]:
    message = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": "hello"}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 3, "output_tokens": 1},
    }
    if not stream:
        return [json.dumps(message).encode()]
    start = {**message, "content": [], "stop_reason": None}
    events = [
        ("message_start", {"type": "message_start", "message": start}),
        (
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
        ),
        (
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": "hel"},
            },
        ),
        (
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": "lo"},
            },
        ),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": 1},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
    return [f"event: {name}\ndata: {json.dumps(data)}\n\n".encode() for name, data in events]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    script: Script

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length", "0"))
        body = json.loads(self.rfile.read(length) or b"{}")
        headers = {k.lower(): v for k, v in self.headers.items()}
        script = self.server.script  # type: ignore[attr-defined]
        with script.lock:
            script.seen.append(Seen(self.path, headers, body))
        reply = script.next_reply(_key_of(headers))
        if reply.status != 200 or reply.body is not None:
            content = (
                reply.body
                or json.dumps(
                    {"error": {"type": "scripted", "message": f"scripted {reply.status}"}}
                ).encode()
            )
            self.send_response(reply.status)
            for name, value in {"content-type": "application/json", **reply.headers}.items():
                self.send_header(name, value)
            self.send_header("content-length", str(len(content)))
            self.end_headers()
            self.wfile.write(content)
            return
        stream = bool(body.get("stream"))
        model = str(body.get("model"))
        write = _anthropic_answer if self.path.startswith("/v1/messages") else _openai_answer
        pieces = write(model, stream)
        self.send_response(200)
        self.send_header("content-type", "text/event-stream" if stream else "application/json")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        for n, piece in enumerate(pieces):
            self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            self.wfile.flush()
            if reply.cut and n == 0:
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
        self.wfile.write(b"0\r\n\r\n")


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    script: Script

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that closed its connection (the proxy's pool, at its end)


@contextmanager
def scripted() -> Iterator[tuple[str, Script]]:
    """A loopback backend that answers as Chat Completions (``/v1/chat/completions``)
    and as Anthropic Messages (``/v1/messages``), as its :class:`Script` says."""
    server = _Server(("127.0.0.1", 0), _Handler)
    script = server.script = Script()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", script
    finally:
        server.shutdown()
        server.server_close()


def closed_port() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


@pytest.fixture
def first() -> Iterator[tuple[str, Script]]:
    with scripted() as found:
        yield found


@pytest.fixture
def second() -> Iterator[tuple[str, Script]]:
    with scripted() as found:
        yield found


@contextmanager
def proxy(*backends: Backend, retry: Retry = QUICK) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """The proxy for ``backends``, and its log lines as they are written."""
    lines: list[dict[str, Any]] = []
    config = ProxyConfig(
        backends=backends,
        timeouts=Timeouts(connect=5, read=30, idle=30),
        retry=retry,
        log=lambda line: lines.append(json.loads(line)),
    )
    with proxy_server(config) as url:
        yield url, lines


def openai_client(url: str) -> Any:
    import openai

    return openai.OpenAI(base_url=url + "/v1", api_key="client", max_retries=0)


def anthropic_client(url: str) -> Any:
    import anthropic

    return anthropic.Anthropic(base_url=url, api_key="client", max_retries=0)


def ask_openai(url: str, stream: bool = True, model: str = "m") -> tuple[str, httpx.Headers]:
    """The answer's text and headers, asked with the OpenAI SDK."""
    client = openai_client(url)
    with client:
        messages: Any = [{"role": "user", "content": "hi"}]
        if stream:
            with client.chat.completions.with_streaming_response.create(
                model=model, messages=messages, stream=True
            ) as raw:
                text = "".join(
                    chunk.choices[0].delta.content or "" for chunk in raw.parse() if chunk.choices
                )
                return text, raw.headers
        raw = client.chat.completions.with_raw_response.create(model=model, messages=messages)
        return raw.parse().choices[0].message.content or "", raw.headers


def ask_anthropic(url: str, stream: bool = True, model: str = "m") -> tuple[str, httpx.Headers]:
    """The answer's text and headers, asked with the Anthropic SDK."""
    client = anthropic_client(url)
    with client:
        messages: Any = [{"role": "user", "content": "hi"}]
        if stream:
            with client.messages.with_streaming_response.create(
                model=model, max_tokens=16, messages=messages, stream=True
            ) as raw:
                text = "".join(
                    event.delta.text
                    for event in raw.parse()
                    if event.type == "content_block_delta" and event.delta.type == "text_delta"
                )
                return text, raw.headers
        answer = client.messages.with_raw_response.create(
            model=model, max_tokens=16, messages=messages
        )
        message = answer.parse()
        return "".join(b.text for b in message.content if b.type == "text"), answer.headers


ASKS: dict[str, Callable[..., tuple[str, httpx.Headers]]] = {
    "openai": ask_openai,
    "anthropic": ask_anthropic,
}


# -- failures before the answer began -----------------------------------------------------


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
@pytest.mark.parametrize("client", ["openai", "anthropic"])
def test_a_closed_port_is_retried_then_falls_back_translated(
    second: tuple[str, Script], client: str, stream: bool
) -> None:
    spare_url, spare = second
    dead = Backend("openai", closed_port() + "/v1", name="local", retries=1, fallbacks=("cloud",))
    cloud = Backend("anthropic", spare_url, name="cloud", model="claude-spare", key="cloud-key")
    with proxy(dead, cloud) as (url, lines):
        text, headers = ASKS[client](url, stream)
        assert text == "hello"
        assert headers["x-laminate-backend"] == "cloud"
        [line] = wait_for(lines, 1)
    # The fallback was asked in its own API, for its own model, with its own key.
    [seen] = spare.seen
    assert seen.path == "/v1/messages"
    assert seen.body["model"] == "claude-spare"
    assert seen.headers["x-api-key"] == "cloud-key"
    assert line["backend"] == "cloud"
    assert line["backend_model"] == "claude-spare"
    assert (line["retries"], line["fallbacks"], line["status"]) == (1, 1, 200)


def test_an_unreachable_backend_without_fallback_is_a_502_after_its_retries() -> None:
    import anthropic

    dead = Backend("anthropic", closed_port(), name="gone", retries=2)
    with proxy(dead) as (url, lines):
        with pytest.raises(anthropic.APIStatusError) as raised:
            ask_anthropic(url)
        [line] = wait_for(lines, 1)
        # A count the backend cannot give is estimated; the answer still names it.
        body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        counted = httpx.post(url + "/v1/messages/count_tokens", json=body, timeout=10)
    assert raised.value.status_code == 502
    assert raised.value.response.headers["x-laminate-backend"] == "gone"
    assert (line["backend"], line["status"], line["retries"], line["fallbacks"]) == (
        "gone",
        502,
        2,
        0,
    )
    assert counted.status_code == 200
    assert counted.headers["x-laminate-backend"] == "gone"


def test_a_fallback_takes_the_models_it_maps(
    first: tuple[str, Script], second: tuple[str, Script]
) -> None:
    (main_url, main), (spare_url, spare) = first, second
    main.replies = [Reply(503)]
    backends = (
        Backend("openai", main_url + "/v1", models={"fast": "big"}, fallbacks=("openai-2",)),
        Backend("openai", spare_url + "/v1", models={"fast": "small"}, model="other"),
    )
    with proxy(*backends) as (url, lines):
        text, headers = ask_openai(url, model="fast")
    assert text == "hello"
    assert headers["x-laminate-backend"] == "openai-2"
    assert [s.body["model"] for s in main.seen] == ["big"]
    assert [s.body["model"] for s in spare.seen] == ["small"]
    assert wait_for(lines, 1)[0]["backend_model"] == "small"


@pytest.mark.parametrize("client", ["openai", "anthropic"])
def test_a_503_twice_is_retried_with_backoff(first: tuple[str, Script], client: str) -> None:
    backend_url, script = first
    script.replies = [Reply(503), Reply(502)]
    backend = Backend("openai", backend_url + "/v1", name="gpu", retries=2)
    with proxy(backend) as (url, lines):
        text, headers = ASKS[client](url)
        assert text == "hello"
        assert headers["x-laminate-backend"] == "gpu"
        [line] = wait_for(lines, 1)
    assert len(script.seen) == 3
    assert (line["backend"], line["retries"], line["fallbacks"]) == ("gpu", 2, 0)


def test_when_the_retries_are_spent_the_client_gets_the_last_failure(
    first: tuple[str, Script],
) -> None:
    import openai

    backend_url, script = first
    script.replies = [Reply(503), Reply(503, {"x-request-id": "req-2"})]
    backend = Backend("openai", backend_url + "/v1", retries=1)
    with proxy(backend) as (url, lines):
        with pytest.raises(openai.InternalServerError) as raised:
            ask_openai(url)
        [line] = wait_for(lines, 1)
    assert raised.value.status_code == 503
    assert raised.value.response.headers["x-request-id"] == "req-2"
    assert raised.value.response.headers["x-laminate-backend"] == "openai"
    assert len(script.seen) == 2
    assert (line["status"], line["retries"]) == (503, 1)


def test_a_429_waits_for_its_retry_after(first: tuple[str, Script]) -> None:
    backend_url, script = first
    script.replies = [Reply(429, {"retry-after": "1"})]
    backend = Backend("anthropic", backend_url, retries=1)
    with proxy(backend, retry=Retry(base=0, max=8)) as (url, lines):
        started = time.monotonic()
        text, _ = ask_anthropic(url)
        waited = time.monotonic() - started
        [line] = wait_for(lines, 1)
    assert text == "hello"
    assert waited >= 0.95
    assert len(script.seen) == 2
    assert line["retries"] == 1


def test_a_client_that_leaves_during_the_wait_is_not_tried_for_again(
    first: tuple[str, Script],
) -> None:
    backend_url, script = first
    script.replies = [Reply(503, {"retry-after": "1.5"})]
    with proxy(Backend("openai", backend_url + "/v1", retries=1)) as (url, lines):
        body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        with pytest.raises(httpx.ReadTimeout):
            httpx.post(url + "/v1/chat/completions", json=body, timeout=0.5)
        [line] = wait_for(lines, 1)
        time.sleep(1.5)
    assert len(script.seen) == 1
    assert (line["status"], line["disconnected"]) == (499, True)


def test_a_retry_after_longer_than_the_longest_wait_is_not_waited_for(
    first: tuple[str, Script], second: tuple[str, Script]
) -> None:
    import anthropic

    (main_url, main), (spare_url, spare) = first, second
    main.replies = [Reply(429, {"retry-after": "30"})] * 2
    with proxy(Backend("anthropic", main_url, retries=3)) as (url, _):
        started = time.monotonic()
        with pytest.raises(anthropic.RateLimitError) as raised:
            ask_anthropic(url)
        assert time.monotonic() - started < 5
    assert raised.value.response.headers["retry-after"] == "30"
    assert len(main.seen) == 1
    # With a fallback, it is asked at once.
    backends = (
        Backend("anthropic", main_url, retries=3, fallbacks=("spare",)),
        Backend("anthropic", spare_url, name="spare"),
    )
    with proxy(*backends) as (url, lines):
        text, headers = ask_anthropic(url)
        [line] = wait_for(lines, 1)
    assert (text, headers["x-laminate-backend"]) == ("hello", "spare")
    assert (len(main.seen), len(spare.seen)) == (2, 1)
    assert (line["retries"], line["fallbacks"]) == (0, 1)


@pytest.mark.parametrize("client", ["openai", "anthropic"])
def test_a_stream_cut_after_its_first_bytes_is_not_retried(
    first: tuple[str, Script], second: tuple[str, Script], client: str
) -> None:
    import anthropic
    import openai

    (main_url, main), (spare_url, spare) = first, second
    main.replies = [Reply(cut=True)]
    backends = (
        Backend("openai", main_url + "/v1", retries=3, fallbacks=("spare",)),
        Backend("openai", spare_url + "/v1", name="spare"),
    )
    errors = (openai.APIError, anthropic.APIError, httpx.HTTPError)
    with proxy(*backends) as (url, lines), pytest.raises(errors):
        ASKS[client](url)
    [line] = wait_for(lines, 1)
    assert (len(main.seen), len(spare.seen)) == (1, 0)
    assert line["status"] == 200
    assert line["error"]
    assert (line["backend"], line["retries"], line["fallbacks"]) == ("openai", 0, 0)


def test_a_stream_cut_reaches_the_client_as_its_in_stream_error(
    first: tuple[str, Script],
) -> None:
    backend_url, script = first
    script.replies = [Reply(cut=True)]
    body = {
        "model": "m",
        "max_tokens": 8,
        "stream": True,
        "messages": [{"role": "user", "content": "hi"}],
    }
    with proxy(Backend("openai", backend_url + "/v1", retries=2)) as (url, _):
        answer = httpx.post(url + "/v1/messages", json=body, timeout=10)
    assert answer.status_code == 200
    assert "event: error" in answer.text
    assert len(script.seen) == 1


@pytest.mark.parametrize("status", [400, 404, 422])
def test_a_client_error_is_never_retried(
    first: tuple[str, Script], second: tuple[str, Script], status: int
) -> None:
    import openai

    (main_url, main), (spare_url, spare) = first, second
    main.replies = [Reply(status)]
    backends = (
        Backend("openai", main_url + "/v1", retries=3, fallbacks=("spare",)),
        Backend("openai", spare_url + "/v1", name="spare"),
    )
    with proxy(*backends) as (url, lines):
        with pytest.raises(openai.APIStatusError) as raised:
            ask_openai(url, stream=False)
        [line] = wait_for(lines, 1)
    assert raised.value.status_code == status
    assert (len(main.seen), len(spare.seen)) == (1, 0)
    assert (line["status"], line["retries"], line["fallbacks"]) == (status, 0, 0)


# -- key pools ---------------------------------------------------------------------------------


def test_a_refused_key_is_set_aside_and_the_next_one_used(first: tuple[str, Script]) -> None:
    backend_url, script = first
    script.by_key["k1"] = Reply(401)
    backend = Backend("openai", backend_url + "/v1", keys=("k1", "k2", "k3"))
    with proxy(backend) as (url, lines):
        for _ in range(4):
            assert ask_openai(url)[0] == "hello"
        wait_for(lines, 4)
    # k1 refused once, then never again; k2 and k3 in turn.
    assert script.keys() == ["k1", "k2", "k3", "k2", "k3"]
    assert [line["retries"] for line in lines] == [1, 0, 0, 0]


def test_a_pool_whose_every_key_is_refused_answers_with_the_backends_refusal(
    first: tuple[str, Script],
) -> None:
    backend_url, script = first
    script.by_key = {"k1": Reply(403), "k2": Reply(401)}
    backend = Backend("anthropic", backend_url, keys=("k1", "k2"))
    with proxy(backend) as (url, _):
        body = {"model": "m", "max_tokens": 8, "messages": [{"role": "user", "content": "hi"}]}
        answer = httpx.post(url + "/v1/messages", json=body, timeout=10)
        assert answer.status_code >= 400  # the backend's own refusal, as relayed
        assert script.keys() == ["k1", "k2"]
        again = httpx.post(url + "/v1/messages", json=body, timeout=10)
    assert again.status_code == 502
    assert "refused every key" in again.json()["error"]["message"]
    assert len(script.seen) == 2  # not asked again


def test_a_pool_whose_every_key_is_rate_limited_is_a_429_with_the_soonest_retry_after(
    first: tuple[str, Script],
) -> None:
    import openai

    backend_url, script = first
    script.by_key = {
        "k1": Reply(429, {"retry-after": "50"}),
        "k2": Reply(429, {"retry-after": "20"}),
    }
    backend = Backend("openai", backend_url + "/v1", keys=("k1", "k2"), retries=2)
    with proxy(backend) as (url, lines):
        started = time.monotonic()
        with pytest.raises(openai.RateLimitError) as raised:
            ask_openai(url)
        assert time.monotonic() - started < 5
        assert raised.value.response.headers["retry-after"] == "20"
        assert raised.value.response.headers["x-laminate-backend"] == "openai"
        assert script.keys() == ["k1", "k2"]
        # Resting keys are not asked until their time is up.
        with pytest.raises(openai.RateLimitError) as raised:
            ask_openai(url)
        assert int(raised.value.response.headers["retry-after"]) in (19, 20)
        wait_for(lines, 2)
    assert len(script.seen) == 2
    assert [(line["status"], line["retries"]) for line in lines] == [(429, 1), (429, 0)]


def test_a_429_without_retry_after_rests_its_key_and_the_next_one_answers(
    first: tuple[str, Script],
) -> None:
    backend_url, script = first
    script.replies = [Reply(429)]
    backend = Backend("openai", backend_url + "/v1", keys=("k1", "k2"))
    with proxy(backend) as (url, _):
        for _ in range(3):
            assert ask_openai(url, stream=False)[0] == "hello"
    assert script.keys() == ["k1", "k2", "k2", "k2"]


def test_a_pool_at_rest_falls_back(first: tuple[str, Script], second: tuple[str, Script]) -> None:
    (main_url, main), (spare_url, spare) = first, second
    main.by_key = {"k1": Reply(429, {"retry-after": "60"})}
    backends = (
        Backend("openai", main_url + "/v1", keys=("k1",), fallbacks=("spare",)),
        Backend("anthropic", spare_url, name="spare", model="claude"),
    )
    with proxy(*backends) as (url, lines):
        for _ in range(2):
            text, headers = ask_openai(url)
            assert (text, headers["x-laminate-backend"]) == ("hello", "spare")
        wait_for(lines, 2)
    assert (len(main.seen), len(spare.seen)) == (1, 2)
    assert [line["fallbacks"] for line in lines] == [1, 1]


# -- asyncio and trio --------------------------------------------------------------------------


@pytest.mark.anyio
async def test_retries_and_fallbacks_on_either_event_loop(
    first: tuple[str, Script], second: tuple[str, Script]
) -> None:
    import anthropic
    import httpx2
    import openai

    (main_url, main), (spare_url, spare) = first, second
    main.replies = [Reply(500), Reply(503)]
    lines: list[str] = []
    config = ProxyConfig(
        backends=(
            Backend("openai", main_url + "/v1", retries=1, fallbacks=("spare",)),
            Backend("anthropic", spare_url, name="spare", keys=("a", "b")),
        ),
        retry=QUICK,
        log=lines.append,
    )
    spare.by_key["a"] = Reply(401)
    asgi = app(config)
    # The SDKs' HTTP client, served by the app in this event loop.
    async with (
        asgi.router.lifespan_context(asgi),
        httpx2.AsyncClient(transport=httpx2.ASGITransport(app=asgi)) as http,
    ):
        to_openai = openai.AsyncOpenAI(
            base_url="http://proxy/v1", api_key="c", max_retries=0, http_client=http
        )
        raw = await to_openai.chat.completions.with_raw_response.create(
            model="m", messages=[{"role": "user", "content": "hi"}]
        )
        assert raw.http_response.headers["x-laminate-backend"] == "spare"
        assert raw.parse().choices[0].message.content == "hello"
        to_anthropic = anthropic.AsyncAnthropic(
            base_url="http://proxy", api_key="c", max_retries=0, http_client=http
        )
        message = await to_anthropic.messages.create(
            model="m", max_tokens=8, messages=[{"role": "user", "content": "hi"}]
        )
        assert message.content[0].type == "text"
        assert message.content[0].text == "hello"
    first_line, second_line = (json.loads(line) for line in lines)
    assert (first_line["retries"], first_line["fallbacks"]) == (2, 1)  # a retry, a key
    assert (first_line["backend"], second_line["backend"]) == ("spare", "openai")
    assert (second_line["retries"], second_line["fallbacks"]) == (0, 0)
    assert spare.keys() == ["a", "b"]
    assert len(main.seen) == 3  # two failures, then the second request's answer


# -- the retry-after header, the workers' copy -------------------------------------------------


def test_retry_after_is_read_in_seconds_or_as_a_date() -> None:
    def after(**headers: str) -> float | None:
        return _retry_after(httpx.Response(429, headers=headers))

    assert after() is None
    assert after(**{"retry-after": "3"}) == 3
    assert after(**{"retry-after": "0.5"}) == 0.5
    assert after(**{"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert after(**{"retry-after": "soon"}) is None
    assert after(**{"retry-after": "-4"}) == 0
    later = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    seconds = after(**{"retry-after": later})
    assert seconds is not None
    assert 25 < seconds <= 30
    past = format_datetime(datetime.now(UTC) - timedelta(hours=1), usegmt=True)
    assert after(**{"retry-after": past}) == 0


def test_the_workers_get_the_names_fallbacks_and_pools() -> None:
    config = ProxyConfig(
        backends=(
            Backend("openai", "http://a/v1", retries=2, fallbacks=("b",)),
            Backend("anthropic", "http://b", name="b", keys=("k1", "k2")),
        ),
        retry=Retry(base=0.5, max=4),
    )
    loaded = _load(_dump(config))
    assert loaded.backends == config.backends
    assert loaded.retry == config.retry
    assert loaded.backends[1].keys == ("k1", "k2")
    assert "k1" not in repr(loaded)


# -- the configuration -------------------------------------------------------------------------


def test_backends_are_named_after_their_api_unless_named() -> None:
    config = ProxyConfig(
        backends=(
            Backend("openai", "http://a/v1"),
            Backend("openai", "http://b/v1"),
            Backend("anthropic", "http://c", name="openai-3"),
            Backend("openai", "http://d/v1"),
        )
    )
    assert [b.name for b in config.backends] == ["openai", "openai-2", "openai-3", "openai-4"]


@pytest.mark.parametrize(
    ("backends", "message"),
    [
        (
            [Backend("openai", "http://a/v1", fallbacks=("nowhere",))],
            "no backend is named 'nowhere'",
        ),
        (
            [Backend("openai", "http://a/v1", name="a", fallbacks=("a",))],
            "'a' lists itself",
        ),
        (
            [
                Backend("openai", "http://a/v1", name="a", fallbacks=("b",)),
                Backend("openai", "http://b/v1", name="b", fallbacks=("c",)),
                Backend("openai", "http://c/v1", name="c", fallbacks=("a",)),
            ],
            "cycle: a -> b -> c -> a",
        ),
        (
            [Backend("openai", "http://a/v1", name="x"), Backend("ollama", "http://b", name="x")],
            "names must be unique: 'x'",
        ),
    ],
    ids=["unknown", "itself", "cycle", "twice"],
)
def test_fallbacks_that_lead_nowhere_or_in_circles_are_refused(
    backends: list[Backend], message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        ProxyConfig(backends=tuple(backends))


def test_a_shared_fallback_is_no_cycle() -> None:
    config = ProxyConfig(
        backends=(
            Backend("openai", "http://a/v1", name="a", fallbacks=("b", "c")),
            Backend("openai", "http://b/v1", name="b", fallbacks=("c",)),
            Backend("openai", "http://c/v1", name="c"),
        )
    )
    assert [b.name for b in config.backends] == ["a", "b", "c"]


def test_backend_fields_are_checked() -> None:
    with pytest.raises(ConfigError, match="not both"):
        Backend("openai", "http://a/v1", key="k", keys=("k1",))
    with pytest.raises(ConfigError, match="retries"):
        Backend("openai", "http://a/v1", retries=-1)
    with pytest.raises(TypeError):
        Backend("openai", "http://a/v1", retries="2")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Backend("openai", "http://a/v1", fallbacks="b")  # type: ignore[arg-type]
    with pytest.raises(ConfigError):
        Backend("openai", "http://a/v1", keys=("",))
    with pytest.raises(ConfigError, match="retry max"):
        Retry(max=-1)


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "proxy.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_toml_file_names_backends_their_fallbacks_and_pools(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
        [retry]
        base = 0.1
        max = 2

        [[backend]]
        name = "local"
        api = "openai"
        base_url = "http://127.0.0.1:11434/v1"
        retries = 2
        fallbacks = ["cloud"]

        [[backend]]
        name = "cloud"
        api = "anthropic"
        base_url = "https://api.anthropic.com"
        keys_env = ["KEY_1", "KEY_2"]
        """,
    )
    config = config_from_toml(path, {"KEY_1": "one", "KEY_2": "two"})
    local, cloud = config.backends
    assert (local.name, local.retries, local.fallbacks) == ("local", 2, ("cloud",))
    assert (cloud.name, cloud.keys, cloud.key) == ("cloud", ("one", "two"), None)
    assert config.retry == Retry(base=0.1, max=2)


def test_the_command_line_keeps_what_the_file_says_of_retries(tmp_path: Path) -> None:
    from laminate._cli.proxy import add_parser, build_config

    path = write(
        tmp_path,
        '[retry]\nmax = 3\n[[backend]]\napi = "openai"\nbase_url = "http://a/v1"\n'
        'retries = 1\nkeys_env = ["K1"]\n',
    )
    parser = argparse.ArgumentParser()
    add_parser(parser.add_subparsers())
    args = parser.parse_args(["proxy", "--config", str(path)])
    config = build_config(args, {"K1": "one"})
    assert config.retry == Retry(max=3)
    assert (config.backends[0].retries, config.backends[0].keys) == (1, ("one",))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '[[backend]]\napi = "openai"\nbase_url = "http://a/v1"\nfallbacks = ["b"]\n',
            "no backend is named 'b'",
        ),
        (
            '[[backend]]\nname = "a"\napi = "openai"\nbase_url = "http://a/v1"\n'
            'fallbacks = ["b"]\n'
            '[[backend]]\nname = "b"\napi = "openai"\nbase_url = "http://b/v1"\n'
            'fallbacks = ["a"]\n',
            "cycle: a -> b -> a",
        ),
        (
            '[[backend]]\napi = "openai"\nbase_url = "http://a/v1"\nkey_env = "K1"\n'
            'keys_env = ["K1"]\n',
            "key_env or keys_env",
        ),
        (
            '[[backend]]\napi = "openai"\nbase_url = "http://a/v1"\nkeys_env = ["MISSING"]\n',
            "MISSING is not set",
        ),
        (
            '[[backend]]\napi = "openai"\nbase_url = "http://a/v1"\nretries = "two"\n',
            "retries takes an int",
        ),
        (
            '[retry]\nbase = 1\nsoon = 2\n[[backend]]\napi = "openai"\nbase_url = "http://a/v1"\n',
            r"unknown key 'soon' in \[retry\] \(it takes base, max\)",
        ),
    ],
    ids=["unknown-fallback", "cycle", "both-keys", "unset-key", "bad-retries", "bad-retry"],
)
def test_a_toml_file_with_bad_fallbacks_or_keys_is_refused(
    tmp_path: Path, text: str, message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        config_from_toml(write(tmp_path, text), {"K1": "one"})
