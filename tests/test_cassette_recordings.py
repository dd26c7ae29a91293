"""The third corpus, ../shared/real-streams-3: response bodies recorded in five other
projects' test cassettes (22 OpenAI-compatible servers, Claude on Vertex, Bedrock's
InvokeModel streams, ...), read by path and skipped with a reason when the folder is
absent.

Every recording, along each path a user takes to it:
- detected (no provider given) and named (its provider given), it reads as that
  provider's answer, or fails with the error its bytes call for (an error body: a
  `ProviderError` with the recorded status; a format laminate does not read: a
  `MalformedStreamError` that says so);
- whole, line by line, one byte at a time (small files) and cut at random offsets, the
  events are the same;
- a complete body fed as a stream reads as `normalize` reads it.
No two recordings of this corpus hold the same answer as a stream and as a body, so a
body is compared with itself as a stream.

Then one test per drift note of its SOURCES.md, with the facts read from the recording.
"""

from __future__ import annotations

import json
import random
from typing import Any

import httpx
import pytest

import laminate
from laminate import (
    FlexValue,
    MalformedStreamError,
    NormalizedResponse,
    ProviderError,
    Reasoning,
    StopReason,
    Text,
    ToolUse,
)

from .support import REAL_STREAMS_3, bytes_of, lines_of, needs_real_streams_3, run_chunks, split_at

pytestmark = needs_real_streams_3

MANIFEST: dict[str, dict[str, Any]] = (
    json.loads((REAL_STREAMS_3 / "manifest.json").read_text())
    if (REAL_STREAMS_3 / "manifest.json").is_file()
    else {}
)
FILES = sorted(MANIFEST)
BYTEWISE_LIMIT = 12_000

# Recordings of formats laminate does not read, and what the error must say.
UNREAD = {
    "cohere/agentops-cohere-v1-chat-stream-json.ndjson": "v1",
    "cohere/ddtrace-cohere-v1-chat-command-r-nonstream.json": "v1",
    "bedrock-converse/ddtrace-bedrock-invokestream-anthropic-legacy-completion-stop-sequence"
    ".eventstream": "not an Anthropic Messages event",
    "bedrock-converse/ddtrace-bedrock-invokestream-cohere-command-2-generations-interleaved"
    ".eventstream": "not an Anthropic Messages event",
    "bedrock-converse/ddtrace-bedrock-invokestream-llama2-stop-length.eventstream": (
        "not an Anthropic Messages event"
    ),
    "bedrock-converse/ddtrace-bedrock-invokestream-titan-single-chunk.eventstream": (
        "not an Anthropic Messages event"
    ),
}
NAMED_AS_DOCUMENT = {"cohere/agentops-cohere-v1-chat-stream-json.ndjson"}
# Bedrock's InvokeModel route of an Anthropic model: the answer is Anthropic's.
CARRIED = {
    "bedrock-converse/ddtrace-bedrock-invokestream-anthropic-messages-in-chunk-bytes.eventstream",
    "bedrock-converse/fantasy-bedrock-invoke-opus46-nonstream-tool-use.json",
    "bedrock-converse/fantasy-bedrock-invokestream-haiku45-tool-use.eventstream",
    "bedrock-converse/fantasy-bedrock-invokestream-opus46-text-32-frames.eventstream",
    "bedrock-converse/fantasy-bedrock-invokestream-sonnet45-text-after-tool-result.eventstream",
}


def data_of(name: str) -> bytes:
    return (REAL_STREAMS_3 / name).read_bytes()


def read(name: str, provider: str | None = None) -> NormalizedResponse:
    data = data_of(name)
    if name.endswith(".json"):
        return laminate.normalize(data, provider=provider)
    return laminate.collect_sync([data], provider=provider)


def answer_provider(name: str) -> str:
    return "anthropic" if name in CARRIED else MANIFEST[name]["provider"]


@pytest.mark.parametrize("name", FILES)
@pytest.mark.parametrize("named", [False, True], ids=["detected", "named"])
def test_each_recording_reads_as_its_provider(name: str, named: bool) -> None:
    info = MANIFEST[name]
    provider = info["provider"] if named else None
    if info["kind"] == "error-body":
        with pytest.raises(ProviderError) as error:
            read(name, provider)
        assert error.value.message
        return
    if name in UNREAD:
        # Named "cohere", the v1 NDJSON stream is read as the one document the provider's
        # framing would be, and is refused as that.
        said = "one JSON document" if named and name in NAMED_AS_DOCUMENT else UNREAD[name]
        with pytest.raises(MalformedStreamError, match=said):
            read(name, provider)
        return
    response = read(name, provider)
    assert response.provider == answer_provider(name)
    assert response.content
    assert response.stop_reason.raw or response.stop_reason.kind
    if named:
        assert response == read(name)


