"""``laminate serve --as FORMAT``: any recording, re-encoded, read back by laminate and by
the official openai and anthropic clients on loopback."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import httpx
import pytest

import laminate
from laminate import NormalizedResponse, ToolUse
from laminate.testing import mock_server

from .support import FIXTURES

pytest.importorskip("uvicorn")

# A recording of each API, answered as every other.
RECORDINGS = [
    "anthropic/parallel-tool-calls",
    "openai/parallel-tool-calls",
    "openai-responses/reasoning-summary-then-text",
    "ollama/thinking",
]
ROUTE = {
    "openai": "/v1/chat/completions",
    "openai-responses": "/v1/responses",
    "anthropic": "/v1/messages",
    "ollama": "/api/chat",
}


def read(name: str) -> NormalizedResponse:
    provider, stem = name.split("/")
    data = next(
        p
        for p in (FIXTURES / provider).iterdir()
        if p.stem == stem and p.suffix in (".sse", ".ndjson")
    )
    return laminate.collect_sync([data.read_bytes()], provider)


def calls(response: NormalizedResponse) -> list[tuple[str, str, Any]]:
    return [(b.id, b.name, b.input.value) for b in response.content if isinstance(b, ToolUse)]


@pytest.mark.parametrize("target", list(ROUTE))
@pytest.mark.parametrize("stream", [True, False])
def test_every_recording_as_every_api(target: str, stream: bool) -> None:
    with mock_server(FIXTURES, as_format=target) as url:
        for name in RECORDINGS:
            body = {"model": "m", "stream": stream, "messages": []}
            answer = httpx.post(
                url + ROUTE[target], json=body, headers={"x-laminate-fixture": name}
            )
            assert answer.status_code == 200, answer.text
            assert answer.headers["x-laminate-fixture"] == name
            got = (
                laminate.collect_sync([answer.content], target)
                if stream
                else laminate.normalize(answer.content, target)
            )
            want = read(name)
            assert got.text() == want.text()
            if target != "ollama":
                assert calls(got) == calls(want)


def test_ai_sdk_answers_with_its_header() -> None:
    with mock_server(FIXTURES, as_format="ai-sdk") as url:
        answer = httpx.post(
            url + "/api/chat", json={"messages": []}, headers={"x-laminate-fixture": "openai/text"}
        )
    assert answer.headers["x-vercel-ai-ui-message-stream"] == "v1"
    assert answer.headers["content-type"].startswith("text/event-stream")
    assert answer.text.endswith("data: [DONE]\n\n")


def test_an_unknown_recording_is_a_404_in_the_target_shape() -> None:
    with mock_server(FIXTURES, as_format="anthropic") as url:
        answer = httpx.post(url + "/v1/messages", json={}, headers={"x-laminate-fixture": "nope"})
    assert answer.status_code == 404
    assert answer.json()["type"] == "error"


def test_openai_client_reads_an_anthropic_recording() -> None:
    openai = pytest.importorskip("openai")
    want = read("anthropic/parallel-tool-calls")
    with mock_server(FIXTURES, as_format="openai") as url:
        client = openai.OpenAI(base_url=url + "/v1", api_key="test", max_retries=0)
        headers = {"x-laminate-fixture": "anthropic/parallel-tool-calls"}
        with client.chat.completions.stream(
            model="m", messages=[], extra_headers=headers
        ) as stream:
            for _ in stream:
                pass
            message = stream.get_final_completion().choices[0].message
    got = [
        (c.id, c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls or []
    ]
    assert (message.content or "") == want.text()
    assert got == calls(want)


def test_anthropic_client_reads_an_openai_recording() -> None:
    anthropic = pytest.importorskip("anthropic")
    want = read("openai/parallel-tool-calls")
    with mock_server(FIXTURES, as_format="anthropic") as url:
        client = anthropic.Anthropic(base_url=url, api_key="test", max_retries=0)
        headers = {"x-laminate-fixture": "openai/parallel-tool-calls"}
        with client.messages.stream(
            model="m", max_tokens=10, messages=[], extra_headers=headers
        ) as stream:
            message = stream.get_final_message()
    got = [(b.id, b.name, b.input) for b in message.content if b.type == "tool_use"]
    assert got == calls(want)
    assert message.stop_reason == "tool_use"


def test_the_command_refuses_an_unknown_format() -> None:
    run = subprocess.run(
        [sys.executable, "-m", "laminate", "serve", "--as", "nope"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert run.returncode != 0
    assert "nope" in run.stderr


@pytest.mark.parametrize("query", ["", "?alt=sse"])
def test_as_gemini_streams_a_json_array_unless_the_request_asks_for_sse(query: str) -> None:
    # As the plain Gemini route: streamGenerateContent without alt=sse is one JSON array.
    name = "anthropic/parallel-tool-calls"
    path = "/v1beta/models/m:streamGenerateContent" + query
    with mock_server(FIXTURES, as_format="gemini") as url:
        answer = httpx.post(url + path, json={"contents": []}, headers={"x-laminate-fixture": name})
    assert answer.status_code == 200, answer.text
    if query:
        assert answer.headers["content-type"].startswith("text/event-stream")
    else:
        assert answer.headers["content-type"].startswith("application/json")
        assert isinstance(json.loads(answer.content), list)
    got = laminate.collect_sync([answer.content], "gemini")
    want = read(name)
    assert got.text() == want.text()
    assert [(c[1], c[2]) for c in calls(got)] == [(c[1], c[2]) for c in calls(want)]
