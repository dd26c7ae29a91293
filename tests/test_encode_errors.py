"""A failed answer written as each target's own in-stream error (``StreamEncoder.error``,
``encode_stream(..., errors="write")``): laminate reads each back as a ProviderError with
the same message and, where the target carries them, the same type and retry advice,
after the text that came before; the official clients raise their usual errors."""

from __future__ import annotations

import json
import logging
import subprocess
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest

import laminate
from laminate import (
    BlockStart,
    Event,
    IncompleteStreamError,
    LaminateError,
    MalformedStreamError,
    ProviderError,
    ResponseDone,
    ResponseStart,
    StreamEncoder,
    StreamTimeoutError,
    Text,
    TextDelta,
)
from laminate.testing import mock_server

from .support import FIXTURES, run_chunks

PROVIDERS = ["openai", "openai-responses", "anthropic", "ollama", "gemini", "cohere", "bedrock"]
AI_SDK = Path(__file__).resolve().parent / "ai_sdk"


def before_error(provider: str = "upstream") -> list[Event]:
    """An answer from ``provider`` (by default none of the targets) that has said
    "Hello wor" when it fails."""
    return [
        ResponseStart("r1", "m1", provider),
        BlockStart(0, Text("")),
        TextDelta(0, "Hello "),
        TextDelta(0, "wor"),
    ]


def written(target: str, error: LaminateError, provider: str = "upstream") -> bytes:
    encoder = StreamEncoder(target)
    body = b"".join(encoder.encode(event) for event in before_error(provider))
    body += encoder.error(error)
    assert encoder.close() == b""  # the error ended the stream
    return body


def read_back(target: str, body: bytes) -> ProviderError:
    outcome = run_chunks([body], target)
    assert isinstance(outcome.error, ProviderError), outcome.error
    assert outcome.error.partial is not None
    assert outcome.error.partial.text() == "Hello wor"
    return outcome.error


# Which retry advice each target carries: Ollama's error line holds a message only, and
# Cohere's says ERROR or TIMEOUT.
def carried_retryable(target: str, error: LaminateError, retryable: bool) -> bool:
    if target == "ollama":
        return False
    if target == "cohere":
        return isinstance(error, StreamTimeoutError) or (
            isinstance(error, ProviderError) and "timeout" in error.error_type
        )
    return retryable


ERRORS: list[tuple[str, LaminateError, bool]] = [
    (
        "overloaded",
        ProviderError("Overloaded", error_type="overloaded_error", retryable=True),
        True,
    ),
    (
        "bad request",
        ProviderError("a tool has no name", error_type="invalid_request_error", retryable=False),
        False,
    ),
    (
        "foreign type, retryable",
        ProviderError("try later", error_type="UNAVAILABLE", retryable=True),
        True,
    ),
    ("cut short", IncompleteStreamError("the stream ended inside a frame"), True),
    ("timeout", StreamTimeoutError("no bytes arrived for 30 s"), True),
    # Not retryable as such, but the server's fault (no request of the client's caused
    # it): written as the target's server error, which its clients read as retryable.
    ("malformed", MalformedStreamError("a frame is not JSON", offset=7, snippet="x"), True),
]


@pytest.mark.parametrize("target", PROVIDERS)
@pytest.mark.parametrize(("name", "error", "retryable"), ERRORS, ids=[e[0] for e in ERRORS])
def test_every_target_writes_an_error_laminate_reads_back(
    target: str, name: str, error: LaminateError, retryable: bool
) -> None:
    got = read_back(target, written(target, error))
    assert got.message == error.message
    assert got.retryable is carried_retryable(target, error, retryable)
    if target in ("openai", "anthropic", "openai-responses") and name == "overloaded":
        assert got.error_type == "overloaded_error"  # free-text types, read alike: kept