@pytest.mark.parametrize("name", [n for n in FILES if MANIFEST[n]["kind"] == "error-body"])
def test_an_error_body_with_its_status_is_a_provider_error(name: str) -> None:
    status = MANIFEST[name]["http_status"]

    def answer(request: httpx.Request) -> httpx.Response:
        headers = {"content-type": "application/json"}
        return httpx.Response(status, content=data_of(name), headers=headers)

    client = httpx.Client(transport=httpx.MockTransport(answer))
    url = "http://127.0.0.1/v1/x"
    with client, client.stream("POST", url) as response, pytest.raises(ProviderError) as error:
        laminate.collect_sync(response)
    assert error.value.status_code == status


@pytest.mark.parametrize("name", FILES)
def test_the_events_do_not_depend_on_the_chunking(name: str) -> None:
    data = data_of(name)
    whole = run_chunks([data])
    assert run_chunks(lines_of(data)).events == whole.events
    if len(data) <= BYTEWISE_LIMIT:
        bytewise = run_chunks(bytes_of(data))
        assert bytewise.events == whole.events
        assert type(bytewise.error) is type(whole.error)
    rng = random.Random(len(data))
    for _ in range(3):
        cuts = [rng.randrange(1, len(data)) for _ in range(rng.randrange(1, 12))]
        split = run_chunks(split_at(data, cuts))
        assert split.events == whole.events
        assert type(split.error) is type(whole.error)


@pytest.mark.parametrize(
    "name",
    [n for n in FILES if n.endswith(".json") and MANIFEST[n]["kind"] == "body" and n not in UNREAD],
)
def test_a_complete_body_reads_alike_as_a_stream(name: str) -> None:
    body = read(name)
    streamed = laminate.collect_sync([data_of(name)])
    assert (streamed.content, streamed.stop_reason, streamed.usage) == (
        body.content,
        body.stop_reason,
        body.usage,
    )


# -- the drift notes ----------------------------------------------------------------------


def test_gemini_compat_tool_call_without_id_or_index_and_finish_stop() -> None:
    """Gemini's OpenAI-compatible endpoint: no chunk id, `"id": ""` and no `index` on the
    call, `finish_reason: "stop"` on the chunk that carries it, keys sorted."""
    response = read(
        "openai-compat/magentic-gemini-openai-endpoint-tool-call-empty-id-no-index-finish-stop.sse"
    )
    (call,) = response.content
    assert isinstance(call, ToolUse)
    assert (call.name, call.input.value) == ("return_bool", {"value": True})
    assert call.id  # generated: never empty
    assert response.stop_reason == StopReason.TOOL_USE
    assert response.stop_reason.raw == "stop"
    assert (response.usage.input_tokens, response.usage.output_tokens) == (8, 4)


def test_gemini_compat_usage_on_every_chunk_the_last_wins() -> None:
    response = read("openai-compat/magentic-gemini-openai-endpoint-text-usage-every-chunk.sse")
    assert (response.usage.input_tokens, response.usage.output_tokens) == (3, 11)
    assert response.id == ""  # no chunk names one
    assert response.model == "gemini-2.0-flash"


def test_ollama_v1_tool_call_without_index_finishes_with_stop() -> None:
    response = read("openai-compat/magentic-ollama-v1-tool-call-no-index-finish-stop.sse")
    assert response.content == [ToolUse("call_kve3oltz", "return_bool", FlexValue({"value": True}))]
    assert response.stop_reason == StopReason.TOOL_USE
    assert response.stop_reason.raw == "stop"


def test_mistral_two_calls_in_one_delta_without_index_or_type() -> None:
    response = read("openai-compat/magentic-mistral-2-parallel-calls-one-delta-no-index.sse")
    assert response.content == [
        ToolUse("nqjf8Hqe1", "plus", FlexValue({"a": 1, "b": 2})),
        ToolUse("ATcpCKul3", "minus", FlexValue({"a": 2, "b": 1})),
    ]
    assert (response.usage.input_tokens, response.usage.output_tokens) == (187, 45)


