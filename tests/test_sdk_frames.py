"""SDKs that hand out frames they already parsed, against real servers on loopback.

google-genai (``GenerateContentResponse`` chunks), boto3 (``converse_stream()`` and
``invoke_model_with_response_stream()``: botocore's own event stream parser over the
binary fixtures) and ollama-python (``ChatResponse`` chunks) are each pointed at a
server on 127.0.0.1 that answers with recorded bytes; laminate reads their objects
through ``feed_payload`` and must give what the same bytes give, errors included (an
SDK's own exception for an error frame becomes the same ``ProviderError``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import laminate
import laminate.testing
from laminate._cli.server import DEMO_STREAMS, find_recordings

from .loopback import LoopbackServer
from .support import FIXTURES

genai = pytest.importorskip("google.genai")
genai_types = pytest.importorskip("google.genai.types")
boto3 = pytest.importorskip("boto3")
ollama = pytest.importorskip("ollama")

Outcome = laminate.NormalizedResponse | laminate.LaminateError


@pytest.fixture(scope="module")
def loopback() -> Iterator[LoopbackServer]:
    with LoopbackServer() as server:
        yield server


def _outcome_sync(source: object, **options: Any) -> tuple[list[laminate.Event], Outcome]:
    events: list[laminate.Event] = []
    try:
        # extend() keeps what arrived before an error
        events.extend(laminate.normalize_stream_sync(source, **options))
    except laminate.LaminateError as exc:
        return events, exc
    assert isinstance(events[-1], laminate.ResponseDone)
    return events, events[-1].response


async def _outcome(source: object) -> tuple[list[laminate.Event], Outcome]:
    events: list[laminate.Event] = []
    try:
        async with laminate.normalize_stream(source) as stream:
            async for event in stream:
                events.append(event)  # noqa: PERF401 (keeps what arrived before an error)
    except laminate.LaminateError as exc:
        return events, exc
    assert isinstance(events[-1], laminate.ResponseDone)
    return events, events[-1].response


def _same(got: Outcome, want: Outcome, *, same_message: bool = True) -> None:
    if isinstance(want, laminate.NormalizedResponse):
        assert got == want
        return
    assert type(got) is type(want), got
    assert isinstance(got, laminate.LaminateError)
    assert got.partial == want.partial
    if same_message:
        assert str(got) == str(want)
    if isinstance(want, laminate.ProviderError):
        assert isinstance(got, laminate.ProviderError)
        assert (got.error_type, got.retryable, got.status_code) == (
            want.error_type,
            want.retryable,
            None,
        )


# -- google-genai ---------------------------------------------------------------------------

GEMINI = sorted((FIXTURES / "gemini").glob("*.sse"))
# What google-genai's own types change before laminate sees the frame: the response is
# the same, the argument text is not.
GENAI_LOSSY = {"vertex-partial-args": "partialArgs numberValue is a float: 3 becomes 3.0"}


def _genai_client(server: LoopbackServer, path: Path) -> Any:
    prefix = f"g-{path.stem}"
    server.app.bodies[f"{prefix}/v1/models/m:streamGenerateContent"] = (
        "text/event-stream",
        path.read_bytes(),
    )
    options = genai_types.HttpOptions(base_url=f"{server.url}/body/{prefix}")
    return genai.Client(api_key="test", http_options=options)


@pytest.mark.parametrize("path", GEMINI, ids=lambda p: p.stem)
def test_google_genai_chunks(loopback: LoopbackServer, path: Path) -> None:
    want_events, want = _outcome_sync(path.read_bytes())
    client = _genai_client(loopback, path)
    events, got = _outcome_sync(client.models.generate_content_stream(model="m", contents="hi"))
    _same(got, want)
    if path.stem not in GENAI_LOSSY:
        assert events == want_events


# The SDK itself leaves an httpx2 generator to the collector when its own stream raises.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
@pytest.mark.parametrize("path", GEMINI, ids=lambda p: p.stem)
def test_google_genai_async_chunks(loopback: LoopbackServer, path: Path) -> None:
    # google-genai's async client runs on asyncio only.
    want_events, want = _outcome_sync(path.read_bytes())
    client = _genai_client(loopback, path)

    async def run() -> tuple[list[laminate.Event], Outcome]:
        try:
            chunks = await client.aio.models.generate_content_stream(model="m", contents="hi")
            return await _outcome(chunks)
        finally:
            await client.aio.aclose()

    events, got = asyncio.run(run())
    _same(got, want)
    if path.stem not in GENAI_LOSSY:
        assert events == want_events


def test_google_genai_objects_built_from_a_recording() -> None:
    path = FIXTURES / "gemini" / "thinking-signatures.sse"
    if not path.is_file():
        pytest.skip("no Gemini fixtures")
    data = path.read_bytes()
    chunks = [
        genai_types.GenerateContentResponse.model_validate_json(line.removeprefix(b"data: "))
        for line in data.splitlines()
        if line.startswith(b"data: ")
    ]
    assert laminate.collect_sync(chunks) == laminate.collect_sync(data)


# -- boto3 ------------------------------------------------------------------------------------

BEDROCK = sorted((FIXTURES / "bedrock").glob("*.eventstream"))
ANTHROPIC_BEDROCK = sorted((FIXTURES / "anthropic-bedrock").glob("*.eventstream"))


def _bedrock_client(server: LoopbackServer, path: Path, operation: str) -> Any:
    prefix = f"b-{path.parent.name}-{path.stem}"
    server.app.bodies[f"{prefix}/model/m/{operation}"] = (
        "application/vnd.amazon.eventstream",
        path.read_bytes(),
    )
    return boto3.client(
        "bedrock-runtime",
        region_name="us-east-1",
        endpoint_url=f"{server.url}/body/{prefix}",
        aws_access_key_id="test",
        aws_secret_access_key="test",
    )


@pytest.mark.parametrize("path", BEDROCK, ids=lambda p: p.stem)
def test_boto3_converse_stream(loopback: LoopbackServer, path: Path) -> None:
    want_events, want = _outcome_sync(path.read_bytes())
    client = _bedrock_client(loopback, path, "converse-stream")
    messages = [{"role": "user", "content": [{"text": "hi"}]}]
    answer = client.converse_stream(modelId="m", messages=messages)
    events, got = _outcome_sync(answer)
    # botocore drops a frame cut short without a word, so only the kind of error is the same.
    _same(got, want, same_message="truncated" not in path.stem)
    assert events == want_events
    # Its ["stream"] alone reads the same.
    answer = client.converse_stream(modelId="m", messages=messages)
    assert _outcome_sync(answer["stream"])[0] == want_events


@pytest.mark.parametrize("path", ANTHROPIC_BEDROCK, ids=lambda p: p.stem)
def test_boto3_invoke_model_with_response_stream(loopback: LoopbackServer, path: Path) -> None:
    want_events, want = _outcome_sync(path.read_bytes())
    client = _bedrock_client(loopback, path, "invoke-with-response-stream")
    answer = client.invoke_model_with_response_stream(modelId="m", body=b"{}")
    events, got = _outcome_sync(answer)
    _same(got, want)
    assert events == want_events


def test_boto3_stream_closed_on_break(loopback: LoopbackServer) -> None:
    client = _bedrock_client(loopback, FIXTURES / "bedrock" / "text.eventstream", "converse-stream")
    answer = client.converse_stream(modelId="m", messages=[])
    stream = answer["stream"]
    for event in laminate.normalize_stream_sync(answer):
        if isinstance(event, laminate.TextDelta):
            break
    assert stream._raw_stream.closed  # botocore's urllib3 response


# -- ollama-python ----------------------------------------------------------------------------

OLLAMA = [r.name for r in find_recordings(DEMO_STREAMS, "ollama")]


@pytest.fixture(scope="module")
def mock_url() -> Iterator[str]:
    with laminate.testing.mock_server() as url:
        yield url


def _ollama_bytes(name: str) -> bytes:
    (recording,) = [r for r in find_recordings(DEMO_STREAMS, "ollama") if r.name == name]
    return recording.stream.read_bytes()


@pytest.mark.parametrize("name", OLLAMA)
def test_ollama_chat_stream(mock_url: str, name: str) -> None:
    client = ollama.Client(host=mock_url, headers={"X-Laminate-Fixture": name})
    chunks = client.chat(model="m", messages=[{"role": "user", "content": "hi"}], stream=True)
    want_events, want = _outcome_sync(_ollama_bytes(name))
    events, got = _outcome_sync(chunks)
    assert got == want
    assert events == want_events


@pytest.mark.anyio
@pytest.mark.parametrize("name", OLLAMA)
async def test_ollama_async_chat_stream(mock_url: str, name: str, anyio_backend: str) -> None:
    if anyio_backend != "asyncio":
        pytest.skip("ollama-python's async client runs on asyncio only")
    client = ollama.AsyncClient(host=mock_url, headers={"X-Laminate-Fixture": name})
    chunks = await client.chat(model="m", messages=[{"role": "user", "content": "hi"}], stream=True)
    want_events, want = _outcome_sync(_ollama_bytes(name))
    events, got = await _outcome(chunks)
    assert got == want
    assert events == want_events


def test_ollama_error_line_is_the_same_provider_error(loopback: LoopbackServer) -> None:
    data = (FIXTURES / "ollama" / "text.ndjson").read_bytes()
    head = data.split(b"\n")[0] + b"\n"
    body = head + b'{"error":"model runner has unexpectedly stopped"}\n'
    loopback.app.bodies["o-error/api/chat"] = ("application/x-ndjson", body)
    client = ollama.Client(host=f"{loopback.url}/body/o-error")
    chunks = client.chat(model="m", messages=[], stream=True)
    want_events, want = _outcome_sync(body)
    events, got = _outcome_sync(chunks)
    _same(got, want)
    assert events == want_events


# -- any iterable of parsed frames --------------------------------------------------------------


class ModelResponseStream:
    """Shaped like litellm's chunk: an OpenAI chunk behind ``model_dump()``."""

    __module__ = "litellm.types.utils"

    def __init__(self, data: dict[str, Any]) -> None:
        self._data = data

    def model_dump(self, **_: Any) -> dict[str, Any]:
        return self._data


