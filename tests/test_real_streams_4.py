"""Every response recording of ../shared/real-streams-4 (the fourth corpus: 149 bodies
and streams of 14 providers, recorded in 2026 by other projects' test suites), against
what a reader of that recording expects.

Each `Case` was written by hand from the recording itself (and its SOURCES.md row): the
blocks in order, the text (whole, or its start and end when long), the first readable
reasoning's start, each tool call's name, parsed arguments and id, the stop reason's kind
and raw string, the usage counts the provider reported, or the specific error it must
fail with (and the HTTP status it was recorded with). Nothing here is derived from
laminate's own output.

Every recording is read along each path a user can take to it:
- the bytes through `StreamNormalizer`, the provider detected, or a complete `.json` body
  through `laminate.normalize`; and both again with the provider named;
- the same bytes whole, line by line, one byte at a time (small files) and cut at random
  offsets: the events never depend on the chunking;
- a complete body fed as a stream gives what `normalize` gives, from bytes, text or a dict;
- an error body answered with its recorded HTTP status gives a `ProviderError` with it.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from laminate import (
    LaminateError,
    NormalizedResponse,
    ProviderError,
    Text,
    ToolUse,
    collect_sync,
    normalize,
)

from .support import (
    REAL_STREAMS_4,
    RECORDING_FOLDERS,
    bytes_of,
    lines_of,
    needs_real_streams_4,
    run_chunks,
)
from .test_real_streams_cassettes import (
    Case,
    check_error,
    check_events,
    check_in_order,
    check_text,
    kind_of,
    random_splits,
    usage,
)

# Where each format's requests go: an error body is replayed as an answer from there.
URLS = {
    "openai-chat": "https://api.openai.com/v1/chat/completions",
    "openai-compat": "https://openrouter.ai/api/v1/chat/completions",
    "anthropic-messages": "https://api.anthropic.com/v1/messages",
    "openai-responses": "https://api.openai.com/v1/responses",
    "gemini-native": (
        "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent"
    ),
    "cohere": "https://api.cohere.com/v2/chat",
}
# Feeding one byte at a time is slow in pure Python: done for the small recordings only.
BYTEWISE_LIMIT = 12_000

OPENAI_CHAT = [
    Case(
        "openai-chat/crush-openai-gpt5-agent-stream-2-parallel-tool-calls.sse",
        ("tool_use", "tool_use"),
        ("tool_use", "tool_calls"),
        tools=(("glob", {"pattern": "**/*.go"}), ("ls", {"depth": 1})),
        tool_ids=("call_XNJBmJ3UIKrBN8hBqcEaU9yu", "call_3gjn2wDOLXX3t9EvrY16cw5N"),
        text="",
        usage=usage(6395, 630, cache_read_tokens=3456, reasoning_tokens=576),
    ),
    Case(
        "openai-chat/crush-openai-gpt5-agent-stream-multiedit-92-arg-deltas.sse",
        ("tool_use",),
        ("tool_use", "tool_calls"),
        tools=(
            (
                "multiedit",
                {
                    "file_path": "/tmp/crush-test/TestCoderAgent/openai-gpt-5/multiedit_tool/main.go",  # noqa: E501
                    "edits": [
                        {
                            "old_string": '\tfmt.Println("Hello, World!")',
                            "new_string": '\tfmt.Println("Hello, Crush!")',
                        },
                        {
                            "old_string": '\tfmt.Println("Hello, Crush!")',
                            "new_string": '\t// Greeting\n\tfmt.Println("Hello, Crush!")',
                        },
                    ],
                },
            ),
        ),
        tool_ids=("call_2hzHz91aslzg48tDaSK7ttbD",),
        text="",
        usage=usage(6584, 2030, cache_read_tokens=6400, reasoning_tokens=1920),
    ),
    Case(
        "openai-chat/crush-openai-gpt5-title-generation-stream.sse",
        ("text",),
        ("end_turn", "stop"),
        text="Greeting Message",
        usage=usage(142, 2, cache_read_tokens=0, reasoning_tokens=0),
    ),
    Case(
        "openai-chat/lmnr-litellm-gpt41nano-stream-tool-call-obfuscation.sse",
        ("tool_use",),
        ("tool_use", "tool_calls"),
        tools=(("get_weather", {"location": "Tokyo"}),),
        tool_ids=("call_IhZLnCkrAUOgIDlUihqSAPyD",),
        text="",
        usage=usage(72, 44, cache_read_tokens=0, reasoning_tokens=0),
    ),
    Case(
        "openai-chat/phoenix-openai-chat-error-404-model-not-found-4-space-indent.json",
        (),
        error=ProviderError,
        error_type="invalid_request_error",
        retryable=False,
        message_start="The model `gpt-nonexistent-model` does not exist or you do n",
        status=404,
    ),
    Case(
        "openai-chat/phoenix-openai-gpt4-stream-tool-call-refusal-null.sse",
        ("tool_use",),
        ("tool_use", "tool_calls"),
        tools=(("get_current_weather", {"location": "San Francisco"}),),
        tool_ids=("call_6DO189nmEhLF3dzTTD51BMAC",),
        text="",
        usage=usage(68, 17, cache_read_tokens=0, reasoning_tokens=0),
    ),
    Case(
        "openai-chat/phoenix-openai-gpt4omini-stream-forced-tool-call-evaluator.sse",
        ("tool_use",),
        ("tool_use", "tool_calls"),
        tools=(("correctness", {"label": "correct"}),),
        tool_ids=("call_etldxOdkjqXjTYNK3AiTiy9G",),
        text="",
        usage=usage(118, 15, cache_read_tokens=0, reasoning_tokens=0),
    ),
    Case(
        "openai-chat/rubyllm-openai-gpt4o-mini-search-preview-url-citations.json",
        ("text", "unknown:citation", "unknown:citation", "unknown:citation"),
        ("end_turn", "stop"),
        text_start="As of August 19, 2026, the latest stable version o",
        text_end="cycle-799?utm_source=openai)) ",
        usage=usage(13, 197, cache_read_tokens=0, reasoning_tokens=0),
    ),
    Case(
        "openai-chat/rubyopenai-gpt35-nonstream-2-tool-calls-tool-choice-required.json",
        ("tool_use", "tool_use"),
        ("tool_use", "tool_calls"),
        tools=(
            ("get_current_weather", {"location": "San Francisco"}),
            ("get_current_weather", {"location": "Japan"}),
        ),
        tool_ids=("call_jpE40AW1quMaiDYWNV4Aob6D", "call_AZ51gEeXi37kKhFpXrcJzNQl"),
        text="",
        usage=usage(70, 46, cache_read_tokens=0, reasoning_tokens=0),
    ),
    Case(
        "openai-chat/rubyopenai-gpt35-turn2-assistant-replay-with-refusal-annotations.json",
        ("text",),
        ("end_turn", "stop"),
        text="The weather in both San Francisco and Japan is nice.",
        usage=usage(104, 11, cache_read_tokens=0, reasoning_tokens=0),
    ),
]

OPENAI_COMPAT = [
    Case(
        "openai-compat/crush-hyper-deepseek-v4-agent-stream-parallel-tool-calls-cost.sse",
        ("reasoning", "text", "tool_use", "tool_use"),
        ("tool_use", "tool_calls"),
        tools=(
            ("glob", {"pattern": "**/*.go"}),
            ("ls", {"path": "/tmp/crush-test/TestCoderAgent/deepseek-v4/parallel_tool_calls"}),
        ),
        tool_ids=("call_67389dea0febe22c", "call_9b9d9dc30e777faf"),
        text="\n\n",
        reasoning_start="The user wants me to run glob for .go files and ls",
        usage=usage(9005, 115),
    ),
    Case(
        "openai-compat/crush-hyper-deepseek-v4-title-length-reasoning-only.sse",
        ("reasoning",),
        ("max_tokens", "length"),
        text="",
        reasoning_start="The user wants a title for the given content. The ",
        usage=usage(153, 41, reasoning_tokens=40),
    ),
    Case(
        "openai-compat/crush-hyper-glm51-agent-stream-62-tool-arg-deltas.sse",
        ("tool_use",),
        ("tool_use", "tool_calls"),
        tools=(
            (
                "multiedit",
                {
                    "edits": [
                        {
                            "new_string": '\t// Greeting\n\tfmt.Println("Hello, Crush!")',
                            "old_string": '\tfmt.Println("Hello, World!")',
                        }
                    ],
                    "file_path": "/tmp/crush-test/TestCoderAgent/glm-5.1/multiedit_tool/main.go",
                },
            ),
        ),
        tool_ids=("call_18573f9956c37b82",),
        text="",
        usage=usage(91, 76, cache_read_tokens=8576),
    ),
    Case(
        "openai-compat/crush-openrouter-kimi-k2-agent-stream-parallel-tool-calls.sse",
        ("tool_use", "tool_use"),
        ("tool_use", "tool_calls"),
        tools=(("glob", {"pattern": "*.go"}), ("ls", {})),
        tool_ids=("glob:0", "ls:1"),
        text="",
        usage=usage(6513, 24, cache_read_tokens=6144, reasoning_tokens=0, cache_write_tokens=0),
    ),
    Case(
        "openai-compat/crush-zai-glm46-agent-stream-reasoning-then-whole-tool-calls.sse",
        ("reasoning", "tool_use", "tool_use"),
        ("tool_use", "tool_calls"),
        tools=(
            ("glob", {"pattern": "**/*.go"}),
            ("ls", {"path": "/tmp/crush-test/TestCoderAgent/zai-glm4.6/parallel_tool_calls"}),
        ),
        tool_ids=("call_eed4dcc84484436dabda6a0d", "call_f2fe9a4ba66845568e4cbd34"),
        text="",
        reasoning_start="The user wants me to:\n1. Use glob to find all .go ",
        usage=usage(7146, 131, cache_read_tokens=7003, reasoning_tokens=92),
    ),
    Case(
        # A choice without a message: no block, the filter's stop.
        "openai-compat/lmnr-azure-openai-gpt35-content-filter-choice-without-message.json",
        (),
        ("content_filter", "content_filter"),
        text="",
        usage=usage(15, 19),
    ),
    Case(
        "openai-compat/prism-groq-llama33-nonstream-parallel-tools-x-groq.json",
        ("tool_use", "tool_use"),
        ("tool_use", "tool_calls"),
        tools=(
            ("weather", {"city": "Detroit"}),
            ("search", {"query": "Tigers game time today in Detroit"}),
        ),
        tool_ids=("call_3whd", "call_6xxk"),
        text="",
        usage=usage(310, 32),
    ),
    Case(
        "openai-compat/prism-mistral-magistral-stream-thinking-chunks-num-cached-tokens.sse",
        ("reasoning", "text"),
        ("end_turn", "stop"),
        text="The answer is 4.",
        reasoning_start='The question is a simple arithmetic problem: "What',
        usage=usage(10, 142),
    ),
    Case(
        "openai-compat/prism-openrouter-gpt5-stream-after-empty-params-tool.sse",
        ("text",),
        ("end_turn", "stop"),
        text="The current time is 08:00:00.",
        usage=usage(75, 15, cache_read_tokens=0, reasoning_tokens=0),
    ),
    Case(
        "openai-compat/prism-perplexity-sonar-stream-spaced-json-no-done.sse",
        ("text",),
        ("end_turn", "stop"),
        text_start="I am Qwen, a large-scale language model developed ",
        text_end=" anything I can help you with?",
        usage=usage(4, 97),
    ),
    Case(
        "openai-compat/prism-zai-nonstream-reasoning-content-tool-calls-pretty.json",
        ("reasoning", "text", "tool_use", "tool_use"),
        ("tool_use", "tool_calls"),
        tools=(("search_games", {"city": "Detroit"}), ("get_weather", {"city": "Detroit"})),
        tool_ids=("call_-8062812703858712887", "call_-8062812703858712886"),
        text_start="\nI'll help you find the Tigers game time in Detroi",
        text_end="ieces of information for you.\n",
        reasoning_start="\nThe user is asking for two things:\n1. What time t",
        usage=usage(272, 210, cache_read_tokens=271),
    ),
    Case(
        "openai-compat/rubyllm-azure-foundry-error-429-rate-limit.json",
        (),
        error=ProviderError,
        error_type="RateLimitReached",
        retryable=True,
        message_start="Your requests to grok-4-1-fast-non-reasoning for grok-4-1-fa",
        status=429,
    ),
    Case(
        "openai-compat/rubyllm-azure-foundry-gpt5nano-stream-refusal-null.sse",
        ("text",),
        ("end_turn", "stop"),
        text_start='- The question to ask: "Will your answer to this q',
        text_end="ecause it\u2019s part of a paradox.",
        usage=usage(50, 4350, cache_read_tokens=0, reasoning_tokens=4160),
    ),
    Case(
        "openai-compat/rubyllm-azure-foundry-grok-stream-tool-call-mixed-json-style.sse",
        ("tool_use",),
        ("tool_use", "tool_calls"),
        tools=(("best_language_to_learn", {}),),
        tool_ids=("call_39096608",),
        text="",
        usage=usage(205, 18, cache_read_tokens=159, reasoning_tokens=0),
    ),
    Case(
        "openai-compat/rubyllm-deepseek-chat-stream-tool-call-25-arg-deltas.sse",
        ("tool_use",),
        ("tool_use", "tool_calls"),
        tools=(("weather", {"latitude": "52.5200", "longitude": "13.4050"}),),
        tool_ids=("call_00_MRi7F2sfOet5LgvlZL3W5236",),
        text="",
        usage=usage(348, 65, cache_read_tokens=0),
    ),
    Case(
        "openai-compat/rubyllm-deepseek-chat-stream-tool-call-no-params.sse",
        ("text", "tool_use"),
        ("tool_use", "tool_calls"),
        tools=(("best_language_to_learn", {}),),
        tool_ids=("call_00_rGGuLWLHvYxVPMtiENE41150",),
        text="Let me look that up for you!",
        usage=usage(291, 39, cache_read_tokens=0),
    ),
    Case(
        "openai-compat/rubyllm-deepseek-error-400-octet-stream.json",
        (),
        error=ProviderError,
        error_type="invalid_request_error",
        retryable=False,
        message_start="This model's maximum context length is 1048565 tokens. Howev",
        status=400,
    ),
    Case(
        "openai-compat/rubyllm-deepseek-reasoner-turn2.json",
        ("reasoning", "text"),
        ("end_turn", "stop"),
        text="8 multiplied by 2 equals 16.",
        reasoning_start="We need to multiply the previous result (8) by 2. ",
        usage=usage(30, 34, cache_read_tokens=0, reasoning_tokens=24),
    ),
    Case(
        "openai-compat/rubyllm-deepseek-v4-flash-reasoning-content-effort-high.json",
        ("reasoning", "text"),
        ("end_turn", "stop"),
        text="4",
        reasoning_start="We need answer simple. 2+2=4. Just number.",
        usage=usage(97, 17, cache_read_tokens=0, reasoning_tokens=15),
    ),
    Case(
        "openai-compat/rubyllm-gpustack-qwen3-finish-length-timing-usage.json",
        ("reasoning", "text"),
        ("max_tokens", "length"),
        text_start="\n\nThe provided `license.txt` file outlines the ter",
        text_end="ures of the MIT License:\n1. **",
        reasoning_start="\nOkay, the user is asking what's in the license.tx",
        usage=usage(544, 2048, cache_read_tokens=0, reasoning_tokens=386),
    ),
    Case(
        "openai-compat/rubyllm-gpustack-qwen3-stream-reasoning-content.sse",
        ("reasoning", "text"),
        ("end_turn", "stop"),
        text="\n\n1, 2, 3.",
        reasoning_start="\nOkay, the user wants me to count from 1 to 3. Let",
        usage=usage(15, 171, cache_read_tokens=0, reasoning_tokens=160),
    ),
    Case(
        "openai-compat/rubyllm-mistral-error-401-detail.json",
        (),
        error=ProviderError,
        error_type="error",
        retryable=False,
        message_start="Invalid API Key",
        status=401,
    ),
    Case(
        "openai-compat/rubyllm-mistral-small-stream-thinking-content-array-closed.sse",
        ("reasoning", "text"),
        ("end_turn", "stop"),
        text="144",
        reasoning_start="The user is asking for the product of 12 multiplie",
        usage=usage(31, 66, cache_read_tokens=0),
    ),
    Case(
        "openai-compat/rubyllm-mistral-small-stream-tool-call-single-chunk-usage.sse",
        ("tool_use",),
        ("tool_use", "tool_calls"),
        tools=(("weather", {"latitude": "52.5200", "longitude": "13.4050"}),),
        tool_ids=("g6fVbXS8K",),
        text="",
        usage=usage(159, 28, cache_read_tokens=128),
    ),
    Case(
        "openai-compat/rubyllm-mistral-small-thinking-chunks-replayed-turn2.json",
        ("reasoning", "text"),
        ("end_turn", "stop"),
        text="154",
        reasoning_start="The user wants me to add 10 to the previous result",
        usage=usage(113, 58, cache_read_tokens=0),
    ),
    Case(
        "openai-compat/rubyllm-ollama-cloud-error-400-prompt-too-long.json",
        (),
        error=ProviderError,
        error_type="invalid_request_error",
        retryable=False,
        message_start="prompt too long; exceeded max context length by 1119046 toke",
        status=400,
    ),
    Case(
        "openai-compat/rubyllm-ollama-cloud-gpt-oss-stream-tool-call.sse",
        ("reasoning", "tool_use"),
        ("tool_use", "tool_calls"),
        tools=(("weather", {"latitude": "52.5200", "longitude": "13.4050"}),),
        tool_ids=("call_x7rn5sl5",),
        text="",
        reasoning_start="We need to call weather function with latitude and",
        usage=usage(169, 55),
    ),
    Case(
        "openai-compat/rubyllm-ollama-v1-qwen3-stream-reasoning-field-tool-call.sse",
        ("reasoning", "tool_use"),
        ("tool_use", "tool_calls"),
        tools=(("weather", {"latitude": "52.5200", "longitude": "13.4050"}),),
        tool_ids=("call_blqyt530",),
        text="",
        reasoning_start="Okay, the user is asking for the weather in Berlin",
        usage=usage(195, 140),
    ),
    Case(
        "openai-compat/rubyllm-openrouter-error-400-previous-errors.json",
        (),
        error=ProviderError,
        error_type="400",
        retryable=False,
        message_start="This endpoint's maximum context length is 200000 tokens. How",
        status=400,
    ),
    Case(
        "openai-compat/rubyllm-openrouter-error-401-numeric-code.json",
        (),
        error=ProviderError,
        error_type="401",
        retryable=False,
        message_start="Missing Authentication header",
        status=401,
    ),
    Case(
        # Four encrypted reasoning_details (redacted blocks) and their three summaries, read as
        # one readable block.
        "openai-compat/rubyllm-openrouter-gpt52-web-search-annotations.json",
        (
            "reasoning",
            "reasoning",
            "reasoning",
            "reasoning",
            "reasoning",
            "text",
            "unknown:citation",
        ),
        ("end_turn", "stop"),
        text_start="The latest stable Ruby version is **Ruby 4.0.6**. ",
        text_end=".ruby-lang.org/en/downloads/))",
        usage=usage(16924, 485, cache_read_tokens=0, reasoning_tokens=449, cache_write_tokens=0),
    ),
    Case(
        "openai-compat/rubyllm-openrouter-haiku45-stream-tool-call-processing-comments-double-finish.sse",
        ("tool_use",),
        ("tool_use", "tool_calls"),
        tools=(("weather", {"latitude": "52.5200", "longitude": "13.4050"}),),
        tool_ids=("toolu_bdrk_01FnJwNhnbF7UbXLQGHJ5dda",),
        text="",
        usage=usage(633, 75, cache_read_tokens=0, reasoning_tokens=0, cache_write_tokens=0),
    ),
    Case(
        "openai-compat/rubyllm-openrouter-reasoning-details-replayed-turn2.json",
        ("text",),
        ("end_turn", "stop"),
        text_start="The current weather in Berlin is **15\u00b0C (59\u00b0F) and",
        text_end=" mild, overcast day in Berlin.",
        usage=usage(762, 34, cache_read_tokens=0, reasoning_tokens=0, cache_write_tokens=0),
    ),
    Case(
        "openai-compat/rubyllm-openrouter-stream-reasoning-details-tool-calls.sse",
        ("reasoning", "tool_use"),
        ("tool_use", "tool_calls"),
        tools=(("reasoning_weather", {"city": "Berlin"}),),
        tool_ids=("toolu_bdrk_01L9pX1Wp4FAEq9TT2Z6UAe7",),
        text="",
        reasoning_start="The user is asking for the weather in Berlin and s",
        usage=usage(626, 106, cache_read_tokens=0, reasoning_tokens=54, cache_write_tokens=0),
    ),
    Case(
        "openai-compat/rubyllm-perplexity-sonar-reasoning-pro-no-think-tags-search-results.json",
        ("text",),
        ("end_turn", "stop"),
        text_start="You ask the mirror: **\u201cWill the answer you are abo",
        text_end="future) to obey its own rules.",
        usage=usage(45, 482),
    ),
    Case(
        # An empty `delta` beside the `message`: the message is the answer.
        "openai-compat/rubyllm-perplexity-sonar-search-results.json",
        ("text",),
        ("end_turn", "stop"),
        text_start="**Ruby** is a **general-purpose, interpreted, dyna",
        text_end="most like plain English.[4][3]",
        usage=usage(8, 178),
    ),
    Case(
        "openai-compat/rubyllm-perplexity-sonar-stream-crlf-usage-every-chunk.sse",
        ("text",),
        ("end_turn", "stop"),
        text="1 2 3",
        usage=usage(8, 5),
    ),
    Case(
        "openai-compat/rubyopenai-groq-llama3-stream-usage-inside-x-groq.sse",
        ("text",),
        ("end_turn", "stop"),
        text_start="Hello! It's nice to meet you. Is there something I",
        text_end="ith or would you like to chat?",
        usage=usage(12, 24),
    ),
]

OPENAI_RESPONSES = [
    Case(
        "openai-responses/lmnr-litellm-openai-responses-stream.sse",
        ("text",),
        ("end_turn", "completed"),
        text="Paris",
        usage=usage(25, 2, cache_read_tokens=0, reasoning_tokens=0),
    ),
    Case(
        "openai-responses/phoenix-openai-responses-error-400-model-not-found.json",
        (),
        error=ProviderError,
        error_type="invalid_request_error",
        retryable=False,
        message_start="The requested model 'gpt-nonexistent-model' does not exist.",
        status=400,
    ),
    Case(
        "openai-responses/rubyllm-azure-openai-v1-responses-stream.sse",
        ("reasoning", "text"),
        ("end_turn", "completed"),
        text="4",
        usage=usage(18, 120, cache_read_tokens=0, reasoning_tokens=64, cache_write_tokens=0),
    ),
    Case(
        "openai-responses/rubyllm-bedrock-mantle-gpt-oss-responses-function-call.json",
        ("reasoning", "tool_use"),
        ("tool_use", "completed"),
        tools=(("bedrock_mantle_weather", {"city": "Berlin"}),),
        tool_ids=("call_836db14dc7486091",),
        text="",
        reasoning_start="The user asks: \"What's the weather in Berlin? Use ",
        usage=usage(139, 77, cache_read_tokens=0, reasoning_tokens=55),
    ),
    Case(
        # No `event:` lines; the message's one part is streamed as content_index 1.
        "openai-responses/rubyllm-bedrock-mantle-gpt-oss-responses-stream-no-event-lines.sse",
        ("reasoning", "text"),
        ("end_turn", "completed"),
        text="Sure! Here\u2019s a quick count:\n\n1  \n2  \n3  \n4  \n5",
        reasoning_start="We simply count: 1, 2, 3, 4, 5.",
        usage=usage(75, 46, cache_read_tokens=0, reasoning_tokens=20),
    ),
    Case(
        "openai-responses/rubyllm-deepseek-v4-responses-stream-reasoning-text-deltas.sse",
        ("reasoning", "text"),
        ("end_turn", "completed"),
        text="4",
        reasoning_start="We need answer simple. Need just number. 4.",
        usage=usage(95, 14, cache_read_tokens=0, reasoning_tokens=12),
    ),
    Case(
        "openai-responses/rubyllm-deepseek-v4-responses-web-search.json",
        (
            "reasoning",
            "unknown:web_search_call",
            "reasoning",
            "text",
            "unknown:web_search_call",
            "unknown:web_search_call",
            "reasoning",
            "text",
            "unknown:web_search_call",
            "reasoning",
            "text",
        ),
        ("end_turn", "completed"),
        text_start="Let me verify the official Ruby releases page to c",
        text_end="gnificant Ractor improvements.",
        reasoning_start="The user wants me to search the web for the latest",
        usage=usage(29386, 1450, cache_read_tokens=15872, reasoning_tokens=733),
    ),
    Case(
        "openai-responses/rubyllm-openai-gpt52-prompt-cache-key-cached-tokens.json",
        ("text",),
        ("end_turn", "completed"),
        text="OK",
        usage=usage(6165, 5, cache_read_tokens=6016, reasoning_tokens=0, cache_write_tokens=0),
    ),
    Case(
        "openai-responses/rubyllm-openai-gpt52-web-search-call-items.json",
        ("unknown:web_search_call", "text", "unknown:citation"),
        ("end_turn", "completed"),
        text_start="The latest stable Ruby (MRI/CRuby) version is **Ru",
        text_end="downloads/?utm_source=openai))",
        usage=usage(8614, 95, cache_read_tokens=0, reasoning_tokens=48, cache_write_tokens=0),
    ),
    Case(
        "openai-responses/rubyllm-openai-gpt54-reasoning-replayed-turn2.json",
        ("reasoning", "text"),
        ("end_turn", "completed"),
        text="16",
        usage=usage(31, 16, cache_read_tokens=0, reasoning_tokens=9, cache_write_tokens=0),
    ),
    Case(
        "openai-responses/rubyllm-openai-gpt54-stream-reasoning-encrypted-text.sse",
        ("reasoning", "text"),
        ("end_turn", "completed"),
        text_start="Ask:\n\n**\u201cIs the answer to this question \u2018no\u2019?\u201d**\n\n",
        text_end="ced the mirror into a paradox.",
        usage=usage(50, 667, cache_read_tokens=0, reasoning_tokens=516, cache_write_tokens=0),
    ),
    Case(
        "openai-responses/rubyllm-openai-gpt5nano-image-in-function-call-output.json",
        ("reasoning", "text"),
        ("end_turn", "completed"),
        text_start="The image shows a small square icon of a red, face",
        text_end="object centered in the square.",
        usage=usage(132, 690, cache_read_tokens=0, reasoning_tokens=576, cache_write_tokens=0),
    ),
    Case(
        "openai-responses/rubyllm-openai-gpt5nano-json-schema-output.json",
        ("reasoning", "text"),
        ("end_turn", "completed"),
        text='{"name":"John","age":30}',
        usage=usage(45, 752, cache_read_tokens=0, reasoning_tokens=704, cache_write_tokens=0),
    ),
    Case(
        "openai-responses/rubyllm-openai-gpt5nano-parallel-function-calls.json",
        ("reasoning", "tool_use", "tool_use"),
        ("tool_use", "completed"),
        tools=(
            ("weather", {"latitude": "52.5200", "longitude": "13.4050"}),
            ("best_language_to_learn", {}),
        ),
        tool_ids=("call_NeNP7bv8VH3cJTxFagvafR2L", "call_oAtUHJKdNzt8gEH4M6P3Grd3"),
        text="",
        usage=usage(112, 284, cache_read_tokens=0, reasoning_tokens=192, cache_write_tokens=0),
    ),
    Case(
        "openai-responses/rubyllm-openai-gpt5nano-stream-after-function-call-output.sse",
        ("reasoning", "text"),
        ("end_turn", "completed"),
        text="Paris (48.8575, 2.3514): 15\u00b0C, wind 10 km/h.",
        usage=usage(453, 227, cache_read_tokens=0, reasoning_tokens=192, cache_write_tokens=0),
    ),
    Case(
        "openai-responses/rubyllm-openai-gpt5nano-stream-function-call-args-deltas.sse",
        ("reasoning", "tool_use"),
        ("tool_use", "completed"),
        tools=(("weather", {"latitude": "52.5200", "longitude": "13.4050"}),),
        tool_ids=("call_E9m0fralKLjUmND1MuTXjnqm",),
        text="",
        usage=usage(87, 339, cache_read_tokens=0, reasoning_tokens=256, cache_write_tokens=0),
    ),
    Case(
        "openai-responses/rubyllm-openai-responses-error-400-context-length.json",
        (),
        error=ProviderError,
        error_type="invalid_request_error",
        retryable=False,
        message_start="Your input exceeds the context window of this model. Please ",
        status=400,
    ),
    Case(
        "openai-responses/rubyllm-openai-responses-error-401-invalid-key.json",
        (),
        error=ProviderError,
        error_type="invalid_request_error",
        retryable=False,
        message_start="Incorrect API key provided: invalid-key. You can find your A",
        status=401,
    ),
    Case(
        "openai-responses/rubyllm-xai-grok43-stream-reasoning-summary-text.sse",
        ("reasoning", "text"),
        ("end_turn", "completed"),
        text_start='**Ask: "Will you answer this question with the wor',
        text_end="lent on the original question.",
        reasoning_start='The query is: "If a magic mirror shows your future',
        usage=usage(235, 1703, cache_read_tokens=128, reasoning_tokens=1530),
    ),
    Case(
        "openai-responses/rubyllm-xai-grok43-stream-reasoning-summary-then-empty-args-call.sse",
        ("reasoning", "tool_use"),
        ("tool_use", "completed"),
        tools=(("best_language_to_learn", {}),),
        tool_ids=("call-e90191c4-4a4c-44c2-92f5-98caf16932b6-0",),
        text="",
        reasoning_start="The question is: \"What's the best language to lear",
        usage=usage(289, 171, cache_read_tokens=128, reasoning_tokens=163),
    ),
    Case(
        "openai-responses/rubyllm-xai-grok43-web-search-server-side.json",
        (
            "reasoning",
            "unknown:web_search_call",
            "unknown:web_search_call",
            "reasoning",
            "reasoning",
            "reasoning",
            "text",
            "unknown:citation",
        ),
        ("end_turn", "completed"),
        text_start="**The latest stable Ruby version is 4.0.6** (relea",
        text_end="rsions like 3.3.12 and 3.4.10.",
        reasoning_start='The question is: "Search the web: what is the late',
        usage=usage(5913, 364, cache_read_tokens=2048, reasoning_tokens=263),
    ),
    Case(
        "openai-responses/rubyllm-xai-responses-error-400-bad-key.json",
        (),
        error=ProviderError,
        error_type="invalid-argument",
        retryable=False,
        message_start="Incorrect API key provided. You can obtain an API key from h",
        status=400,
    ),
]

ANTHROPIC_MESSAGES = [
    Case(
        "anthropic-messages/crush-anthropic-sonnet46-agent-stream-2-parallel-tool-use.sse",
        ("tool_use", "tool_use"),
        ("tool_use", "tool_use"),
        tools=(
            ("glob", {"pattern": "**/*.go"}),
            ("ls", {"path": "/tmp/crush-test/TestCoderAgent/anthropic-sonnet/parallel_tool_calls"}),
        ),
        tool_ids=("toolu_01QYv5XJsq3fV1NnHGH5qE1j", "toolu_01RZ13pSVWhjBKJJQfzAcEmP"),
        text="",
        usage=usage(3, 110, cache_read_tokens=3733, cache_write_tokens=4564),
    ),
    Case(
        "anthropic-messages/crush-anthropic-sonnet46-agent-stream-edit-tool-input-deltas.sse",
        ("tool_use",),
        ("tool_use", "tool_use"),
        tools=(
            (
                "edit",
                {
                    "file_path": "/tmp/crush-test/TestCoderAgent/anthropic-sonnet/update_a_file/main.go",  # noqa: E501
                    "old_string": '\tfmt.Println("Hello, World!")',
                    "new_string": '\tfmt.Println("Hello from Crush!")',
                },
            ),
        ),
        tool_ids=("toolu_01CeMWmSYU2GhDe3EebTJCke",),
        text="",
        usage=usage(1, 136, cache_read_tokens=8371, cache_write_tokens=146),
    ),
    Case(
        "anthropic-messages/lmnr-bedrock-invoke-anthropic-claude3-haiku-msg-bdrk.json",
        ("text",),
        ("end_turn", "end_turn"),
        text_start="Okay, here's an OpenTelemetry-themed joke for you:",
        text_end="tware engineering-themed joke.",
        usage=usage(17, 158),
    ),
    Case(
        "anthropic-messages/phoenix-anthropic-haiku45-beta-stream-text.sse",
        ("text",),
        ("end_turn", "end_turn"),
        text="The quick brown fox jumps over the lazy dog.",
        usage=usage(22, 11, cache_read_tokens=0, cache_write_tokens=0),
    ),
    Case(
        "anthropic-messages/prism-anthropic-claude37-stream-web-search-citations.sse",
        (
            "text",
            "unknown:server_tool_use",
            "unknown:web_search_tool_result",
            "text",
            "text",
            "unknown:citation",
            "text",
            "text",
            "unknown:citation",
            "text",
            "text",
            "unknown:citation",
            "text",
        ),
        ("end_turn", "end_turn"),
        text_start="I'll check the current weather in London, UK for y",
        text_end="nst the heat and sun exposure.",
        usage=usage(9911, 343, cache_read_tokens=0, cache_write_tokens=0),
    ),
    Case(
        "anthropic-messages/rubyllm-anthropic-error-400-context-length.json",
        (),
        error=ProviderError,
        error_type="invalid_request_error",
        retryable=False,
        message_start="prompt is too long: 3333404 tokens > 200000 maximum",
        status=400,
    ),
    Case(
        "anthropic-messages/rubyllm-anthropic-error-401-auth.json",
        (),
        error=ProviderError,
        error_type="authentication_error",
        retryable=False,
        message_start="invalid x-api-key",
        status=401,
    ),
    Case(
        "anthropic-messages/rubyllm-anthropic-haiku45-code-execution-20260521.json",
        ("unknown:server_tool_use", "unknown:bash_code_execution_tool_result", "text"),
        ("end_turn", "end_turn"),
        text="The exact product of 123456789 \u00d7 987654321 is **121932631112635269**.",
        usage=usage(4658, 120, cache_read_tokens=0, cache_write_tokens=0),
    ),
    Case(
        "anthropic-messages/rubyllm-anthropic-haiku45-disable-parallel-tool-use.json",
        ("tool_use",),
        ("tool_use", "tool_use"),
        tools=(("weather", {"latitude": "52.5200", "longitude": "13.4050"}),),
        tool_ids=("toolu_01D8Vv47Y4PPAQgEB4Vkk1x5",),
        text="",
        usage=usage(508, 66, cache_read_tokens=0, cache_write_tokens=0),
    ),
    Case(
        "anthropic-messages/rubyllm-anthropic-haiku45-image-in-tool-result.json",
        ("text",),
        ("end_turn", "end_turn"),
        text_start="The returned image shows an abstract, three-dimens",
        text_end="c object the sole focal point.",
        usage=usage(675, 176, cache_read_tokens=0, cache_write_tokens=0),
    ),
    Case(
        "anthropic-messages/rubyllm-anthropic-haiku45-parallel-tool-use.json",
        ("tool_use", "tool_use"),
        ("tool_use", "tool_use"),
        tools=(
            ("weather", {"latitude": "52.5200", "longitude": "13.4050"}),
            ("best_language_to_learn", {}),
        ),
        tool_ids=("toolu_01TjHdHxyQNDy4DipRieJU5n", "toolu_01QHFWAkMuVLb3VgS4EDGUGY"),
        text="",
        usage=usage(701, 98, cache_read_tokens=0, cache_write_tokens=0),
    ),
    Case(
        "anthropic-messages/rubyllm-anthropic-haiku45-pdf-page-citations.json",
        (
            "text",
            "unknown:citation",
            "text",
            "text",
            "unknown:citation",
            "text",
            "text",
            "unknown:citation",
            "text",
        ),
        ("end_turn", "end_turn"),
        text_start='The document is a simple PDF file titled "Sample P',
        text_end="ller text throughout the page.",
        usage=usage(4250, 115, cache_read_tokens=0, cache_write_tokens=0),
    ),
    Case(
        "anthropic-messages/rubyllm-anthropic-haiku45-prompt-cache-read.json",
        ("text",),
        ("end_turn", "end_turn"),
        text="OK",
        usage=usage(10, 4, cache_read_tokens=7351, cache_write_tokens=0),
    ),
    Case(
        "anthropic-messages/rubyllm-anthropic-haiku45-search-result-citations.json",
        ("text", "unknown:citation"),
        ("end_turn", "end_turn"),
        text_start="The Ruby programming language was created by Yukih",
        text_end="by Yukihiro Matsumoto in 1993.",
        usage=usage(1253, 39, cache_read_tokens=0, cache_write_tokens=0),
    ),
    Case(
        "anthropic-messages/rubyllm-anthropic-haiku45-stream-after-tool-result.sse",
        ("text",),
        ("end_turn", "end_turn"),
        text_start="The weather in Berlin is currently:\n- **Temperatur",
        text_end="ct for a walk around the city!",
        usage=usage(748, 49, cache_read_tokens=0, cache_write_tokens=0),
    ),
    Case(
        "anthropic-messages/rubyllm-anthropic-haiku45-stream-citations-delta.sse",
        ("text", "unknown:citation"),
        ("end_turn", "end_turn"),
        text_start="The Ruby programming language was created by Yukih",
        text_end="by Yukihiro Matsumoto in 1993.",
        usage=usage(672, 39, cache_read_tokens=0, cache_write_tokens=0),
    ),
    Case(
        "anthropic-messages/rubyllm-anthropic-haiku45-stream-thinking-signature.sse",
        ("reasoning", "text"),
        ("end_turn", "end_turn"),
        text_start="I'd ask: **\"What would you say if I asked you this",
        text_end="hat draws you to this paradox?",
        reasoning_start="This is a clever paradox question. Let me think th",
        usage=usage(80, 638, cache_read_tokens=0, cache_write_tokens=0),
    ),
    Case(
        "anthropic-messages/rubyllm-anthropic-haiku45-stream-tool-no-params-caller-direct.sse",
        ("tool_use",),
        ("tool_use", "tool_use"),
        tools=(("best_language_to_learn", {}),),
        tool_ids=("toolu_01EcJNDtgucTvxugUxuGcJmF",),
        text="",
        usage=usage(579, 41, cache_read_tokens=0, cache_write_tokens=0),
    ),
    Case(
        "anthropic-messages/rubyllm-anthropic-haiku45-stream-web-search-server-tool.sse",
        (
            "unknown:server_tool_use",
            "unknown:web_search_tool_result",
            "text",
            "unknown:citation",
            "text",
            "text",
            "unknown:citation",
            "text",
        ),
        ("end_turn", "end_turn"),
        text_start="The latest stable Ruby version is 4.0.6, which was",
        text_end="ich was released in July 2026.",
        usage=usage(9447, 114, cache_read_tokens=0, cache_write_tokens=0),
    ),
    Case(
        "anthropic-messages/rubyllm-anthropic-haiku45-thinking-signature-replayed.json",
        ("reasoning", "text"),
        ("end_turn", "end_turn"),
        text="8 \u00d7 2 = **16**",
        reasoning_start="The user wants me to multiply 8 by 2.\n8 \u00d7 2 = 16",
        usage=usage(68, 44, cache_read_tokens=0, cache_write_tokens=0),
    ),
    Case(
        "anthropic-messages/rubyllm-anthropic-sonnet46-compaction-block-usage-iterations.json",
        ("unknown:compaction", "text"),
        ("end_turn", "end_turn"),
        text="The fox jumps in your notes.",
        usage=usage(162, 11, cache_read_tokens=0, cache_write_tokens=0),
    ),
    Case(
        "anthropic-messages/rubyllm-anthropic-sonnet5-adaptive-thinking-display-summarized.json",
        ("reasoning", "text"),
        ("end_turn", "end_turn"),
        text_start="# Setting Up the Problem\n\n**Let:**\n- c = number of",
        text_end="2) + (12 \u00d7 4) = 46 + 48 = 94 \u2713",
        reasoning_start="Setting up two equations for heads and legs, I sol",
        usage=usage(44, 626, cache_read_tokens=0, cache_write_tokens=0),
    ),
]

GEMINI_NATIVE = [
    Case(
        "gemini-native/lmnr-genai-gemini-include-thoughts-nonstream.json",
        ("reasoning", "text"),
        ("end_turn", "STOP"),
        text_start="Let's count them:\n\ns-t-**r**-a-w-b-e-**r**-**r**-y",
        text_end='imes in the word "strawberry".',
        reasoning_start="**The Strawberry 'R' Count**\n\nAlright, let's break",
        usage=usage(25, 233, reasoning_tokens=184),
    ),
    Case(
        "gemini-native/lmnr-genai-gemini25-flash-lite-stream-null-content-chunk.sse",
        ("text",),
        ("end_turn", "STOP"),
        text_start="The capital of France is ** renowned worldwide for",
        text_end="e an unforgettable experience.",
        usage=usage(14, 797),
    ),
    Case(
        "gemini-native/lmnr-litellm-gemini25-flash-lite-stream-functioncall-snake-case-request.sse",
        ("tool_use",),
        ("tool_use", "STOP"),
        tools=(("get_weather", {"location": "Tokyo"}),),
        text="",
        usage=usage(65, 15),
    ),
    Case(
        "gemini-native/prism-gemini3-pro-stream-thought-then-functioncall.sse",
        ("reasoning", "tool_use"),
        ("tool_use", "STOP"),
        tools=(("weather", {"city": "San Francisco"}),),
        text="",
        reasoning_start="**Checking the Weather Data**\n\nI'm currently focus",
        usage=usage(131, 110, reasoning_tokens=95),
    ),
    Case(
        "gemini-native/rubyllm-gemini-error-400-api-key-invalid.json",
        (),
        error=ProviderError,
        error_type="INVALID_ARGUMENT",
        retryable=False,
        message_start="API key not valid. Please pass a valid API key.",
        status=400,
    ),
    Case(
        "gemini-native/rubyllm-gemini-error-429-resource-exhausted.json",
        (),
        error=ProviderError,
        error_type="RESOURCE_EXHAUSTED",
        retryable=True,
        message_start="You exceeded your current quota, please check your plan and ",
        status=429,
    ),
    Case(
        "gemini-native/rubyllm-gemini25-flash-parallel-functioncalls.json",
        ("tool_use", "tool_use"),
        ("tool_use", "STOP"),
        tools=(
            ("weather", {"latitude": "52.5200", "longitude": "13.4050"}),
            ("best_language_to_learn", {}),
        ),
        text="",
        usage=usage(143, 153, reasoning_tokens=109),
    ),
    Case(
        "gemini-native/rubyllm-gemini25-flash-stream-after-functionresponse-finish-on-last-chunk.sse",
        ("text",),
        ("end_turn", "STOP"),
        text="Ruby is the best language to learn.",
        usage=usage(158, 8),
    ),
    Case(
        "gemini-native/rubyllm-gemini25-flash-stream-functioncall-empty-args-finishmessage.sse",
        ("tool_use",),
        ("tool_use", "STOP"),
        tools=(("best_language_to_learn", {}),),
        text="",
        usage=usage(48, 75, reasoning_tokens=61),
    ),
    Case(
        "gemini-native/rubyllm-gemini25-flash-stream-thoughts-token-count.sse",
        ("text",),
        ("end_turn", "STOP"),
        text_start="Let's think step-by-step:\n\n1.  You have the number",
        text_end="of four items.\n\nSo, 2 + 2 = 4.",
        usage=usage(13, 208, reasoning_tokens=137),
    ),
    Case(
        "gemini-native/rubyllm-gemini3-flash-response-json-schema.json",
        ("text",),
        ("end_turn", "STOP"),
        text='{"name":"John","age":30}',
        usage=usage(13, 268, reasoning_tokens=258),
    ),
    Case(
        "gemini-native/rubyllm-gemini3-flash-stream-thought-parts-signature-last.sse",
        ("reasoning", "text"),
        ("end_turn", "STOP"),
        text_start="To see your future self in such a mirror, you must",
        text_end="choosing to change their mind.",
        reasoning_start="**Pondering Mirror Queries**\n\nI'm wrestling with t",
        usage=usage(44, 1510, reasoning_tokens=902),
    ),
    Case(
        "gemini-native/rubyllm-gemini31-pro-functioncall-thought-signature.json",
        ("reasoning", "tool_use"),
        ("tool_use", "STOP"),
        tools=(("weather", {"latitude": "52.5200", "longitude": "13.4050"}),),
        tool_ids=("call_883098",),
        text="",
        reasoning_start="**My Analysis of the User's Weather Query**\n\nOkay,",
        usage=usage(120, 164, reasoning_tokens=132),
    ),
    Case(
        "gemini-native/rubyllm-gemini31-pro-signature-replayed-turn2.json",
        ("reasoning", "text"),
        ("end_turn", "STOP"),
        text="The current weather in Berlin is 15\u00b0C with a wind speed of 10 km/h.",
        reasoning_start="Okay, here's my take on those thoughts, framed as ",
        usage=usage(339, 74, reasoning_tokens=51),
    ),
    Case(
        "gemini-native/rubyllm-gemini35-flash-code-execution-parts.json",
        ("unknown:executableCode", "unknown:codeExecutionResult", "text"),
        ("end_turn", "STOP"),
        text_start="The exact product of $123456789 \\times 987654321$ ",
        text_end="$** (or $121932631112635269$).",
        usage=usage(85, 209, reasoning_tokens=87),
    ),
    Case(
        "gemini-native/rubyllm-gemini35-flash-google-search-grounding.json",
        ("text", "unknown:groundingMetadata"),
        ("end_turn", "STOP"),
        text_start="The latest stable version of Ruby is **4.0.6**, wh",
        text_end="github.com/ruby/ruby/releases)",
        usage=usage(568, 1332, cache_read_tokens=217, reasoning_tokens=1027),
    ),
    Case(
        "gemini-native/rubyllm-vertex-error-400-token-count.json",
        (),
        error=ProviderError,
        error_type="INVALID_ARGUMENT",
        retryable=False,
        message_start="The input token count (1250074) exceeds the maximum number o",
        status=400,
    ),
    Case(
        "gemini-native/rubyllm-vertex-gemini25-flash-stream-functioncall.sse",
        ("tool_use",),
        ("tool_use", "STOP"),
        tools=(("weather", {"latitude": "52.5200", "longitude": "13.4050"}),),
        text="",
        usage=usage(70, 60, reasoning_tokens=43),
    ),
    Case(
        "gemini-native/rubyllm-vertex-gemini3-flash-functioncall-with-id.json",
        ("tool_use",),
        ("tool_use", "STOP"),
        tools=(("image_fetch", {}),),
        tool_ids=("call_3206086",),
        text="",
        usage=usage(32, 305, reasoning_tokens=295),
    ),
    Case(
        "gemini-native/rubyllm-vertex-gemini3-flash-image-in-functionresponse.json",
        ("text",),
        ("end_turn", "STOP"),
        text_start="The fetched image shows the official logo for the ",
        text_end=" a polished, shiny appearance.",
        usage=usage(1440, 161, reasoning_tokens=86),
    ),
    Case(
        "gemini-native/rubyllm-vertex-gemini3-flash-stream-thinking.sse",
        ("reasoning", "text"),
        ("end_turn", "STOP"),
        text_start="To see my future self in this mirror, I would ask ",
        text_end="fusion I am currently feeling.",
        reasoning_start="**Exploring Mirror's Logic**\n\nI'm currently examin",
        usage=usage(43, 1375, reasoning_tokens=757),
    ),
]

OLLAMA_NATIVE = [
    Case(
        "ollama-native/lcrb-ollama-llama32-api-chat-nonstream.json",
        ("text",),
        ("end_turn", "stop"),
        text_start="I'm just a language model, so I don't have feeling",
        text_end="e! How can I assist you today?",
        usage=usage(31, 46),
    ),
    Case(
        "ollama-native/lcrb-ollama-llama32-api-chat-stream-ndjson.ndjson",
        ("text",),
        ("end_turn", "stop"),
        text_start="I'm just a language model, so I don't have emotion",
        text_end="? How's your day going so far?",
        usage=usage(31, 51),
    ),
    Case(
        "ollama-native/prism-ollama-deepseek-r1-format-json-trailing-whitespace.json",
        ("text",),
        ("end_turn", "stop"),
        text_start='{ "name": "Sarah Chen", "hobbies": ["rock climbing',
        text_end='low Manager"] }\n  \t\t\t\t\t\t \t\t\t\t\t',
        usage=usage(360, 42),
    ),
    Case(
        "ollama-native/prism-ollama-gpt-oss-nonstream-thinking.json",
        ("reasoning", "text"),
        ("end_turn", "stop"),
        text="Got it! How can I help you with your test?",
        reasoning_start='User just says "Test prompt". We need to respond a',
        usage=usage(69, 67),
    ),
    Case(
        "ollama-native/prism-ollama-gpt-oss-stream-thinking-field-then-content.ndjson",
        ("reasoning", "text"),
        ("end_turn", "stop"),
        text_start="Sure thing! Let me know what you'd like to test or",
        text_end="'s anything specific you need.",
        reasoning_start='The user says "Test prompt". Likely they are just ',
        usage=usage(69, 76),
    ),
    Case(
        "ollama-native/prism-ollama-qwen25-nonstream-2-tool-calls.json",
        ("tool_use", "tool_use"),
        ("tool_use", "stop"),
        tools=(
            ("search", {"query": "time of Detroit Tigers game today"}),
            ("weather", {"city": "Detroit"}),
        ),
        text="",
        usage=usage(235, 111),
    ),
    Case(
        "ollama-native/prism-ollama-qwen25-nonstream-done-reason-length.json",
        ("text",),
        ("max_tokens", "length"),
        text_start="I'm Qwen, a large language model developed by Alib",
        text_end="ive. How can I help you today?",
        usage=usage(33, 57),
    ),
    Case(
        "ollama-native/prism-ollama-qwen3-stream-2-tool-calls-index-only-on-second.ndjson",
        ("tool_use", "tool_use"),
        ("tool_use", "stop"),
        tools=(
            ("weather", {"city": "Detroit"}),
            ("search", {"query": "Detroit Tigers game time today"}),
        ),
        text="",
        usage=usage(218, 306),
    ),
    Case(
        # The think tags stay in the text: splitting them is asked for (think_tags=True).
        "ollama-native/prism-ollama-qwen3-stream-single-done-line-escaped-think-tags.ndjson",
        ("text",),
        ("end_turn", "stop"),
        text_start="<think>\nOkay, let me figure out how to answer the ",
        text_end="dn't need a coat for the game!",
        usage=usage(306, 188),
    ),
]

BEDROCK_CONVERSE = [
    Case(
        "bedrock-converse/rubyllm-bedrock-haiku45-converse-cachepoint-read.json",
        ("text",),
        ("end_turn", "end_turn"),
        text="OK",
        usage=usage(10, 4, cache_read_tokens=7351, cache_write_tokens=0),
    ),
    Case(
        "bedrock-converse/rubyllm-bedrock-haiku45-converse-outputconfig-json-schema.json",
        ("text",),
        ("end_turn", "end_turn"),
        text='{"name":"John","age":30}',
        usage=usage(181, 12, cache_read_tokens=0, cache_write_tokens=0),
    ),
    Case(
        "bedrock-converse/rubyllm-bedrock-haiku45-converse-pdf-page-citations.json",
        (
            "text",
            "unknown:citation",
            "text",
            "text",
            "unknown:citation",
            "text",
            "text",
            "unknown:citation",
            "text",
        ),
        ("end_turn", "end_turn"),
        text_start="The document is a simple PDF file, and it contains",
        text_end="ller sentences and paragraphs.",
        usage=usage(4248, 99, cache_read_tokens=0, cache_write_tokens=0),
    ),
    Case(
        "bedrock-converse/rubyllm-bedrock-haiku45-converse-reasoning-content.json",
        ("reasoning", "text"),
        ("end_turn", "end_turn"),
        text_start="I'd ask: **\"What will you tell me that you cannot ",
        text_end="epting unanswerable questions?",
        reasoning_start="This is a clever paradoxical puzzle. Let me think ",
        usage=usage(80, 588, cache_read_tokens=0, cache_write_tokens=0),
    ),
    Case(
        "bedrock-converse/rubyllm-bedrock-haiku45-converse-reasoning-replayed-turn2.json",
        ("reasoning", "text"),
        ("end_turn", "end_turn"),
        text="8 \u00d7 2 = 16",
        reasoning_start="The user is asking me to multiply the previous res",
        usage=usage(67, 47, cache_read_tokens=0, cache_write_tokens=0),
    ),
    Case(
        "bedrock-converse/rubyllm-bedrock-haiku45-converse-search-result-citations.json",
        ("text", "unknown:citation"),
        ("end_turn", "end_turn"),
        text="Ruby was created by Yukihiro Matsumoto in 1993.",
        usage=usage(1266, 36, cache_read_tokens=0, cache_write_tokens=0),
    ),
    Case(
        "bedrock-converse/rubyllm-bedrock-haiku45-conversestream-document-citations.eventstream",
        ("text", "unknown:citation"),
        ("end_turn", "end_turn"),
        text="Ruby was created by Yukihiro Matsumoto in 1993.",
        usage=usage(670, 28),
    ),
    Case(
        "bedrock-converse/rubyllm-bedrock-haiku45-conversestream-reasoning-signature.eventstream",
        ("reasoning", "text"),
        ("end_turn", "end_turn"),
        text_start="# The Paradox Question\n\nI'd ask: **\"Will you show ",
        text_end="'t exist.\n\nWhat would you ask?",
        reasoning_start="This is a clever logical puzzle that combines self",
        usage=usage(80, 1113),
    ),
    Case(
        # Nova's grounding: a server tool and its result (Unknown blocks, not calls to make),
        # then text whose citations come in blocks of their own.
        "bedrock-converse/rubyllm-bedrock-nova2-conversestream-nova-grounding-citations.eventstream",
        (
            "unknown:server_tool_use",
            "unknown:toolResult",
            "text",
            "unknown:citation",
            "unknown:citation",
            "text",
            "unknown:citation",
            "text",
        ),
        ("end_turn", "end_turn"),
        text_start="The latest stable Ruby version is 4.0.6. \n\nRuby 4.",
        text_end="leases of the Ruby 4.0 series.",
        usage=usage(141, 95),
    ),
    Case(
        "bedrock-converse/rubyllm-bedrock-nova2-conversestream-text.eventstream",
        ("text",),
        ("end_turn", "end_turn"),
        text="Sure! Here is the count from 1 to 3:\n\n1  \n2  \n3",
        usage=usage(53, 21),
    ),
    Case(
        "bedrock-converse/rubyllm-bedrock-nova2-conversestream-tooluse-empty-input.eventstream",
        ("tool_use",),
        ("tool_use", "tool_use"),
        tools=(("best_language_to_learn", {}),),
        tool_ids=("tooluse_FiC04UZUDhglf3LFbuBaLn",),
        text="",
        usage=usage(932, 18),
    ),
    Case(
        "bedrock-converse/rubyllm-bedrock-sonnet45-converse-image-in-toolresult.json",
        ("text",),
        ("end_turn", "end_turn"),
        text_start="The returned image shows a stylized ruby gemstone ",
        text_end="the Ruby programming language.",
        usage=usage(675, 103, cache_read_tokens=0, cache_write_tokens=0),
    ),
    Case(
        "bedrock-converse/rubyllm-bedrock-sonnet45-converse-parallel-tooluse.json",
        ("tool_use", "tool_use"),
        ("tool_use", "tool_use"),
        tools=(
            ("weather", {"latitude": "52.5200", "longitude": "13.4050"}),
            ("best_language_to_learn", {}),
        ),
        tool_ids=("tooluse_cqjo6jvCBSr6SGuk4qYWVG", "tooluse_IvALtxXMVmFaVpJ2Quvdww"),
        text="",
        usage=usage(701, 97, cache_read_tokens=0, cache_write_tokens=0),
    ),
]

COHERE = [
    Case(
        "cohere/rubyllm-cohere-command-a-json-schema.json",
        ("text",),
        ("end_turn", "COMPLETE"),
        text='{"name":"John","age":30}',
        usage=usage(614, 13, cache_read_tokens=480),
    ),
    Case(
        "cohere/rubyllm-cohere-command-a-parallel-tool-calls.json",
        ("reasoning", "tool_use", "tool_use"),
        ("tool_use", "TOOL_CALL"),
        tools=(
            ("weather", {"latitude": "52.5200", "longitude": "13.4050"}),
            ("best_language_to_learn", {}),
        ),
        tool_ids=("weather_5fdj252rgk1f", "best_language_to_learn_qxep73hcps93"),
        text="",
        reasoning_start="I will use the weather tool to find the weather in",
        usage=usage(1568, 132, cache_read_tokens=992),
    ),
    Case(
        "cohere/rubyllm-cohere-command-a-plus-image-url-base64.json",
        ("text",),
        ("end_turn", "COMPLETE"),
        text_start="I see a red gemstone or ruby-like object with mult",
        text_end=" red. The background is white.",
        usage=usage(34, 70, cache_read_tokens=0, reasoning_tokens=0),
    ),
    Case(
        "cohere/rubyllm-cohere-command-a-plus-stream-thinking-citations.sse",
        ("reasoning", "text", "unknown:citation", "unknown:citation"),
        ("end_turn", "COMPLETE"),
        text_start="According to the document, Ruby was created by **Y",
        text_end="grammers happy and productive.",
        reasoning_start="The document clearly states that Ruby was created ",
        usage=usage(508, 86, cache_read_tokens=144, reasoning_tokens=28),
    ),
    Case(
        "cohere/rubyllm-cohere-command-a-plus-tool-result-citations.json",
        (
            "reasoning",
            "text",
            "unknown:citation",
            "unknown:citation",
            "unknown:citation",
            "unknown:citation",
            "unknown:citation",
        ),
        ("end_turn", "COMPLETE"),
        text_start="According to the knowledge base search results, Ru",
        text_end='y Yukihiro Matsumoto in 1993."',
        reasoning_start="Great! I found the answer in the knowledge base. T",
        usage=usage(379, 164, cache_read_tokens=144, reasoning_tokens=54),
    ),
    Case(
        "cohere/rubyllm-cohere-command-a-reasoning-stream-2626-deltas.sse",
        ("reasoning", "text"),
        ("end_turn", "COMPLETE"),
        text_start='**Question to Ask the Mirror:**  \n"Is the answer t',
        text_end="he ultimate, non-verbal reply.",
        reasoning_start="Okay, let's try to figure this out. The problem is",
        usage=usage(1430, 2697, cache_read_tokens=1392, reasoning_tokens=2463),
    ),
    Case(
        "cohere/rubyllm-cohere-command-a-reasoning-thinking-content.json",
        ("reasoning", "text"),
        ("end_turn", "COMPLETE"),
        text_start='**Question to Ask the Mirror:**  \n*"If you answer ',
        text_end='future as a coherent "answer."',
        reasoning_start="Okay, let's try to figure out this magic mirror pr",
        usage=usage(1430, 1786, cache_read_tokens=1392, reasoning_tokens=1516),
    ),
    Case(
        "cohere/rubyllm-cohere-command-a-reasoning-thinking-replayed-turn2.json",
        ("reasoning", "text"),
        ("end_turn", "COMPLETE"),
        text="16",
        reasoning_start='Okay, the user first asked, "What is 5 + 3?" and I',
        usage=usage(1431, 152, cache_read_tokens=1392, reasoning_tokens=145),
    ),
    Case(
        "cohere/rubyllm-cohere-command-a-stream-after-tool-result.sse",
        ("text", "unknown:citation"),
        ("end_turn", "COMPLETE"),
        text="The current weather in Berlin is 15\u00b0C with winds of 10 km/h.",
        usage=usage(1645, 33, cache_read_tokens=1600),
    ),
    Case(
        "cohere/rubyllm-cohere-command-a-stream-text.sse",
        ("text",),
        ("end_turn", "COMPLETE"),
        text="Sure! Here's counting from 1 to 3:\n\n1, 2, 3.",
        usage=usage(502, 24, cache_read_tokens=448),
    ),
    Case(
        "cohere/rubyllm-cohere-command-a-stream-tool-call-empty-arguments.sse",
        ("reasoning", "tool_use"),
        ("tool_use", "TOOL_CALL"),
        tools=(("best_language_to_learn", {}),),
        tool_ids=("best_language_to_learn_wf0rc70sqj7v",),
        text="",
        reasoning_start="I will use the best_language_to_learn tool to find",
        usage=usage(1476, 58, cache_read_tokens=1376),
    ),
    Case(
        "cohere/rubyllm-cohere-command-a-stream-tool-plan-tool-call-deltas.sse",
        ("reasoning", "tool_use"),
        ("tool_use", "TOOL_CALL"),
        tools=(("weather", {"latitude": "52.5200", "longitude": "13.4050"}),),
        tool_ids=("weather_vvavrb8p34fk",),
        text="",
        reasoning_start="I will use the weather tool to find the weather in",
        usage=usage(1508, 67, cache_read_tokens=1472),
    ),
    Case(
        "cohere/rubyllm-cohere-error-400-too-many-tokens.json",
        (),
        error=ProviderError,
        error_type="TOO_MANY_TOKENS",
        retryable=False,
        message_start="too many tokens: size limit exceeded by 25836 tokens. Try us",
        status=400,
    ),
    Case(
        "cohere/rubyllm-cohere-error-401.json",
        (),
        error=ProviderError,
        error_type="error",
        retryable=False,
        message_start="Incorrect API key provided: ***********. You can find your A",
        status=401,
    ),
]


CASES = (
    OPENAI_CHAT
    + OPENAI_COMPAT
    + OPENAI_RESPONSES
    + ANTHROPIC_MESSAGES
    + OLLAMA_NATIVE
    + GEMINI_NATIVE
    + BEDROCK_CONVERSE
    + COHERE
)
ERROR_BODIES = [c for c in CASES if c.status is not None]
COMPLETE_BODIES = [c for c in CASES if c.is_body]


def params(cases: list[Case]) -> list[Any]:
    return [pytest.param(case, id=case.test_id) for case in cases]


def test_every_response_recording_has_a_case() -> None:
    if not REAL_STREAMS_4.is_dir():
        pytest.skip("the shared recordings ../shared/real-streams-4 are not beside this clone")
    on_disk = {
        f"{folder}/{path.name}"
        for folder in RECORDING_FOLDERS
        if (REAL_STREAMS_4 / folder).is_dir()
        for path in (REAL_STREAMS_4 / folder).iterdir()
        if path.is_file()
    }
    named = {case.path for case in CASES}
    assert sorted(on_disk - named) == [], "recordings without a Case"
    assert sorted(named - on_disk) == [], "Cases without a recording"
    assert len(named) == 149


# -- running a recording --------------------------------------------------------------------


def data_of(case: Case) -> bytes:
    return (REAL_STREAMS_4 / case.path).read_bytes()


def normalized(
    case: Case, provider: str | None = None
) -> tuple[NormalizedResponse | None, LaminateError | None]:
    """The recording as a user reads it: a complete body through ``normalize``, a stream
    through the sans-IO normalizer."""
    data = data_of(case)
    if case.is_body:
        try:
            return normalize(data, provider), None
        except LaminateError as exc:
            return exc.partial, exc
    outcome = run_chunks([data], provider)
    if outcome.error is None:
        check_events(outcome.events)
    return outcome.response, outcome.error


# -- what a reader expects ------------------------------------------------------------------


def check_reasoning(case: Case, response: NormalizedResponse) -> None:
    """As many reasoning blocks as expected; the first readable one starts as expected
    (an encrypted one is redacted, its data kept as its signature)."""
    reasoning = response.reasoning()
    assert len(reasoning) == case.blocks.count("reasoning")
    assert all(b.signature for b in reasoning if b.redacted)
    readable = [b for b in reasoning if not b.redacted]
    if case.reasoning_start:
        assert readable, "no readable reasoning"
        check_in_order(readable[0].text, case.reasoning_start, (), "")


def check_tools(case: Case, response: NormalizedResponse) -> None:
    calls = response.tool_uses()
    assert [(c.name, c.input.value) for c in calls] == list(case.tools)
    if case.tool_ids is not None:
        assert tuple(c.id for c in calls) == case.tool_ids
    ids = [c.id for c in calls]
    assert all(ids), "tool ids are never empty"
    assert len(set(ids)) == len(ids), "tool ids are never repeated"
    assert all(isinstance(b, ToolUse) for b in calls)


def check_response(case: Case, response: NormalizedResponse | None) -> None:
    assert response is not None
    assert tuple(kind_of(b) for b in response.content) == case.blocks
    assert case.stop is not None
    assert (response.stop_reason.kind, response.stop_reason.raw) == case.stop
    check_text(case, response)
    check_reasoning(case, response)
    check_tools(case, response)
    assert all(b.text for b in response.content if isinstance(b, Text)), "no empty text block"
    if case.usage:
        assert {name: getattr(response.usage, name) for name in case.usage} == case.usage


@needs_real_streams_4
@pytest.mark.parametrize("case", params(CASES))
@pytest.mark.parametrize("named", [False, True], ids=["detected", "named"])
def test_recording(case: Case, named: bool) -> None:
    provider = RECORDING_FOLDERS[case.folder] if named else None
    response, error = normalized(case, provider)
    check_error(case, error)
    if case.error is not None:
        return
    check_response(case, response)
    assert response is not None
    wanted = RECORDING_FOLDERS[case.folder]
    # An Anthropic model's InvokeModel body, recorded from Bedrock, is Anthropic's.
    assert response.provider == ("anthropic" if "bedrock-invoke" in case.path else wanted)


@needs_real_streams_4
@pytest.mark.parametrize("case", params(CASES))
def test_chunking_does_not_matter(case: Case) -> None:
    """Whole, line by line, a byte at a time and cut at random: the same events, the same
    error (a complete body read as a stream included)."""
    data = data_of(case)
    whole = run_chunks([data])
    chunkings = [lines_of(data), *random_splits(data, case.test_id)]
    if len(data) <= BYTEWISE_LIMIT:
        chunkings.append(bytes_of(data))
    for chunks in chunkings:
        other = run_chunks(chunks)
        assert other.events == whole.events
        assert type(other.error) is type(whole.error)
        assert str(other.error) == str(whole.error)


@needs_real_streams_4
@pytest.mark.parametrize("case", params(COMPLETE_BODIES))
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


@needs_real_streams_4
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


@needs_real_streams_4
@pytest.mark.parametrize("case", params(ERROR_BODIES))
def test_error_body_with_its_http_status(case: Case) -> None:
    """The recorded error body, answered with the status it was recorded with: a
    ProviderError carrying that status, classified from the body."""
    data = data_of(case)

    def answer(request: httpx.Request) -> httpx.Response:
        headers = {"content-type": "application/json"}
        return httpx.Response(case.status or 0, headers=headers, stream=httpx.ByteStream(data))

    with (
        httpx.Client(transport=httpx.MockTransport(answer)) as client,
        client.stream("POST", URLS[case.folder], json={}) as response,
        pytest.raises(ProviderError) as caught,
    ):
        collect_sync(response)
    error = caught.value
    assert error.status_code == case.status
    assert error.error_type == case.error_type
    # A 429 may be retried whatever the body says.
    assert error.retryable is (case.retryable or case.status == 429)
    assert case.message_start in error.message
    assert error.partial is not None
    assert error.partial.content == []