def test_mistral_call_whole_with_finish_usage_and_padding() -> None:
    response = read(
        "openai-compat/ddtrace-mistral-large-tool-call-whole-with-finish-usage-p-padding.sse"
    )
    (call,) = response.content
    assert isinstance(call, ToolUse)
    assert call.name == "get_weather"
    assert len(call.id) == 9
    assert response.stop_reason == StopReason.TOOL_USE


def test_forced_tool_choice_finishing_with_stop_is_a_tool_use() -> None:
    response = read("openai-chat/magentic-gpt-forced-tool-choice-finish-stop.sse")
    (call,) = response.content
    assert isinstance(call, ToolUse)
    assert call.name == "plus"
    assert response.stop_reason == StopReason.TOOL_USE
    assert response.stop_reason.raw == "stop"
    assert (response.usage.input_tokens, response.usage.output_tokens) == (59, 9)


@pytest.mark.parametrize(
    "name",
    [
        "openai-compat/fantasy-openrouter-kimi-reasoning-2-parallel-calls-2-finish.sse",
        "openai-compat/fantasy-avian-kimi-k25-first-chunk-id-differs-2-finish-chunks.sse",
    ],
)
def test_two_chunks_with_a_finish_reason_make_one_answer(name: str) -> None:
    response = read(name)
    assert [b.name for b in response.tool_uses()] == ["add", "multiply"]
    assert response.stop_reason == StopReason.TOOL_USE
    assert response.usage.output_tokens == (97 if "openrouter" in name else 131)


def test_avian_first_chunk_id_is_the_answers() -> None:
    response = read(
        "openai-compat/fantasy-avian-kimi-k25-first-chunk-id-differs-2-finish-chunks.sse"
    )
    assert response.id == "chatcmpl-ec08ee4b2cd84124b8f4f469"  # the first, not the later gen-
    assert response.usage.reasoning_tokens == 87
    assert response.usage.cache_read_tokens == 128


def test_groq_usage_only_in_x_groq() -> None:
    response = read("openai-compat/agentops-groq-llama3-70b-usage-in-x-groq.sse")
    assert (response.usage.input_tokens, response.usage.output_tokens) == (26, 41)


@pytest.mark.parametrize(
    "name",
    [
        "openai-compat/fantasy-groq-kimi-k2-2-whole-tool-calls-x-groq-seed.sse",
        "openai-compat/fantasy-hf-router-kimi-k2-groq-backend-x-groq.sse",
    ],
)
def test_groq_usage_in_both_places_counts_once(name: str) -> None:
    response = read(name)
    assert [b.name for b in response.tool_uses()] == ["add", "multiply"]
    if "groq-kimi" in name:
        assert (response.usage.input_tokens, response.usage.output_tokens) == (201, 58)


def test_litellm_proxy_usage_chunk_with_a_choice() -> None:
    response = read("openai-compat/ddtrace-litellm-proxy-stream-options-echo-no-finish-null.sse")
    assert (response.usage.input_tokens, response.usage.output_tokens) == (13, 22)
    assert response.stop_reason == StopReason.END_TURN
    assert len(response.content) == 1


def test_xai_usage_on_every_chunk() -> None:
    response = read("openai-compat/magentic-xai-grok2-text-stream.sse")
    assert (response.usage.input_tokens, response.usage.output_tokens) == (9, 10)
    assert response.id == "5b557a04-bda5-4a2e-aadc-9ad1fd707f65"


@pytest.mark.parametrize(
    "name",
    [
        "openai-compat/fantasy-llamacpp-b7010-gpt-oss-reasoning-content-tool-call-timings.sse",
        "openai-compat/ddtrace-azure-gpt52-prompt-filter-first-latency-checkpoint-last.sse",
    ],
)
def test_extra_objects_beside_the_answer_are_ignored(name: str) -> None:
    """llama.cpp's `timings`, Azure's `latency_checkpoint` and prompt filter chunk."""
    response = read(name)
    assert all(isinstance(b, Text | Reasoning | ToolUse) for b in response.content)


def test_ai21_chunks_of_id_and_choices_only() -> None:
    name = "openai-compat/agentops-ai21-jamba-stream-no-object-model-created.sse"
    assert b"\r\n" in data_of(name)
    response = read(name)
    assert response.provider == "openai"
    assert response.id.startswith("chatcmpl-")
    assert response.model == ""
    assert response.usage.output_tokens == 184