@pytest.mark.parametrize(
    ("target", "error_type", "retryable"),
    [
        ("gemini", "RESOURCE_EXHAUSTED", True),
        ("gemini", "PERMISSION_DENIED", False),
        ("bedrock", "throttlingException", True),
        ("bedrock", "validationException", False),
        ("anthropic", "rate_limit_error", True),
        ("openai-responses", "rate_limit_exceeded", True),
    ],
)
def test_an_error_from_the_targets_own_api_keeps_its_type(
    target: str, error_type: str, retryable: bool
) -> None:
    error = ProviderError("no", error_type=error_type, retryable=retryable)
    got = read_back(target, written(target, error, provider=target))
    assert (got.error_type, got.retryable, got.message) == (error_type, retryable, "no")


def test_a_foreign_type_is_written_in_the_targets_words_where_it_must_be() -> None:
    error = ProviderError("Overloaded", error_type="overloaded_error", retryable=True)
    assert read_back("gemini", written("gemini", error)).error_type == "UNAVAILABLE"
    assert read_back("bedrock", written("bedrock", error)).error_type == ("internalServerException")
    fatal = ProviderError("no", error_type="invalid_request_error", retryable=False)
    assert read_back("bedrock", written("bedrock", fatal)).error_type == "validationException"


def test_an_error_before_any_event_is_written_too() -> None:
    error = ProviderError("Overloaded", error_type="overloaded_error", retryable=True)
    for target in PROVIDERS:
        outcome = run_chunks([StreamEncoder(target).error(error)], target)
        assert isinstance(outcome.error, ProviderError), target
        assert outcome.error.message == "Overloaded"


def test_the_events_target_ends_with_an_error_line() -> None:
    error = ProviderError("Overloaded", error_type="overloaded_error", retryable=True)
    lines = written("events", error).splitlines()
    assert json.loads(lines[-1]) == {
        "error": {
            "class": "ProviderError",
            "message": "Overloaded",
            "error_type": "overloaded_error",
            "retryable": True,
        }
    }
    with pytest.raises(ValueError, match="event"):
        laminate.event_from_dict(json.loads(lines[-1]))  # not an event


def test_the_ai_sdk_target_ends_with_an_error_chunk() -> None:
    body = written("ai-sdk", IncompleteStreamError("cut"))
    assert body.endswith(b'data: {"type":"error","errorText":"cut"}\n\ndata: [DONE]\n\n')


