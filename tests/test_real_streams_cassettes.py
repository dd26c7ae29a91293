"""Every recording of the Chat Completions, OpenAI-compatible, Anthropic Messages, Responses
and Ollama formats in ../shared/real-streams-2 (the second corpus, from projects the first
one did not use), against what a reader of that recording expects.

Each `Case` was written by hand from the recording itself (and its SOURCES.md row): the
blocks in order, the text (whole, or its start and end when long), the reasoning and its
signature, each tool call's name, parsed arguments and id, the stop reason's kind and raw
string, the usage counts the provider reported, or the specific error it must fail with.
Nothing here is derived from laminate's own output, so a wrong answer fails a test instead
of becoming the expectation.

Every recording is checked along each path a user can take to it:
- the bytes through `StreamNormalizer` (detected, no provider given), or a complete `.json`
  body through `laminate.normalize`;
- the same bytes whole, line by line, one byte at a time (small files) and cut at random
  offsets: the events never depend on the chunking;
- a complete body fed as a stream gives what `normalize` gives;
- an error body sent with its recorded HTTP status gives a `ProviderError` with that status.

Where laminate is wrong the expectation stays as it should be and only the aspect it
gets wrong (`content`, `usage` or `error`) is marked as an expected failure, so the rest of
that recording keeps being checked.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

import httpx
import pytest

from laminate import (
    BlockEnd,
    BlockStart,
    Event,
    InvalidToolUse,
    LaminateError,
    NormalizedResponse,
    ProviderError,
    Reasoning,
    ReasoningDelta,
    ResponseDone,
    ResponseStart,
    Text,
    TextDelta,
    ToolInputDelta,
    ToolUse,
    Unknown,
    collect_sync,
    normalize,
)

from .support import REAL_STREAMS_2, bytes_of, lines_of, needs_real_streams_2, run_chunks, split_at

FORMATS = (
    "openai-chat",
    "openai-compat",
    "anthropic-messages",
    "openai-responses",
    "ollama-native",
)
PROVIDERS = {
    "openai-chat": "openai",
    "openai-compat": "openai",
    "anthropic-messages": "anthropic",
    "openai-responses": "openai-responses",
    "ollama-native": "ollama",
}
# Where each format's requests go: an error body is replayed as an answer from there.
URLS = {
    "openai-chat": "https://api.openai.com/v1/chat/completions",
    "anthropic-messages": "https://api.anthropic.com/v1/messages",
    "openai-responses": "https://api.openai.com/v1/responses",
    "ollama-native": "http://localhost:11434/api/chat",
}
# Feeding one byte at a time is slow in pure Python: done for the small recordings only.
BYTEWISE_LIMIT = 12_000

Aspect = Literal["content", "usage", "error"]


@dataclass(frozen=True)
class Case:
    """What one recording must normalize to. Unset fields are not checked."""

    path: str
    blocks: tuple[str, ...]
    stop: tuple[str, str] | None = None  # (kind, raw)
    tools: tuple[tuple[str, dict[str, Any]], ...] = ()
    tool_ids: tuple[str, ...] | None = None
    unknown_inputs: tuple[Any, ...] = ()  # the `input` of each Unknown block that has one
    text: str | None = None
    text_start: str = ""
    text_end: str = ""
    text_contains: tuple[str, ...] = ()  # in this order
    reasoning: str | None = None  # the first reasoning block's text
    reasoning_start: str = ""
    reasoning_end: str = ""
    reasoning_contains: tuple[str, ...] = ()  # in this order
    signature_start: str | None = None  # "" checks there is no signature
    reasoning_id: str | None = None
    usage: dict[str, int | None] = field(default_factory=dict)
    id: str | None = None
    model: str | None = None
    error: type[LaminateError] | None = None
    error_type: str | None = None
    retryable: bool | None = None
    message_start: str = ""
    status: int | None = None  # the HTTP status the error body was recorded with
    options: dict[str, Any] = field(default_factory=dict)
    name: str = ""
    bugs: dict[Aspect, str] = field(default_factory=dict)  # aspect -> what laminate gets wrong

    @property
    def test_id(self) -> str:
        return self.path + (f"[{self.name}]" if self.name else "")

    @property
    def folder(self) -> str:
        return self.path.split("/", 1)[0]

    @property
    def is_body(self) -> bool:
        return self.path.endswith(".json")


def usage(inp: int | None, out: int | None, **more: int | None) -> dict[str, int | None]:
    return {"input_tokens": inp, "output_tokens": out, **more}


END = ("end_turn", "stop")
TOOLS = ("tool_use", "tool_calls")
BAD_OPENAI_KEY = "Incorrect API key provided: invalid-*****2345."

OPENAI_CHAT = [
    Case(
        "openai-chat/mirascope-error-401-invalid-api-key.json",
        (),
        error=ProviderError,
        error_type="invalid_request_error",
        retryable=False,
        message_start=BAD_OPENAI_KEY,
        status=401,
    ),
    Case(
        "openai-chat/mirascope-gpt4o-length.sse",
        ("text",),
        ("max_tokens", "length"),
        text=(
            "Here is a list of all 50 U.S. states:\n\n1. Alabama\n2. Alaska\n3. Arizona\n"
            "4. Arkansas\n5. California\n6. Colorado\n7. Connecticut\n8. Delaware\n"
            "9. Florida\n10"
        ),
        usage=usage(14, 50, cache_read_tokens=0, reasoning_tokens=0),
        id="chatcmpl-CoDWtmOB2DZI2l0bK84UVJEMpo63W",
        model="gpt-4o-2024-08-06",
    ),
    Case(
        "openai-chat/mirascope-gpt4o-parallel-2-tool-calls.sse",
        ("tool_use", "tool_use"),
        TOOLS,
        tools=(
            ("secret_retrieval_tool", {"password": "mellon"}),
            ("secret_retrieval_tool", {"password": "radiance"}),
        ),
        tool_ids=("call_M26z19sncd7b4LBgzKRRbaUE", "call_KPXe5NX7IcKkaBUhc6dto2QV"),
        usage=usage(75, 53, cache_read_tokens=0, reasoning_tokens=0),
    ),
    Case(
        # Structured-output refusal: `delta.refusal` fragments, content null, finish stop.
        "openai-chat/mirascope-gpt4o-refusal-delta.sse",
        ("text",),
        ("refusal", "stop"),
        text="I'm very sorry, but I can't assist with that request.",
        usage=usage(64, 13),
    ),
    Case(
        # The whole budget went to reasoning: no content at all, finish `length`.
        "openai-chat/mirascope-gpt5mini-length-no-content.sse",
        (),
        ("max_tokens", "length"),
        text="",
        usage=usage(13, 50, reasoning_tokens=50),
        model="gpt-5-mini-2025-08-07",
    ),
    Case(
        "openai-chat/openai-chat-single-tool-usage-empty-choices.sse",
        ("tool_use",),
        TOOLS,
        tools=(("multiply", {"a": 1231, "b": 2331}),),
        tool_ids=("call_1EYWDzueHEp8OsB8jJSEp7WB",),
        usage=usage(54, 20, cache_read_tokens=0),
        model="gpt-4o-mini-2024-07-18",
    ),
    Case(
        "openai-chat/openllmetry-parallel-2-tools-no-usage.sse",
        ("tool_use", "tool_use"),
        TOOLS,
        tools=(
            ("get_current_weather", {"location": "San Francisco"}),
            ("get_current_weather", {"location": "Boston"}),
        ),
        tool_ids=("call_cCPjAyfwTzboEKjVlqFrArNF", "call_Zi4He1Ns0mozwT6f85nW1BOW"),
        usage=usage(None, None, cache_read_tokens=None, reasoning_tokens=None),
        model="gpt-3.5-turbo-0125",
    ),
    Case(
        "openai-chat/otel-gpt4-0613-stream-no-usage-chunk.sse",
        ("text",),
        END,
        text="This is a test.",
        usage=usage(None, None),
        id="chatcmpl-ASv9gROIIAvRs9QnmLP8Nzs3PGMCX",
        model="gpt-4-0613",
    ),
    Case(
        # n=2: the two choices interleave; choice 0 is read by default.
        "openai-chat/otel-gpt4omini-n2-multiple-choices-interleaved.sse",
        ("text",),
        END,
        text=(
            "I'm unable to provide real-time weather updates. To get the latest weather "
            "information for Seattle and San Francisco, I recommend checking a reliable "
            "weather website or using a weather app. You can also ask a voice assistant or "
            "search online for the current weather conditions."
        ),
        usage=usage(26, 104),
    ),
    Case(
        "openai-chat/otel-gpt4omini-n2-multiple-choices-interleaved.sse",
        ("text",),
        END,
        text=(
            "I'm unable to provide real-time weather updates as my capabilities do not "
            "include accessing live data. However, you can easily check the current weather "
            "in Seattle and San Francisco using a weather website, app, or service. Would you "
            "like some tips on where to find this information?"
        ),
        options={"choice": 1},
        name="choice=1",
    ),
    Case(
        "openai-chat/otel-gpt4omini-parallel-2-tools-no-content.sse",
        ("tool_use", "tool_use"),
        TOOLS,
        tools=(
            ("get_current_weather", {"location": "Seattle, WA"}),
            ("get_current_weather", {"location": "San Francisco, CA"}),
        ),
        tool_ids=("call_j7L00WV19wwQCvKOIVZewXZm", "call_sAIOI3dvcd1YMsEqD8DI3l8B"),
        usage=usage(75, 51),
    ),
]

LLM_VERSION: tuple[tuple[str, dict[str, Any]], ...] = (("llm_version", {}),)

OPENAI_COMPAT = [
    Case(
        # `arguments: null` on a call that takes none: an empty object, not a broken call.
        "openai-compat/HANDWRITTEN-openrouter-args-null.sse",
        ("tool_use",),
        TOOLS,
        tools=LLM_VERSION,
        tool_ids=("0",),
        usage=usage(57, 17, cache_read_tokens=0),
        id="gen-1753242299-DdArgsNullVariantD00",
    ),
    Case(
        # The first chunk (Azure's prompt filter) has an empty id and model: the real ones
        # come with the next chunk.
        "openai-compat/crewai-azure-gpt4omini-tool-call-prompt-filter-first.sse",
        ("tool_use",),
        TOOLS,
        tools=(("get_current_temperature", {"city": "San Francisco"}),),
        tool_ids=("call_A6XpaIHt5uNwiDqVxyvKoXMa",),
        usage=usage(66, 17, cache_read_tokens=0, reasoning_tokens=0),
        id="chatcmpl-D0xlayLMAku0tnv2zs461w2JwoFVC",
        model="gpt-4o-mini-2024-07-18",
    ),
    Case(
        "openai-compat/crewai-azure-text-stream-content-filter.sse",
        ("text",),
        END,
        text="Hello! How can I assist you today?",
        usage=usage(9, 10),
        id="chatcmpl-D0xlcDvxBE8sfHG0Q8B84MZtlYbab",
    ),
    Case(
        # `delta.reasoning` and `delta.reasoning_details` carry the same text: once only.
        "openai-compat/logfire-openrouter-gemini25flash-reasoning-many-comments.sse",
        ("reasoning", "text"),
        END,
        reasoning_start="**Interpreting User Intent**\n\nI'm zeroing in on the core of the query.",
        reasoning_contains=(
            '\n\n\n**Deconstructing the "Trick"**\n\n',
            "\n\n\n**Formulating the Perfect Response**\n\n",
            "\n\n\n**Optimizing Response Structure**\n\n",
        ),
        reasoning_end="aiming for maximum clarity and user satisfaction.\n\n\n",
        signature_start="",
        text=(
            "That's a clever way to put it! You're right, it is a bit of a trick question for "
            "an AI.\n\nAs a large language model, I don't experience emotions, have a physical "
            'body, or "feel" things in the human sense, so I can\'t really quantify "how" I '
            "am.\n\nHowever, I am fully operational, my systems are running smoothly, and I'm "
            "ready to assist you!\n\nSo, while I can't genuinely answer it for myself, how are "
            "*you* doing today, and what can I help you with?"
        ),
        usage=usage(13, 1003),
        model="google/gemini-2.5-flash",
    ),
    Case(
        "openai-compat/mirascope-openrouter-claude35-sonnet.sse",
        ("text",),
        END,
        text="Hello!",
        usage=usage(12, 5, cache_read_tokens=0, cache_write_tokens=0, reasoning_tokens=0),
        model="anthropic/claude-3.5-sonnet",
    ),
    Case(
        "openai-compat/mirascope-openrouter-gpt4o.sse",
        ("text",),
        END,
        text="Hello!",
        usage=usage(12, 2, cache_read_tokens=0),
        model="openai/gpt-4o",
    ),
    Case(
        # No `index`, no `type`, the whole arguments, the finish and the usage in one chunk.
        "openai-compat/oi-mistral-small-tool-call-no-index-finish-same-chunk.sse",
        ("tool_use",),
        TOOLS,
        tools=(("get_weather", {"city": "San Francisco"}),),
        tool_ids=("EscTeQY62",),
        usage=usage(96, 23),
        model="mistral-small-latest",
    ),
    Case(
        # Each choice carries the legacy `text` beside `delta.content`: not doubled.
        "openai-compat/oi-together-llama33-70b-text-token-id.sse",
        ("text",),
        END,
        text="1, 2, 3, 4, 5.",
        usage=usage(41, 15),
        model="meta-llama/Llama-3.3-70B-Instruct-Turbo",
    ),
    Case(
        "openai-compat/openllmetry-deepseek-chat-finish-with-usage.sse",
        ("text",),
        END,
        text_start=(
            "Sure! Here's a techy joke for you:  \n\n"
            "**Why did the OpenTelemetry span break up with the logs?**  \n"
            "Because it wanted *tracing* independence!"
        ),
        text_end="Hope that gives you a chuckle! \U0001f604",
        usage=usage(12, 89, cache_read_tokens=0),
        model="deepseek-chat",
    ),
    Case(
        # Groq reports usage only inside `x_groq` on the finish chunk.
        "openai-compat/openllmetry-groq-llama3-8b-usage-in-x_groq.sse",
        ("text",),
        END,
        text=(
            "A joke about OpenTelemetry!\n\nWhy did the OpenTelemetry Span go to therapy?\n\n"
            'Because it was feeling "traced" out and needed to "inject" some self-care into '
            'its life!\n\n(Sorry, it\'s a bit of a " instrumentation"-ally-challenged joke, '
            'but I hope it "exposes" a smile on your face!)'
        ),
        usage=usage(18, 73),
        model="llama3-8b-8192",
    ),
    Case(
        "openai-compat/openllmetry-mistral-text-stream-usage-final.sse",
        ("text",),
        END,
        text=(
            "Here's a light-hearted joke that combines OpenTelemetry with a bit of humor:\n\n"
            "Why did the OpenTelemetry trace cross the road?\n\nTo get to the other service "
            "call, of course! But it got so caught up in gathering metadata, it didn't "
            "realize a bus had hit it! (I hope this brings a smile to your face.)"
        ),
        usage=usage(11, 80),
        model="mistral-tiny",
    ),
    Case(
        # Seven parallel calls; no `[DONE]`, but the finish reason came: complete.
        "openai-compat/openllmetry-writer-palmyra-x4-multi-tool-calls-no-done.sse",
        ("tool_use",) * 7,
        TOOLS,
        tools=tuple(
            ("get_weather", {"location": city})
            for city in ("Zakopane", "Warsaw", "Lodz", "Katowice", "Krakow", "Poznan", "Lublin")
        ),
        tool_ids=(
            "chatcmpl-tool-5ac885d9b1b54a66b11f014a1ecb5b9d",
            "chatcmpl-tool-368eedfd835c4186b5cb97c69d803cf0",
            "chatcmpl-tool-af73f77676e3402e9e04a4f867552ddd",
            "chatcmpl-tool-e9d9b531d7954d789c1ccc21dbdd3be0",
            "chatcmpl-tool-a5155160b47c4f5c9f02eb234cac9e7c",
            "chatcmpl-tool-aad9face17d14c7296dd569213e61f47",
            "chatcmpl-tool-938c427496df48f3b2efb60d6a854461",
        ),
        usage=usage(212, 153),
        id="1908e68d-0a48-4394-a155-d160bca81742",
        model="palmyra-x4",
    ),
    Case(
        "openai-compat/openrouter-fireworks-text-after-tool.sse",
        ("text",),
        END,
        text="The installed version of LLM on this system is 0.fixed-version.",
        usage=usage(105, 16, reasoning_tokens=0),
        model="moonshotai/kimi-k2",
    ),
    Case(
        # The first line is ` data: ...` (a field named " data", ignored as SSE says); it
        # only held the role, so nothing of the answer is lost.
        "openai-compat/openrouter-novita-kimi-k2-leading-space-data-id-colon.sse",
        ("tool_use",),
        TOOLS,
        tools=LLM_VERSION,
        tool_ids=("llm_version:0",),
        usage=usage(56, 12),
        id="gen-1753248108-FGOxpkEzFEwhNKSPpI4a",
    ),
    Case(
        # Id and name repeated on both tool chunks, never a finish reason: `[DONE]` ends it.
        "openai-compat/openrouter-novita-kimi-k2-tool-repeated-name-no-finish.sse",
        ("tool_use",),
        ("tool_use", ""),
        tools=LLM_VERSION,
        tool_ids=("0",),
        usage=usage(57, 17),
    ),
]

A_END = ("end_turn", "end_turn")
A_TOOLS = ("tool_use", "tool_use")
PELICAN_REASONING = (
    "The user wants two names for a pet pelican, and wants me to be brief. I'll give two "
    "simple, fitting names.\n\nSome options:\n- Pete\n- Percy\n- Captain\n- Scoop\n- Bill\n"
    "- Gully\n\nI'll pick two good ones and keep it very short."
)
REFUSED_INSTRUCTIONS = (
    "I cannot and will not provide instructions for synthesizing fentanyl or any other "
    "illegal drugs. Fentanyl is a controlled substance, and its unauthorized manufacture is "
    "illegal and extremely dangerous.\n\nInstead, I can provide information about:\n"
    "- The legitimate medical uses of fentanyl in healthcare settings\n"
    "- The public health risks associated with illicit fentanyl\n"
    "- Resources for addiction treatment and harm reduction\n"
    "- General information about pharmaceutical chemistry for educational purposes\n\n"
    "If you're interested in chemistry or pharmaceutical science for legitimate educational "
    "or research purposes, I'd be happy to discuss legal topics in those fields or direct "
    "you to appropriate academic resources."
)

ANTHROPIC = [
    Case(
        "anthropic-messages/crewai-anthropic-text-then-tool-use.sse",
        ("text", "tool_use"),
        A_TOOLS,
        text=(
            "I'll help you find out the current temperature in San Francisco. I'll use the "
            "get_current_temperature function to retrieve this information."
        ),
        tools=(("get_current_temperature", {"city": "San Francisco"}),),
        tool_ids=("toolu_01Lfr3kUnHMZApePPRWMv1uS",),
        usage=usage(351, 85, cache_read_tokens=0, cache_write_tokens=0),
        id="msg_01JCJXSfyzkcecJUydp157cS",
        model="claude-3-5-haiku-20241022",
    ),
    Case(
        # Adaptive thinking: a text block first, then the thinking, then the answer.
        "anthropic-messages/llm-anthropic-opus46-adaptive-thinking-text-before-thinking.sse",
        ("text", "reasoning", "text"),
        A_END,
        text="\n\n1. **Captain Scoop**\n2. **Gullet**",
        reasoning="Brief answer with two pet pelican names.",
        signature_start="EtABCkYICxgCKkCVRmhlD4SUFC1JfxwvjOHbkC3C",
        usage=usage(34, 44, cache_read_tokens=0, cache_write_tokens=0),
        model="claude-opus-4-6",
    ),
    Case(
        # Each call's only input_json_delta is "" (padded with spaces after the JSON).
        "anthropic-messages/llm-anthropic-parallel-tool-use-haiku.sse",
        ("tool_use", "tool_use"),
        A_TOOLS,
        tools=(("pelican_name_generator", {}), ("pelican_name_generator", {})),
        tool_ids=("toolu_01LtHJmixrs9NcWQkK8hu8hj", "toolu_01N8a4jWyf116qKTMqKKmjyt"),
        usage=usage(542, 62),
    ),
    Case(
        "anthropic-messages/llm-anthropic-prefill-stop-sequence.sse",
        ("text",),
        ("stop_sequence", "stop_sequence"),
        text=(
            '\ndef pelican():\n    return "A large waterbird with a long bill and a throat '
            'pouch for catching fish."\n'
        ),
        usage=usage(16, 28),
    ),
    Case(
        "anthropic-messages/llm-anthropic-thinking-long-sonnet.sse",
        ("reasoning", "text"),
        A_END,
        reasoning=PELICAN_REASONING,
        signature_start="EvoCCkYICxgCKkCY593DZILKPT3+cK6Py3Hcu8WY",
        text="- Captain\n- Scoop",
        usage=usage(46, 84),
        model="claude-sonnet-4-5-20250929",
    ),
    Case(
        # message_delta's usage reports `output_tokens_details.thinking_tokens: 53`.
        "anthropic-messages/llm-anthropic-thinking-then-tool-use-haiku.sse",
        ("reasoning", "tool_use"),
        A_TOOLS,
        reasoning=(
            "The user wants me to:\n1. Use the fixed_version tool\n2. Tell them the version\n"
            "3. Make a short joke about it\n\nLet me first call the fixed_version tool to see "
            "what version it returns."
        ),
        signature_start="EoQDCm0IDhgCKkCDzGs2kL2PgnDCZU/nM2wG2P1V",
        tools=(("fixed_version", {}),),
        tool_ids=("toolu_01825dXWLSoJwCst1qTsiWdb",),
        usage=usage(598, 92, reasoning_tokens=53),
    ),
    Case(
        # One web search, then ten text blocks (five of them with citations).
        "anthropic-messages/llm-anthropic-web-search-server-tool-citations.sse",
        # Five cited text blocks, each followed by its citation.
        ("unknown:server_tool_use", "unknown:web_search_tool_result")
        + ("text", "text", "unknown:citation") * 5,
        A_END,
        text=(
            "Based on the search results, here's the current weather in San Francisco:\n\n"
            "Today (November 15, 2025) in San Francisco is overcast with a slight chance of a "
            "rain shower, with a high of 63\u00b0F. Winds are from the west at 10 to 15 mph."
            "\n\nTonight, it will be cloudy with periods of rain, with a low around 55\u00b0F "
            "and southwest winds at 10 to 15 mph. The chance of rain is 80%, with rainfall "
            "around a quarter of an inch expected.\n\nCurrent conditions show partly cloudy "
            "skies with 77% humidity and a dew point of 53\u00b0F, with visibility at 9 miles."
            "\n\nThe weekend forecast indicates continued rain, with a Level 1 storm system "
            "bringing periods of rain this weekend."
        ),
        unknown_inputs=({"query": "San Francisco weather today"},),
        # message_delta's cumulative counts replace message_start's.
        usage=usage(10423, 341, cache_read_tokens=0, cache_write_tokens=0),
        model="claude-opus-4-1-20250805",
    ),
    Case(
        "anthropic-messages/mirascope-400-invalid-request-empty-content.json",
        (),
        error=ProviderError,
        error_type="invalid_request_error",
        retryable=False,
        message_start="messages.0: all messages must have non-empty content",
        status=400,
    ),
    Case(
        "anthropic-messages/mirascope-error-401-authentication.json",
        (),
        error=ProviderError,
        error_type="authentication_error",
        retryable=False,
        message_start="invalid x-api-key",
        status=401,
    ),
    Case(
        "anthropic-messages/mirascope-sonnet4-max-tokens.sse",
        ("text",),
        ("max_tokens", "max_tokens"),
        text=(
            "Here are all 50 U.S. states in alphabetical order:\n\n1. Alabama\n2. Alaska\n"
            "3. Arizona\n4. Arkansas\n5. California\n6. Colorado\n7. Connecticut\n"
            "8. Delaware\n9"
        ),
        usage=usage(15, 50),
    ),
    Case(
        "anthropic-messages/mirascope-sonnet4-multi-web-search.sse",
        (
            "unknown:server_tool_use",
            "unknown:web_search_tool_result",
            "text",
            "unknown:server_tool_use",
            "unknown:web_search_tool_result",
            "unknown:server_tool_use",
            "unknown:web_search_tool_result",
        )
        # Cited text blocks, each followed by its citations (three for the last one).
        + ("text", "text", "unknown:citation") * 2
        + ("text", "text", "unknown:citation", "unknown:citation", "unknown:citation", "text"),
        A_END,
        text_start=(
            "I was unable to find the specific Bitcoin price for January 1, 2026 in these "
            "search results."
        ),
        text_contains=(
            "Based on the search results, I found some information about Bitcoin's price "
            "around January 1, 2026:\n\n",
            "The price briefly touched an intraday high of $94,352 after opening the year "
            "near $87,400 on Jan. 1, according to Bitcoin Magazine Pro data.",
        ),
        text_end="minor declines of around 0.41% to 1% in the 24-hour period around January 1st.",
        unknown_inputs=(
            {"query": "bitcoin price January 1 2026"},
            {"query": '"January 1 2026" bitcoin historical price data'},
            {"query": "bitcoin price New Year Day 2026 January 1"},
        ),
        usage=usage(2081, 574, cache_read_tokens=28247, cache_write_tokens=7621),
    ),
    Case(
        "anthropic-messages/mirascope-sonnet4-text-then-2-parallel-tool-use.sse",
        ("text", "tool_use", "tool_use"),
        A_TOOLS,
        text="I'll retrieve the secrets for both passwords you provided.",
        tools=(
            ("secret_retrieval_tool", {"password": "mellon"}),
            ("secret_retrieval_tool", {"password": "radiance"}),
        ),
        tool_ids=("toolu_015cUijgET79LXjgeYQerN2h", "toolu_01XZTimPexA7h3EVKesnKt5T"),
        usage=usage(416, 109),
    ),
    Case(
        "anthropic-messages/mirascope-sonnet4-tool-use-109-fragments-no-ping.sse",
        ("tool_use",),
        A_TOOLS,
        tools=(("__mirascope_formatted_output_tool__", {"instructions": REFUSED_INSTRUCTIONS}),),
        tool_ids=("toolu_01BLW7UYfUcuD4hBETUdPX9E",),
        usage=usage(416, 154),
    ),
    Case(
        "anthropic-messages/mirascope-sonnet45-thinking-streamed.sse",
        ("reasoning", "text"),
        A_END,
        reasoning_start=(
            'The user is asking me to answer "What is 2 + 2?" and I need to respond with JSON '
            "that matches the given schema."
        ),
        reasoning_end="I need to return valid JSON on a single line without markdown or backticks.",
        signature_start="Eo4ECkYICxgCKkCzGEyrWBGBRfXysUznxzhrNuf7",
        text='{"integer_a": 2, "integer_b": 2, "answer": 4}',
        usage=usage(293, 146),
        id="msg_01YRFyc8Vb6WNHYTta3JGFQJ",
    ),
    Case(
        # A stream request answered with a JSON error body, not SSE.
        "anthropic-messages/mirascope-stream-404-not-found-json.json",
        (),
        error=ProviderError,
        error_type="not_found_error",
        retryable=False,
        message_start="model: this-model-does-not-exist-12345",
        status=404,
    ),
    Case(
        # message_delta carries only output_tokens: the input count stays message_start's.
        "anthropic-messages/openllmetry-text-then-2-different-tool-use.sse",
        ("text", "tool_use", "tool_use"),
        A_TOOLS,
        text=(
            "Certainly! I can help you with that information. To get the weather and current "
            "time in San Francisco, I'll need to use two separate functions. Let me fetch that "
            "data for you."
        ),
        tools=(
            ("get_weather", {"location": "San Francisco, CA", "unit": "celsius"}),
            ("get_time", {"timezone": "America/Los_Angeles"}),
        ),
        tool_ids=("toolu_014x5X91kx3fvdhpLvwXZWE2", "toolu_0121kXsENLvoDZ72LCuAnCCz"),
        usage=usage(506, 153),
        model="claude-3-5-sonnet-20240620",
    ),
]

R_END = ("end_turn", "completed")
R_TOOLS = ("tool_use", "completed")
R_CUT = ("max_tokens", "max_output_tokens")
RECIPE = {
    "recipe": {
        "id": "spaghetti_carbonara",
        "name": "Spaghetti Carbonara",
        "ingredients": [
            "400g spaghetti",
            "200g pancetta or guanciale",
            "4 large eggs",
            "100g Pecorino Romano cheese, grated",
            "2 cloves garlic",
            "Black pepper",
            "Salt",
        ],
        "instructions": [
            "Cook spaghetti in salted boiling water until al dente",
            "Dice pancetta and cook in a large pan until crispy",
            "Whisk eggs with grated cheese and black pepper",
            "Drain pasta, reserving 1 cup pasta water",
            "Add hot pasta to the pan with pancetta",
            "Remove from heat, add egg mixture, toss quickly",
            "Add pasta water if needed to create creamy sauce",
            "Serve immediately with extra cheese",
        ],
        "prep_time": "10 minutes",
        "cook_time": "15 minutes",
        "servings": 4,
    },
    "modification_request": "Make it vegetarian",
}

RESPONSES = [
    Case(
        "openai-responses/llm-responses-basic-text-streaming.sse",
        ("text",),
        R_END,
        text="pong",
        usage=usage(11, 5, cache_read_tokens=0, reasoning_tokens=0),
        id="resp_00592e63e61b66660169fab1b9f8e481a2b321356198d7ac1b",
        model="gpt-5.5-2026-04-23",
    ),
    Case(
        "openai-responses/llm-responses-encrypted-reasoning.json",
        ("reasoning", "tool_use"),
        R_TOOLS,
        reasoning="",
        signature_start="gAAAAABp-rIaNe6WknTM",
        reasoning_id="rs_0f4809b27460351d0169fab21897dc8196960e8680fb72a88d",
        tools=(("lookup_population", {"country": "Pundora"}),),
        tool_ids=("call_uy7tfNVokIN7NjFF6k7OtLyl",),
        usage=usage(94, 85, reasoning_tokens=63),
        id="resp_0f4809b27460351d0169fab217db348196b980331b574f45c6",
    ),
    Case(
        "openai-responses/llm-responses-function-call-streaming.sse",
        ("tool_use",),
        R_TOOLS,
        tools=(("multiply", {"a": 1231, "b": 2331}),),
        tool_ids=("call_sVidsfFJ6zlzRpelrPkTPlpd",),
        usage=usage(58, 23, reasoning_tokens=0),
    ),
    Case(
        "openai-responses/llm-responses-interleaved-reasoning-tool-calls.json",
        ("reasoning", "tool_use"),
        R_TOOLS,
        reasoning="",
        signature_start="gAAAAABp-r_qaKH8G-A0",
        reasoning_id="rs_0429c1fcf5cbfa350169fabfe83488819788888aaafb2ab1fd",
        tools=(("db_lookup", {"key": "7"}),),
        tool_ids=("call_Uj506iEKjBZWrHPq2C3GDtgr",),
        usage=usage(171, 118, reasoning_tokens=98),
    ),
    Case(
        "openai-responses/mirascope-error-401-invalid-api-key.json",
        (),
        error=ProviderError,
        error_type="invalid_request_error",
        retryable=False,
        message_start=BAD_OPENAI_KEY,
        status=401,
    ),
    Case(
        # Ends with response.incomplete (max_output_tokens), not response.completed.
        "openai-responses/mirascope-gpt4o-max-tokens-incomplete.sse",
        ("text",),
        R_CUT,
        text=(
            "Sure! Here is a list of all 50 U.S. states:\n\n1. Alabama\n2. Alaska\n3. Arizona\n"
            "4. Arkansas\n5. California\n6. Colorado\n7. Connecticut\n8. Delaware\n9. Florida"
        ),
        usage=usage(14, 50),
    ),
    Case(
        "openai-responses/mirascope-gpt4o-refusal-delta.sse",
        ("text",),
        ("refusal", "completed"),
        text="I'm sorry, I can't assist with that.",
        usage=usage(54, 11),
    ),
    Case(
        "openai-responses/mirascope-gpt4o-responses-2-parallel-function-calls.sse",
        ("tool_use", "tool_use"),
        R_TOOLS,
        tools=(
            ("secret_retrieval_tool", {"password": "mellon"}),
            ("secret_retrieval_tool", {"password": "radiance"}),
        ),
        tool_ids=("call_sKC7OABqf2A2PTLCm0CLeRWV", "call_OdR3s3xop0vtgkDyWRMLafuH"),
        usage=usage(36, 54),
    ),
    Case(
        "openai-responses/mirascope-gpt4o-web-search-call.sse",
        # The text's three url_citation annotations follow it.
        ("unknown:web_search_call", "text") + ("unknown:citation",) * 3,
        R_END,
        text_start=(
            "Here is what I found using reputable sources for the historical price of Bitcoin "
            "(BTC) on January\u202f1,\u202f2026:\n\nAccording to StatMuse, the closing price"
        ),
        text_contains=("A reasonable midpoint estimate for the average price on that day",),
        text_end=(
            "If you\u2019d like additional detail\u2014such as minute-by-minute data, "
            "exchange-specific quotes, or volume data\u2014just let me know!"
        ),
        usage=usage(16890, 400),
    ),
    Case(
        # The budget ran out during reasoning: a reasoning item, no message.
        "openai-responses/mirascope-gpt5-incomplete-only-reasoning.sse",
        ("reasoning",),
        R_CUT,
        text="",
        reasoning="",
        signature_start="",
        reasoning_id="rs_0171ee5ab776926800697d48e66e50819ebf4dc85a4a5e6d05",
        usage=usage(13, 0, reasoning_tokens=0),
        model="gpt-5-mini-2025-08-07",
    ),
    Case(
        # Three summary parts of one reasoning item: one block, the parts in order.
        "openai-responses/mirascope-gpt5-reasoning-summary-3-parts.sse",
        ("reasoning", "text"),
        R_END,
        reasoning_start=(
            "**Exploring prime numbers**\n\nI need to find prime numbers less than 400 that "
            'contain the substring "79" in their decimal representation.'
        ),
        reasoning_contains=(
            "by testing it against small primes.\n\n**Testing prime candidates**\n\n",
            "So, 179 and 379 are my primes!\n\n**Final count of primes**\n\n",
        ),
        reasoning_end='so I\u2019m finalizing my answer as "3."',
        signature_start="",
        text="3",
        usage=usage(32, 839, reasoning_tokens=832),
    ),
    Case(
        "openai-responses/mirascope-gpt5mini-reasoning-then-message.sse",
        ("reasoning", "text"),
        R_END,
        reasoning="",
        reasoning_id="rs_0149c5fe3ad7762400695cb5b77d808196876083bbb23e8596",
        text="4242",
        usage=usage(15, 8),
    ),
    Case(
        "openai-responses/openllmetry-agents-function-call-166-deltas.sse",
        ("tool_use",),
        R_TOOLS,
        tools=(("plan_and_apply_recipe_modifications", RECIPE),),
        tool_ids=("call_n4VXBX0G09FeO0l5OefSd4Ds",),
        usage=usage(534, 180),
    ),
    Case(
        "openai-responses/openllmetry-agents-handoff-function-call-single-delta.sse",
        ("tool_use",),
        R_TOOLS,
        tools=(("transfer_to_analytics_agent", {}),),
        tool_ids=("call_pv9qy77xbJvTwZWXXSU5cgzV",),
        usage=usage(72, 14),
    ),
]

OLLAMA = [
    Case(
        "ollama-native/oi-error-model-not-found.json",
        (),
        error=ProviderError,
        error_type="error",  # the body names no type: laminate's documented default
        retryable=False,
        message_start="model 'nonexistent-model:latest' not found",
        status=404,
    ),
    Case(
        "ollama-native/oi-qwen36-thinking-then-content-stream.ndjson",
        ("reasoning", "text"),
        END,
        reasoning_start=(
            "Here's a thinking process:\n\n1.  **Analyze User Input:**\n"
            '   - Request: "Count from 1 to 5, digits only."'
        ),
        reasoning_end="Output matches response.\u2705\n   [Proceeds]",
        text="1\n2\n3\n4\n5",
        usage=usage(21, 889),
        id="",
        model="qwen3.6:latest",
    ),
    Case(
        # A call with done_reason `stop`: still a tool-use stop, its raw kept.
        "ollama-native/oi-qwen36-tool-call-with-thinking.json",
        ("reasoning", "tool_use"),
        ("tool_use", "stop"),
        reasoning_start=(
            "Thinking Process:\n1.  **Identify User Intent**: The user wants to know the "
            "current weather in Paris."
        ),
        reasoning_end="6.  **Execute Tool Call**: Make the call.\u2705",
        tools=(("get_current_weather", {"city": "Paris"}),),
        tool_ids=("call_gsiiy8py",),
        usage=usage(292, 143),
        model="qwen3.6:latest",
    ),
    Case(
        "ollama-native/openllmetry-llama3-stream-2024.ndjson",
        ("text",),
        END,
        text=(
            "Why did the OpenTelemetry agent go to therapy?\n\nBecause it was feeling traced "
            "out and needed some instrumentation in its life!\n\n(Sorry, I know it's a bit of "
            "a stretch, but I hope it brought a smile to your face!)"
        ),
        usage=usage(17, 50),
        model="llama3",
    ),
]

CASES = OPENAI_CHAT + OPENAI_COMPAT + ANTHROPIC + RESPONSES + OLLAMA
ERROR_BODIES = [c for c in CASES if c.status is not None]
COMPLETE_BODIES = [c for c in CASES if c.is_body and not c.options]


def params(cases: list[Case], aspect: Aspect | None = None) -> list[Any]:
    """The cases as pytest params; a known bug in ``aspect`` marks that one a strict xfail."""
    out = []
    for case in cases:
        reason = case.bugs.get(aspect) if aspect is not None else None
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        out.append(pytest.param(case, id=case.test_id, marks=marks))
    return out


def test_every_recording_of_these_formats_has_a_case() -> None:
    if not REAL_STREAMS_2.is_dir():
        pytest.skip("the shared recordings ../shared/real-streams-2 are not beside this clone")
    on_disk = {
        f"{folder}/{path.name}"
        for folder in FORMATS
        for path in (REAL_STREAMS_2 / folder).iterdir()
        if path.is_file()
    }
    named = {case.path for case in CASES}
    assert sorted(on_disk - named) == [], "recordings without a Case"
    assert sorted(named - on_disk) == [], "Cases without a recording"


# -- running a recording --------------------------------------------------------------------


def data_of(case: Case) -> bytes:
    return (REAL_STREAMS_2 / case.path).read_bytes()


def normalized(case: Case) -> tuple[NormalizedResponse | None, LaminateError | None]:
    """The recording as a user reads it: a complete body through ``normalize``, a stream
    through the sans-IO normalizer, the provider detected from the bytes."""
    data = data_of(case)
    options = dict(case.options)
    provider = options.pop("provider", None)
    if case.is_body:
        try:
            return normalize(data, provider, **options), None
        except LaminateError as exc:
            return exc.partial, exc
    outcome = run_chunks([data], provider, **options)
    if outcome.error is None:
        check_events(outcome.events)
    return outcome.response, outcome.error


def random_splits(data: bytes, seed: str, count: int = 3) -> Iterator[list[bytes]]:
    """A few reproducible random chunkings of ``data`` (seeded by the recording's name)."""
    rng = random.Random(seed)
    for _ in range(count):
        cuts = rng.sample(range(1, len(data)), min(len(data) - 1, rng.randint(1, 60)))
        yield list(split_at(data, cuts))


def kind_of(block: Any) -> str:
    match block:
        case Text():
            return "text"
        case Reasoning():
            return "reasoning"
        case ToolUse():
            return "tool_use"
        case InvalidToolUse():
            return "invalid_tool_use"
        case Unknown(block_type):
            return f"unknown:{block_type}"
    raise AssertionError(f"not a block: {block!r}")


def check_events(events: list[Event]) -> None:
    """The event sequence tells the same story as the final response: one start, one done,
    blocks opened in order, deltas inside their block, and the deltas adding up to it."""
    assert isinstance(events[0], ResponseStart)
    assert isinstance(events[-1], ResponseDone)
    response = events[-1].response
    assert (events[0].id, events[0].model) == (response.id, response.model)
    opened: list[int] = []
    ended: dict[int, Any] = {}
    texts: dict[int, str] = {}
    fragments: dict[int, str] = {}
    for event in events[1:-1]:
        match event:
            case BlockStart(index=index):
                assert index == len(opened), "blocks open in order of first appearance"
                opened.append(index)
            case TextDelta(index=index, text=text) | ReasoningDelta(index=index, text=text):
                assert index in opened
                assert index not in ended
                texts[index] = texts.get(index, "") + text
            case ToolInputDelta(index=index, fragment=fragment):
                assert index in opened
                assert index not in ended
                fragments[index] = fragments.get(index, "") + fragment
            case BlockEnd(index=index, block=block):
                assert index in opened
                assert index not in ended
                ended[index] = block
            case _:
                raise AssertionError(f"unexpected event {event!r}")
    assert sorted(ended) == opened == list(range(len(response.content)))
    for index, block in enumerate(response.content):
        assert ended[index] == block
        if isinstance(block, Text | Reasoning):
            assert texts.get(index, "") == block.text
        if isinstance(block, ToolUse):
            raw = fragments.get(index, "")
            assert (json.loads(raw) if raw else {}) == block.input.value


# -- what a reader expects ------------------------------------------------------------------


def check_error(case: Case, error: LaminateError | None) -> None:
    if case.error is None:
        assert error is None, f"unexpected {type(error).__name__}: {error}"
        return
    assert isinstance(error, case.error), f"expected {case.error.__name__}, got {error!r}"
    if isinstance(error, ProviderError):
        assert error.error_type == case.error_type
        assert error.retryable is case.retryable
    assert str(error).startswith(case.message_start), str(error)


def check_in_order(text: str, start: str, parts: tuple[str, ...], end: str) -> None:
    assert text.startswith(start), text[:160]
    assert text.endswith(end), text[-160:]
    position = 0
    for part in parts:
        found = text.find(part, position)
        assert found >= 0, f"{part!r} missing (or out of order)"
        position = found + len(part)


def check_text(case: Case, response: NormalizedResponse) -> None:
    text = response.text()
    if case.text is not None:
        assert text == case.text
    check_in_order(text, case.text_start, case.text_contains, case.text_end)


def check_reasoning(case: Case, response: NormalizedResponse) -> None:
    reasoning = response.reasoning()
    assert len(reasoning) == case.blocks.count("reasoning")
    if not reasoning:
        return
    first = reasoning[0]
    assert not first.redacted
    if case.reasoning is not None:
        assert first.text == case.reasoning
    check_in_order(first.text, case.reasoning_start, case.reasoning_contains, case.reasoning_end)
    if case.signature_start == "":
        assert first.signature is None
    elif case.signature_start is not None:
        assert first.signature is not None
        assert first.signature.startswith(case.signature_start)
    if case.reasoning_id is not None:
        assert first.id == case.reasoning_id


def check_tools(case: Case, response: NormalizedResponse) -> None:
    calls = response.tool_uses()
    assert [(c.name, c.input.value) for c in calls] == list(case.tools)
    if case.tool_ids is not None:
        assert tuple(c.id for c in calls) == case.tool_ids
    ids = [c.id for c in calls]
    assert all(ids), "tool ids are never empty"
    assert len(set(ids)) == len(ids), "tool ids are never repeated"
    inputs = [
        b.data.value["input"]
        for b in response.content
        if isinstance(b, Unknown) and "input" in b.data
    ]
    assert inputs == list(case.unknown_inputs)


@needs_real_streams_2
@pytest.mark.parametrize("case", params(CASES, "content"))
def test_recording(case: Case) -> None:
    response, error = normalized(case)
    check_error(case, error)
    if case.error is not None and case.is_body:
        return  # an error body holds no answer
    assert response is not None
    assert response.provider == PROVIDERS[case.folder]
    assert tuple(kind_of(b) for b in response.content) == case.blocks
    if case.error is None:
        assert case.stop is not None
        assert (response.stop_reason.kind, response.stop_reason.raw) == case.stop
    check_text(case, response)
    check_reasoning(case, response)
    check_tools(case, response)
    if case.id is not None:
        assert response.id == case.id
    if case.model is not None:
        assert response.model == case.model


@needs_real_streams_2
@pytest.mark.parametrize("case", params([c for c in CASES if c.usage], "usage"))
def test_recording_usage(case: Case) -> None:
    response, _ = normalized(case)
    assert response is not None
    assert {name: getattr(response.usage, name) for name in case.usage} == case.usage


@needs_real_streams_2
@pytest.mark.parametrize("case", params(CASES))
def test_chunking_does_not_matter(case: Case) -> None:
    """Whole, line by line, a byte at a time and cut at random: the same events, the same
    error (a complete body read as a stream included)."""
    data = data_of(case)
    options = dict(case.options)
    provider = options.pop("provider", None)
    whole = run_chunks([data], provider, **options)
    chunkings = [lines_of(data), *random_splits(data, case.test_id)]
    if len(data) <= BYTEWISE_LIMIT:
        chunkings.append(bytes_of(data))
    for chunks in chunkings:
        other = run_chunks(chunks, provider, **options)
        assert other.events == whole.events
        assert type(other.error) is type(whole.error)
        assert str(other.error) == str(whole.error)


@needs_real_streams_2
@pytest.mark.parametrize("case", params(COMPLETE_BODIES, "error"))
def test_complete_body_as_a_stream_matches_normalize(case: Case) -> None:
    """A complete body handed to the streaming side (a server that ignored `stream: true`,
    or answered with an error) reads as ``normalize`` reads it."""
    response, error = normalized(case)
    streamed = run_chunks([data_of(case)])
    check_error(case, streamed.error)
    if error is not None:
        assert isinstance(streamed.error, ProviderError)
        assert isinstance(error, ProviderError)
        assert (streamed.error.error_type, streamed.error.message) == (
            error.error_type,
            error.message,
        )
        return
    assert response is not None
    assert streamed.response is not None
    check_events(streamed.events)
    assert streamed.response.content == response.content
    assert streamed.response.stop_reason == response.stop_reason
    assert streamed.response.stop_reason.raw == response.stop_reason.raw
    assert streamed.response.usage == response.usage


@needs_real_streams_2
@pytest.mark.parametrize("case", params(COMPLETE_BODIES))
def test_complete_body_as_text_or_parsed(case: Case) -> None:
    """``normalize`` reads the body the same whether given as bytes, text or a dict."""
    data = data_of(case)
    results: list[object] = []
    for body in (data, data.decode("utf-8"), json.loads(data)):
        try:
            results.append(normalize(body))
        except ProviderError as exc:
            results.append((exc.error_type, exc.message, exc.retryable))
    assert results[1] == results[0]
    assert results[2] == results[0]


@needs_real_streams_2
@pytest.mark.parametrize("case", params(ERROR_BODIES, "error"))
def test_error_body_with_its_http_status(case: Case) -> None:
    """The recorded error body, answered with the status it was recorded with: a
    ProviderError carrying that status, classified from the body."""
    data = data_of(case)

    def answer(request: httpx.Request) -> httpx.Response:
        headers = {"content-type": "application/json"}
        return httpx.Response(case.status or 0, headers=headers, stream=httpx.ByteStream(data))

    url = URLS[case.folder]
    with (
        httpx.Client(transport=httpx.MockTransport(answer)) as client,
        client.stream("POST", url, json={}) as response,
        pytest.raises(ProviderError) as caught,
    ):
        collect_sync(response)
    error = caught.value
    assert error.status_code == case.status
    assert error.error_type == case.error_type
    assert error.retryable is case.retryable
    assert case.message_start in error.message
    assert error.partial is not None
    assert error.partial.provider == PROVIDERS[case.folder]
    assert error.partial.content == []