def test_zai_finish_reason_only_on_the_last_chunk() -> None:
    response = read(
        "openai-compat/fantasy-zai-glm47-flash-reasoning-2-tool-calls-no-finish-null.sse"
    )
    assert [b.name for b in response.tool_uses()] == ["add", "multiply"]
    assert response.id == "20260313050448e162ecc8207a4c47"
    assert response.usage.reasoning_tokens == 64


@pytest.mark.parametrize(
    "name",
    [
        "openai-compat/ddtrace-openrouter-gpt-oss-nonstream-leading-whitespace.json",
        "openai-compat/fantasy-openrouter-kimi-nonstream-whitespace-reasoning.json",
    ],
)
def test_openrouter_body_after_blank_lines(name: str) -> None:
    data = data_of(name)
    assert data[:1].isspace()
    response = read(name)
    assert response.text()
    # Cut inside the blank lines, nothing of the body came yet: cut short.
    assert isinstance(run_chunks([data[:1]]).error, laminate.IncompleteStreamError)


def test_claude_on_vertex_ping_before_the_first_block() -> None:
    response = read("anthropic-messages/fantasy-vertex-claude37-ping-before-first-block.sse")
    assert response.id.startswith("msg_vrtx_")
    assert [type(b) for b in response.content] == [Text, ToolUse]
    assert response.stop_reason == StopReason.TOOL_USE


def test_anthropic_data_padded_with_spaces() -> None:
    name = "anthropic-messages/magentic-claude3-opus-2-tool-use-blocks-space-padded.sse"
    assert b" }" in data_of(name) or b"  }" in data_of(name)
    response = read(name)
    assert [b.name for b in response.tool_uses()] == ["plus", "minus"]


@pytest.mark.parametrize(
    ("name", "call_id"),
    [
        (
            "openai-chat/ddtrace-openai-gpt5-nonstream-custom-tool-call.json",
            "call_QpgJRI5C9DcjExMNU6lrJPcu",
        ),
        (
            "openai-responses/ddtrace-responses-nonstream-custom-tool-call.json",
            "call_H8YsBUDPYjNHSq9fWOzwetxr",
        ),
    ],
)
def test_custom_tool_calls_are_custom_tool_uses(name: str, call_id: str) -> None:
    response = read(name)
    (call,) = response.tool_uses()
    assert call == ToolUse(call_id, "math_exp", FlexValue("4 + 4"), kind="custom")
    assert response.stop_reason == StopReason.TOOL_USE


def test_responses_incomplete_is_cut_at_the_token_limit() -> None:
    response = read("openai-responses/ddtrace-responses-max-output-tokens-incomplete.sse")
    assert response.stop_reason == StopReason.MAX_TOKENS
    assert response.stop_reason.raw == "max_output_tokens"
    assert response.text()


@pytest.mark.parametrize("provider", [None, "bedrock", "anthropic"])
def test_bedrock_invoke_stream_carries_anthropic_events(provider: str | None) -> None:
    """Base64 Messages events with `p` padding; the last one carries Bedrock's metrics."""
    name = "bedrock-converse/fantasy-bedrock-invokestream-opus46-text-32-frames.eventstream"
    response = read(name, provider)
    assert response.provider == "anthropic"
    assert "amazon-bedrock-invocationMetrics" in response.usage.raw
    assert response.stop_reason == StopReason.END_TURN


def test_bedrock_invoke_body_of_an_anthropic_model() -> None:
    name = "bedrock-converse/fantasy-bedrock-invoke-opus46-nonstream-tool-use.json"
    response = read(name, "bedrock")
    assert response == read(name, "anthropic")
    assert response.id.startswith("msg_bdrk_")
    assert [b.name for b in response.tool_uses()] == ["weather"]


@pytest.mark.parametrize(
    "name",
    [
        "bedrock-converse/ddtrace-bedrock-invokestream-cohere-command-2-generations-interleaved"
        ".eventstream",
        "bedrock-converse/ddtrace-bedrock-invokestream-titan-single-chunk.eventstream",
    ],
)
def test_bedrock_invoke_stream_of_another_model_family_says_so(name: str) -> None:
    outcome = run_chunks([data_of(name)], "bedrock")
    assert isinstance(outcome.error, MalformedStreamError)
    assert "ConverseStream" in outcome.error.message
    assert outcome.events == []  # failed at the first chunk, nothing dropped silently


def test_bedrock_error_body_with_a_lower_case_message() -> None:
    with pytest.raises(ProviderError) as error:
        read("bedrock-converse/ddtrace-bedrock-converse-error-403-expired-token.json")
    assert error.value.message == "The security token included in the request is expired"
