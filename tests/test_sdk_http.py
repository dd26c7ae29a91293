"""The openai and anthropic SDKs' stream objects, against a real server on loopback.

Each SDK is pointed (``base_url``) at laminate's mock provider, which serves the bundled
recordings; whatever object the SDK hands back (``Stream``, ``AsyncStream``, the
``APIResponse`` of ``with_streaming_response``, ``messages.stream()``, the helper streams)
must give exactly the events and response that the recording's bytes give. Breaking out
of the loop, or an exception in it, must close the SDK's stream: the server sees the
client go away (tests/loopback.py's plans record it).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import laminate
import laminate.testing
from laminate._cli.server import DEMO_STREAMS, find_recordings

from .loopback import HANDSHAKE_TIMEOUT, LoopbackServer, Plan, Send, Stall, wait_for

openai = pytest.importorskip("openai")
anthropic = pytest.importorskip("anthropic")

USER = [{"role": "user", "content": "hi"}]


def _recordings(provider: str) -> list[str]:
    return [r.name for r in find_recordings(DEMO_STREAMS, provider)]


def _bytes(provider: str, name: str) -> bytes:
    (recording,) = [r for r in find_recordings(DEMO_STREAMS, provider) if r.name == name]
    return recording.stream.read_bytes()


def _expected(provider: str, name: str) -> list[laminate.Event]:
    return list(laminate.normalize_stream_sync(_bytes(provider, name)))


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    with laminate.testing.mock_server() as url:
        yield url


def _pick(name: str) -> dict[str, str]:
    return {"X-Laminate-Fixture": name}


# -- what each call style hands back, sync ------------------------------------------------

SyncCall = Callable[[str, str], Any]


def _openai_create(url: str, name: str) -> Any:
    client = openai.OpenAI(base_url=url + "/v1", api_key="test", max_retries=0)
    return client.chat.completions.create(
        model="m", messages=USER, stream=True, extra_headers=_pick(name)
    )


def _openai_raw(url: str, name: str) -> Any:
    client = openai.OpenAI(base_url=url + "/v1", api_key="test", max_retries=0)
    manager = client.chat.completions.with_streaming_response.create(
        model="m", messages=USER, stream=True, extra_headers=_pick(name)
    )
    return manager.__enter__()


def _openai_helper(url: str, name: str) -> Any:
    client = openai.OpenAI(base_url=url + "/v1", api_key="test", max_retries=0)
    return client.chat.completions.stream(
        model="m", messages=USER, extra_headers=_pick(name)
    ).__enter__()


def _responses_create(url: str, name: str) -> Any:
    client = openai.OpenAI(base_url=url + "/v1", api_key="test", max_retries=0)
    return client.responses.create(model="m", input="hi", stream=True, extra_headers=_pick(name))


def _responses_helper(url: str, name: str) -> Any:
    client = openai.OpenAI(base_url=url + "/v1", api_key="test", max_retries=0)
    return client.responses.stream(model="m", input="hi", extra_headers=_pick(name)).__enter__()


def _anthropic_create(url: str, name: str) -> Any:
    client = anthropic.Anthropic(base_url=url, api_key="test", max_retries=0)
    return client.messages.create(
        model="m", max_tokens=64, messages=USER, stream=True, extra_headers=_pick(name)
    )


def _anthropic_raw(url: str, name: str) -> Any:
    client = anthropic.Anthropic(base_url=url, api_key="test", max_retries=0)
    manager = client.messages.with_streaming_response.create(
        model="m", max_tokens=64, messages=USER, stream=True, extra_headers=_pick(name)
    )
    return manager.__enter__()


def _anthropic_helper(url: str, name: str) -> Any:
    client = anthropic.Anthropic(base_url=url, api_key="test", max_retries=0)
    return client.messages.stream(
        model="m", max_tokens=64, messages=USER, extra_headers=_pick(name)
    ).__enter__()


SYNC_CALLS: list[tuple[str, SyncCall]] = [
    ("openai", _openai_create),
    ("openai", _openai_raw),
    ("openai", _openai_helper),
    ("openai-responses", _responses_create),
    ("openai-responses", _responses_helper),
    ("anthropic", _anthropic_create),
    ("anthropic", _anthropic_raw),
    ("anthropic", _anthropic_helper),
]
SYNC_CASES = [
    pytest.param(provider, call, name, id=f"{call.__name__[1:]}-{name}")
    for provider, call in SYNC_CALLS
    for name in _recordings(provider)
]


@pytest.mark.parametrize(("provider", "call", "name"), SYNC_CASES)
def test_sync_sdk_objects_give_what_the_bytes_give(
    base_url: str, provider: str, call: SyncCall, name: str
) -> None:
    expected = _expected(provider, name)
    sdk_object = call(base_url, name)
    events = list(laminate.normalize_stream_sync(sdk_object))
    assert events == expected
    assert laminate.collect_sync(call(base_url, name)) == laminate.collect_sync(
        _bytes(provider, name)
    )


# -- async ----------------------------------------------------------------------------------


async def _aopenai_create(url: str, name: str) -> Any:
    client = openai.AsyncOpenAI(base_url=url + "/v1", api_key="test", max_retries=0)
    return await client.chat.completions.create(
        model="m", messages=USER, stream=True, extra_headers=_pick(name)
    )


async def _aopenai_raw(url: str, name: str) -> Any:
    client = openai.AsyncOpenAI(base_url=url + "/v1", api_key="test", max_retries=0)
    manager = client.chat.completions.with_streaming_response.create(
        model="m", messages=USER, stream=True, extra_headers=_pick(name)
    )
    return await manager.__aenter__()


async def _aopenai_helper(url: str, name: str) -> Any:
    client = openai.AsyncOpenAI(base_url=url + "/v1", api_key="test", max_retries=0)
    manager = client.chat.completions.stream(model="m", messages=USER, extra_headers=_pick(name))
    return await manager.__aenter__()


async def _aresponses_create(url: str, name: str) -> Any:
    client = openai.AsyncOpenAI(base_url=url + "/v1", api_key="test", max_retries=0)
    return await client.responses.create(
        model="m", input="hi", stream=True, extra_headers=_pick(name)
    )


async def _aanthropic_create(url: str, name: str) -> Any:
    client = anthropic.AsyncAnthropic(base_url=url, api_key="test", max_retries=0)
    return await client.messages.create(
        model="m", max_tokens=64, messages=USER, stream=True, extra_headers=_pick(name)
    )


async def _aanthropic_raw(url: str, name: str) -> Any:
    client = anthropic.AsyncAnthropic(base_url=url, api_key="test", max_retries=0)
    manager = client.messages.with_streaming_response.create(
        model="m", max_tokens=64, messages=USER, stream=True, extra_headers=_pick(name)
    )
    return await manager.__aenter__()


async def _aanthropic_helper(url: str, name: str) -> Any:
    client = anthropic.AsyncAnthropic(base_url=url, api_key="test", max_retries=0)
    manager = client.messages.stream(
        model="m", max_tokens=64, messages=USER, extra_headers=_pick(name)
    )
    return await manager.__aenter__()


AsyncCall = Callable[[str, str], Any]
ASYNC_CALLS: list[tuple[str, AsyncCall]] = [
    ("openai", _aopenai_create),
    ("openai", _aopenai_raw),
    ("openai", _aopenai_helper),
    ("openai-responses", _aresponses_create),
    ("anthropic", _aanthropic_create),
    ("anthropic", _aanthropic_raw),
    ("anthropic", _aanthropic_helper),
]
ASYNC_CASES = [
    pytest.param(provider, call, name, id=f"{call.__name__[2:]}-{name}")
    for provider, call in ASYNC_CALLS
    for name in _recordings(provider)
]


@pytest.mark.anyio
@pytest.mark.parametrize(("provider", "call", "name"), ASYNC_CASES)
async def test_async_sdk_objects_give_what_the_bytes_give(
    base_url: str, provider: str, call: AsyncCall, name: str
) -> None:
    expected = _expected(provider, name)
    sdk_object = await call(base_url, name)
    events = [event async for event in laminate.normalize_stream(sdk_object)]
    assert events == expected
    response = await laminate.collect(await call(base_url, name))
    assert response == laminate.collect_sync(_bytes(provider, name))


# -- closing: the server sees the client leave ------------------------------------------------


@pytest.fixture(scope="module")
def loopback() -> Iterator[LoopbackServer]:
    with LoopbackServer() as server:
        yield server


def _stalling_plan(server: LoopbackServer, provider: str, path: str) -> tuple[Plan, str]:
    """A plan that sends the first half of a recording, then stalls; registered under
    ``path`` below a fresh prefix, which is returned as the SDK's base URL."""
    data = _bytes(provider, _recordings(provider)[-1])
    plan = Plan([Send(data[: len(data) // 2]), Stall()])
    prefix = f"sdk{len(server.app.plans)}"
    server.app.plans[f"{prefix}{path}"] = plan
    return plan, f"{server.url}/plan/{prefix}"


def _wait(event: threading.Event, what: str) -> None:
    assert event.wait(HANDSHAKE_TIMEOUT), f"the server never reported: {what}"


def _first_delta(events: Iterator[laminate.Event]) -> None:
    for event in events:
        if isinstance(event, laminate.TextDelta | laminate.ReasoningDelta):
            break


def test_break_closes_the_openai_stream(loopback: LoopbackServer) -> None:
    plan, url = _stalling_plan(loopback, "openai", "/chat/completions")
    client = openai.OpenAI(base_url=url, api_key="test", max_retries=0)
    stream = client.chat.completions.create(model="m", messages=USER, stream=True)
    with laminate.normalize_stream_sync(stream) as events:
        _first_delta(events)
    _wait(plan.disconnected, "the client went away")
    assert stream.response.is_closed


def test_exception_closes_the_anthropic_message_stream(loopback: LoopbackServer) -> None:
    plan, url = _stalling_plan(loopback, "anthropic", "/v1/messages")
    client = anthropic.Anthropic(base_url=url, api_key="test", max_retries=0)
    with client.messages.stream(model="m", max_tokens=64, messages=USER) as stream:
        with pytest.raises(KeyError):  # noqa: PT012
            for event in laminate.normalize_stream_sync(stream):
                if isinstance(event, laminate.TextDelta | laminate.ReasoningDelta):
                    raise KeyError("the consumer failed")
        _wait(plan.disconnected, "the client went away")
        assert stream.response.is_closed


@pytest.mark.anyio
async def test_break_closes_the_async_openai_stream(loopback: LoopbackServer) -> None:
    plan, url = _stalling_plan(loopback, "openai", "/chat/completions")
    client = openai.AsyncOpenAI(base_url=url, api_key="test", max_retries=0)
    stream = await client.chat.completions.create(model="m", messages=USER, stream=True)
    async with laminate.normalize_stream(stream) as events:
        async for event in events:
            if isinstance(event, laminate.TextDelta | laminate.ReasoningDelta):
                break
    await wait_for(plan.disconnected, "the client went away")
    assert stream.response.is_closed


@pytest.mark.anyio
async def test_exception_closes_the_async_anthropic_response(loopback: LoopbackServer) -> None:
    plan, url = _stalling_plan(loopback, "anthropic", "/v1/messages")
    client = anthropic.AsyncAnthropic(base_url=url, api_key="test", max_retries=0)
    async with client.messages.with_streaming_response.create(
        model="m", max_tokens=64, messages=USER, stream=True
    ) as response:

        async def consume() -> None:
            async with laminate.normalize_stream(response) as events:
                async for event in events:
                    if isinstance(event, laminate.TextDelta | laminate.ReasoningDelta):
                        raise KeyError("the consumer failed")

        with pytest.raises(KeyError):
            await consume()
        await wait_for(plan.disconnected, "the client went away")
        assert response.http_response.is_closed


def test_a_stream_already_read_is_refused(base_url: str) -> None:
    stream = _openai_create(base_url, _recordings("openai")[0])
    next(iter(stream))
    with pytest.raises(ValueError, match="already been read"):
        laminate.normalize_stream_sync(stream)
    stream.close()


# -- complete bodies: the SDKs' response objects -------------------------------------------------


def test_normalize_takes_the_sdks_response_objects(base_url: str) -> None:
    import httpx

    def body(path: str, name: str, request: dict[str, Any]) -> laminate.NormalizedResponse:
        answer = httpx.post(base_url + path, json=request, headers=_pick(name))
        return laminate.normalize(answer.content)

    client = openai.OpenAI(base_url=base_url + "/v1", api_key="test", max_retries=0)
    claude = anthropic.Anthropic(base_url=base_url, api_key="test", max_retries=0)
    for name in _recordings("openai"):
        completion = client.chat.completions.create(
            model="m", messages=USER, extra_headers=_pick(name)
        )
        want = body("/v1/chat/completions", name, {"model": "m", "messages": USER})
        assert laminate.normalize(completion) == want
        assert laminate.parse_openai_response(completion) == want
    for name in _recordings("openai-responses"):
        response = client.responses.create(model="m", input="hi", extra_headers=_pick(name))
        assert laminate.normalize(response) == body(
            "/v1/responses", name, {"model": "m", "input": "hi"}
        )
    for name in _recordings("anthropic"):
        message = claude.messages.create(
            model="m", max_tokens=64, messages=USER, extra_headers=_pick(name)
        )
        assert laminate.normalize(message) == body(
            "/v1/messages", name, {"model": "m", "max_tokens": 64, "messages": USER}
        )


def test_normalize_refuses_other_types() -> None:
    for wrong in (None, 42, [1, 2], object()):
        with pytest.raises(TypeError, match="a complete body is bytes"):
            laminate.normalize(wrong)