class ToDict:
    def __init__(self, data: dict[str, Any]) -> None:
        self._data = data

    def to_dict(self) -> dict[str, Any]:
        return self._data


def _frames(path: Path) -> list[dict[str, Any]]:
    import json

    return [
        json.loads(line.removeprefix(b"data: "))
        for line in path.read_bytes().splitlines()
        if line.startswith(b"data: {")
    ]


def test_litellm_shaped_chunks_dicts_and_to_dict() -> None:
    path = FIXTURES / "openai" / "text.sse"
    want = laminate.collect_sync(path.read_bytes())
    frames = _frames(path)
    assert laminate.collect_sync([ModelResponseStream(f) for f in frames]) == want
    assert laminate.collect_sync(iter(frames)) == want
    assert laminate.collect_sync([ToDict(f) for f in frames]) == want


@pytest.mark.anyio
async def test_async_iterable_of_dicts() -> None:
    path = FIXTURES / "anthropic" / "tool-call.sse"
    frames = _frames(path)

    async def chunks() -> Any:
        for frame in frames:
            yield frame

    assert await laminate.collect(chunks()) == laminate.collect_sync(path.read_bytes())
    assert await laminate.collect(frames) == laminate.collect_sync(path.read_bytes())


def test_normalize_takes_chat_response_and_generate_content_response(mock_url: str) -> None:
    import httpx

    for name in OLLAMA:
        with ollama.Client(host=mock_url, headers={"X-Laminate-Fixture": name}) as client:
            answer = client.chat(model="m", messages=[], stream=False)
        raw = httpx.post(
            mock_url + "/api/chat",
            json={"model": "m", "messages": [], "stream": False},
            headers={"X-Laminate-Fixture": name},
        )
        assert laminate.normalize(answer) == laminate.normalize(raw.content)
    path = FIXTURES / "gemini" / "text.body.json"
    if path.is_file():
        response = genai_types.GenerateContentResponse.model_validate_json(path.read_bytes())
        assert laminate.normalize(response) == laminate.normalize(path.read_bytes())