@pytest.mark.skipif(
    not (AI_SDK / "node_modules" / "ai").is_dir(),
    reason="the ai npm package is not installed (npm install --prefix tests/ai_sdk)",
)
def test_the_ai_package_reports_the_error_chunk(tmp_path: Path) -> None:
    path = tmp_path / "failed.sse"
    path.write_bytes(written("ai-sdk", ProviderError("Overloaded", error_type="x", retryable=True)))
    run = subprocess.run(
        ["node", str(AI_SDK / "read_ui_stream.mjs"), "--errors", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    message = json.loads(run.stdout.splitlines()[-1])
    assert message["error"] == "Overloaded"
    assert [p["text"] for p in message["message"]["parts"] if p["type"] == "text"] == ["Hello wor"]


# -- the encoder's rules ----------------------------------------------------------------------


def test_error_takes_a_laminate_error_only() -> None:
    with pytest.raises(TypeError, match="LaminateError"):
        StreamEncoder("openai").error(ValueError("no"))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="LaminateError"):
        StreamEncoder("events").error(ValueError("no"))  # type: ignore[arg-type]


def test_no_error_after_the_answer_is_complete() -> None:
    done = laminate.collect_sync([(FIXTURES / "openai" / "text.sse").read_bytes()], "openai")
    encoder = StreamEncoder("anthropic")
    encoder.encode(ResponseDone(done))
    with pytest.raises(LaminateError, match="after the stream ended"):
        encoder.error(IncompleteStreamError("late"))


# -- encode_stream ----------------------------------------------------------------------------


def failing_events() -> Iterator[Event]:
    yield from before_error()
    raise ProviderError("Overloaded", error_type="overloaded_error", retryable=True)


async def failing_events_async() -> AsyncIterator[Event]:
    for event in failing_events():
        yield event


def test_encode_stream_sync_writes_or_raises(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="laminate"):
        body = b"".join(laminate.encode_stream_sync(failing_events(), "anthropic", errors="write"))
    assert read_back("anthropic", body).error_type == "overloaded_error"
    assert "Overloaded" in caplog.text  # the failure is logged, not only written
    stream = laminate.encode_stream_sync(failing_events(), "anthropic")
    chunks = [next(stream) for _ in range(4)]  # message_start, the block, two deltas
    with pytest.raises(ProviderError, match="Overloaded"):
        next(stream)
    assert b"Hello " in b"".join(chunks)
    assert b"event: error" not in b"".join(chunks)


@pytest.mark.anyio
async def test_encode_stream_writes_or_raises() -> None:
    body = b"".join(
        [c async for c in laminate.encode_stream(failing_events_async(), "openai", errors="write")]
    )
    assert read_back("openai", body).message == "Overloaded"
    with pytest.raises(ProviderError, match="Overloaded"):
        async for _ in laminate.encode_stream(failing_events_async(), "openai", errors="raise"):
            pass


def test_an_unknown_error_policy_is_refused() -> None:
    with pytest.raises(ValueError, match="raise"):
        list(laminate.encode_stream_sync(iter(()), "openai", errors="ignore"))  # type: ignore[arg-type]


@pytest.mark.anyio
async def test_a_normalized_stream_that_fails_is_forwarded_with_its_error() -> None:
    body = (FIXTURES / "gemini" / "error-in-stream.sse").read_bytes()

    async def chunks() -> AsyncIterator[bytes]:
        yield body

    out = b"".join(
        [
            c
            async for c in laminate.encode_stream(
                laminate.normalize_stream(chunks(), "gemini"), "anthropic", errors="write"
            )
        ]
    )
    outcome = run_chunks([out], "anthropic")
    assert isinstance(outcome.error, ProviderError)
    assert outcome.error.message == "The model is overloaded. Please try again later."
    assert outcome.error.retryable
    assert outcome.error.partial is not None
    assert outcome.error.partial.text() == "Partial answer"


# -- the official clients, through `laminate serve --as` ----------------------------------------


RECORDING = "gemini/error-in-stream"  # "Partial answer", then Gemini's UNAVAILABLE
OVERLOADED = "The model is overloaded. Please try again later."


def test_the_server_streams_a_failing_recording_with_the_targets_error() -> None:
    pytest.importorskip("uvicorn")
    with mock_server(FIXTURES, as_format="anthropic") as url:
        answer = httpx.post(
            url + "/v1/messages",
            json={"model": "m", "stream": True, "messages": []},
            headers={"x-laminate-fixture": RECORDING},
        )
    assert answer.status_code == 200
    assert b"event: error" in answer.content
    outcome = run_chunks([answer.content], "anthropic")
    assert isinstance(outcome.error, ProviderError)
    assert outcome.error.message == OVERLOADED


def test_the_openai_client_raises_the_error_written_as_openai() -> None:
    pytest.importorskip("uvicorn")
    openai = pytest.importorskip("openai")
    with mock_server(FIXTURES, as_format="openai") as url:
        client = openai.OpenAI(base_url=url + "/v1", api_key="test", max_retries=0)
        chunks = iter(
            client.chat.completions.create(
                model="m",
                messages=[],
                stream=True,
                extra_headers={"x-laminate-fixture": RECORDING},
            )
        )
        text = ""
        while text != "Partial answer":  # what came before the error, chunk by chunk
            text += "".join(c.delta.content or "" for c in next(chunks).choices)
        with pytest.raises(openai.APIError) as caught:
            next(chunks)
    assert OVERLOADED in str(caught.value)


def test_the_anthropic_client_raises_the_error_written_as_anthropic() -> None:
    pytest.importorskip("uvicorn")
    anthropic = pytest.importorskip("anthropic")
    with mock_server(FIXTURES, as_format="anthropic") as url:
        client = anthropic.Anthropic(base_url=url, api_key="test", max_retries=0)
        with client.messages.stream(
            model="m",
            max_tokens=10,
            messages=[],
            extra_headers={"x-laminate-fixture": RECORDING},
        ) as stream:
            with pytest.raises(anthropic.APIError) as caught:
                stream.until_done()
            assert stream.current_message_snapshot.content[0].text == "Partial answer"
    assert OVERLOADED in str(caught.value)
