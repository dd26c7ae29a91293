"""Every real recording of the Chat Completions, OpenAI-compatible, Anthropic Messages and
Ollama formats in ../shared/real-streams, against what a reader of that recording expects
(written by hand from the recording itself: tool names and arguments, text, stop reason,
usage). Each one either normalizes to that answer or fails with the named, specific
error; none may give a wrong answer."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from laminate import (
    InvalidToolUse,
    LaminateError,
    MalformedStreamError,
    NormalizedResponse,
    ProviderError,
    Reasoning,
    Text,
    ToolUse,
    Unknown,
    normalize,
)

from .support import REAL_STREAMS, lines_of, needs_real_streams, run_chunks, split_at

FORMATS = ("openai-chat", "openai-compat", "anthropic-messages", "ollama-native")


@dataclass(frozen=True)
class Case:
    """What one recording must normalize to. Unset fields are not checked."""

    path: str
    blocks: tuple[str, ...]
    stop: tuple[str | None, str] | None = None
    tools: tuple[tuple[str, dict[str, Any]], ...] = ()
    tool_ids: tuple[str, ...] | None = None
    invalid: tuple[tuple[str, str], ...] = ()  # (name, start of the raw arguments)
    unknown_inputs: tuple[Any, ...] = ()
    text: str | None = None
    text_start: str = ""
    text_end: str = ""
    reasoning: str | None = None
    reasoning_start: str = ""
    signature_start: str = ""
    redacted: tuple[bool, ...] | None = None
    reasoning_id: str | None = None
    usage: dict[str, int | None] = field(default_factory=dict)
    id: str | None = None
    model: str | None = None
    error: type[LaminateError] | None = None
    error_type: str | None = None
    retryable: bool | None = None
    options: dict[str, Any] = field(default_factory=dict)
    name: str = ""

    @property
    def test_id(self) -> str:
        return self.path + (f"[{self.name}]" if self.name else "")


def usage(inp: int | None, out: int | None, **more: int | None) -> dict[str, int | None]:
    return {"input_tokens": inp, "output_tokens": out, **more}


END = ("end_turn", "stop")
TOOLS = ("tool_use", "tool_calls")
BOSTON = {"location": "Boston, MA"}
BOSTON_F = {"location": "Boston, MA", "unit": "fahrenheit"}

OPENAI_CHAT = [
    Case(
        "openai-chat/max-tokens-length.sse",
        ("text",),
        ("max_tokens", "length"),
        text='{"',
        usage=usage(79, 1, reasoning_tokens=0),
        id="chatcmpl-ABfw3Oqj8RD0z6aJiiX37oTjV2HFh",
    ),
    Case(
        "openai-chat/n3-multiple-choices.sse",
        ("text",),
        END,
        text='{"city":"San Francisco","temperature":65,"units":"f"}',
        usage=usage(79, 42),
    ),
    Case(
        "openai-chat/n3-multiple-choices.sse",
        ("text",),
        END,
        text='{"city":"San Francisco","temperature":59,"units":"f"}',
        options={"choice": 2},
        name="choice=2",
    ),
    Case(
        "openai-chat/nonstream-parallel-tool-calls.json",
        ("tool_use", "tool_use"),
        TOOLS,
        tools=(("getCurrentWeather", BOSTON), ("getCurrentTime", BOSTON)),
        tool_ids=("call_qg09hWVReOXoXP97AOv8SDrQ", "call_5wcAN3hSC3JsPcgPUU40wEfT"),
        usage=usage(121, 50, cache_read_tokens=0),
    ),
    Case(
        "openai-chat/nonstream-tool-call.json",
        ("tool_use",),
        TOOLS,
        tools=(("getCurrentWeather", BOSTON),),
        tool_ids=("call_BwP3nSWtqvU2geALVfD5cXLM",),
        usage=usage(82, 17),
    ),
    Case(
        "openai-chat/parallel-tool-calls-gpt-4.1-2025.sse",
        ("tool_use", "tool_use"),
        TOOLS,
        tools=(("getCurrentWeather", BOSTON), ("getCurrentTime", BOSTON)),
        tool_ids=("call_ZqGHKScptLaD0wmWHJYFN1Vo", "call_XoLScnhw0USpb7ml5C5nfGW1"),
        usage=usage(121, 50),
    ),
    Case(
        "openai-chat/parallel-tool-calls-gpt-4o-2024.sse",
        ("tool_use", "tool_use"),
        TOOLS,
        tools=(
            ("GetWeatherArgs", {"city": "Edinburgh", "country": "GB", "units": "c"}),
            ("get_stock_price", {"ticker": "AAPL", "exchange": "NASDAQ"}),
        ),
        tool_ids=("call_JMW1whyEaYG438VE1OIflxA2", "call_DNYTawLBoN8fj3KN6qU9N1Ou"),
        usage=usage(149, 60, cache_read_tokens=None),
    ),
    Case(
        "openai-chat/parallel-tool-calls-gpt-4o-2frag.sse",
        ("tool_use", "tool_use"),
        TOOLS,
        tools=(("get_country", {}), ("get_product_name", {})),
        usage=usage(364, 40),
    ),
    Case(
        "openai-chat/reasoning-o3-text-2025.sse",
        ("text",),
        END,
        text=(
            "To find 5 !, multiply all the positive integers from 5 down to 1:\n\n"
            "5 \u00d7 4 \u00d7 3 \u00d7 2 \u00d7 1 = 120\n\nTherefore, 5 ! = 120."
        ),
        usage=usage(23, 192, reasoning_tokens=128),
    ),
    Case(
        "openai-chat/refusal-with-logprobs.sse",
        ("text",),
        ("refusal", "stop"),
        text="I'm very sorry, but I can't assist with that.",
        usage=usage(79, 12),
    ),
    Case(
        "openai-chat/refusal.sse",
        ("text",),
        ("refusal", "stop"),
        text="I'm sorry, I can't assist with that request.",
        usage=usage(79, 11),
    ),
    Case(
        "openai-chat/single-tool-call-fragmented.sse",
        ("tool_use",),
        TOOLS,
        tools=(("GetWeatherArgs", {"city": "Edinburgh", "country": "UK", "units": "c"}),),
        tool_ids=("call_c91SqDXlYFuETYv8mUHzz6pp",),
        usage=usage(76, 24),
    ),
    Case(
        "openai-chat/text-moderation-extra-chunk-gpt-5.sse",
        ("text",),
        END,
        text="Paris.",
        usage=usage(13, 11),
    ),
    Case(
        "openai-chat/text-with-usage.sse",
        ("text",),
        END,
        text="The capital of Mexico is Mexico City.",
        usage=usage(14, 8),
    ),
    Case(
        "openai-chat/tool-call-54-fragments.sse",
        ("tool_use",),
        TOOLS,
        tools=(
            (
                "final_result",
                {
                    "answers": [
                        {"label": "Capital", "answer": "The capital of Mexico is Mexico City."},
                        {
                            "label": "Weather",
                            "answer": "The weather in Mexico City is currently sunny.",
                        },
                        {"label": "Product Name", "answer": "The product name is Pydantic AI."},
                    ]
                },
            ),
        ),
        usage=usage(448, 62),
    ),
    Case(
        "openai-chat/tool-call-multiply.sse",
        ("tool_use",),
        TOOLS,
        tools=(("multiply", {"a": 1231, "b": 2331}),),
        usage=usage(54, 20),
    ),
    Case(
        "openai-chat/tool-call-then-usage-gpt-5.sse",
        ("tool_use",),
        TOOLS,
        tools=(("get_capital", {"country": "UK"}),),
        tool_ids=("call_ZR5UUuTt3pf61kjwAJIYdVMj",),
        usage=usage(53, 15),
    ),
]

OPENAI_COMPAT = [
    Case(
        "openai-compat/alibaba-qwen-tool-call-empty-ids.sse",
        ("tool_use",),
        TOOLS,
        tools=(("weather", {"location": "San Francisco"}),),
        tool_ids=("call_eee11723464a4b9eb8cee71d",),
        usage=usage(295, 22, cache_read_tokens=0),
    ),
    Case(
        "openai-compat/anthropic-openai-compat-tool-call.sse",
        ("text", "tool_use"),
        TOOLS,
        text="Reading it.",
        tools=(("read_file", {"path": "a.txt"}),),
        tool_ids=("toolu_sanitized",),
        usage=usage(None, None),
    ),
    Case(
        "openai-compat/azure-ai-inference-vllm-stop-reason.sse",
        ("text",),
        END,
        text="Test content",
        usage=usage(17, 89),
    ),
    Case(
        # Hand-edited Azure stream: every chunk carries text, one whole call and a
        # finish reason. Each finish closes what is open; nothing is merged or lost.
        "openai-compat/azure-async-filter-parallel-calls.sse",
        ("text", "tool_use") * 3 + ("text", "invalid_tool_use"),
        TOOLS,
        text="Test chat streaming response" * 4,
        tools=(
            ("MyPlugin-GetCurrentWeather", BOSTON),
            ("MyPlugin-FunctionWithException", {"argument": "value"}),
            ("MyPlugin-NonExistentFunction", {"argument": "value"}),
        ),
        tool_ids=("1", "2", "3"),
        invalid=(("MyPlugin-InvalidArguments", "invalid_arguments_format"),),
        id="response-id",
        model="gpt-4",
    ),
    Case(
        "openai-compat/azure-chat-prompt-filter-first-chunk.sse",
        ("text",),
        END,
        text="Capital of Denmark.",
        usage=usage(15, 78, reasoning_tokens=64),
        id="chatcmpl-CYPS1lijGoK8gd9lYzY3r9Sx50nbt",
        model="gpt-5-nano-2025-08-07",
    ),
    Case(
        "openai-compat/crusoe.sse",
        ("text",),
        END,
        text="1, 2, 3, 4, 5",
        usage=usage(46, 14),
    ),
    Case(
        "openai-compat/deepseek-nonstream-parallel-calls.json",
        ("tool_use", "tool_use"),
        TOOLS,
        tools=(("getCurrentWeather", BOSTON_F), ("getCurrentTime", BOSTON)),
        tool_ids=(
            "call_0_403dd763-507c-41f2-bbd4-6a2c13f167c1",
            "call_1_fff22ed2-743d-492c-9bf9-38fc678e7fd1",
        ),
        usage=usage(264, 50, cache_read_tokens=256),
    ),
    Case(
        "openai-compat/deepseek-reasoner-tool-call.sse",
        ("reasoning", "tool_use"),
        TOOLS,
        reasoning_start="The user is asking for the weather in San Francisco.",
        tools=(("weather", {"location": "San Francisco"}),),
        tool_ids=("call_00_ioIn7yN9p1ZOMNpDLwd4MgAF",),
        usage=usage(339, 83, cache_read_tokens=320, reasoning_tokens=39),
    ),
    Case(
        "openai-compat/deepseek-reasoning-content.sse",
        ("reasoning", "text"),
        END,
        reasoning_start='Hmm, the user just said "Hello".',
        text="Hello there! 😊 How can I help you today?",
        usage=usage(6, 212, reasoning_tokens=198),
    ),
    Case(
        "openai-compat/deepseek-text-then-parallel-calls.sse",
        ("tool_use", "tool_use"),
        TOOLS,
        tools=(("getCurrentWeather", BOSTON_F), ("getCurrentTime", BOSTON)),
        usage=usage(264, 50, cache_read_tokens=256),
    ),
    Case(
        # `event: error` after the reasoning, then the end of the bytes.
        "openai-compat/groq-error-event-tool-use-failed.sse",
        ("reasoning",),
        reasoning_start="We need to call the tool with invalid parameters first",
        error=ProviderError,
        error_type="invalid_request_error",
        retryable=False,
    ),
    Case(
        "openai-compat/groq-tool-call-llama.sse",
        ("tool_use",),
        TOOLS,
        tools=(("weather", {}),),
        tool_ids=("tk85n1k4m",),
        usage=usage(210, 15),
    ),
    Case(
        "openai-compat/groq-tool-call-whole-args-x_groq.sse",
        ("reasoning", "tool_use"),
        TOOLS,
        reasoning=(
            'We need to call the function with correct parameter "name". '
            'Provide a name, e.g., "example".'
        ),
        tools=(("get_something_by_name", {"name": "example"}),),
        tool_ids=("fc_bfb39741-3748-4def-9886-a93fc9c64a90",),
        usage=usage(304, 49, reasoning_tokens=23),
    ),
    Case(
        # Raw harmony tokens in the content: not a documented format, so left as text.
        "openai-compat/llamacpp-gpt-oss-harmony-leak.sse",
        ("text",),
        END,
        text=(
            '<|channel|>analysis<|message|>User says "test". Likely wants a test response. '
            "We'll respond acknowledging.<|start|>assistant<|channel|>final<|message|>"
            "Got it! If you have any questions or need assistance, just let me know."
        ),
        usage=usage(82, 43),
    ),
    Case(
        # The capture starts inside a call's arguments and splits the final chunk (with
        # its finish reason) across two lines: that frame is not JSON. The call was
        # never finished, so it stays an InvalidToolUse in the partial.
        "openai-compat/llamacpp-verbose-final-chunk-split.sse",
        ("invalid_tool_use",),
        invalid=(("", '.nvim"}'),),
        error=MalformedStreamError,
    ),
    Case(
        "openai-compat/mistral-incremental-tool-call-glm.sse",
        ("tool_use",),
        TOOLS,
        tools=(("webSearchTool", {"query": "current Berlin weather"}),),
        tool_ids=("chatcmpl-tool-9f149c74c42f265b",),
        usage=usage(171, 14, cache_read_tokens=128),
    ),
    Case(
        "openai-compat/mistral-magistral-thinking-content-array.sse",
        ("reasoning", "text"),
        END,
        reasoning_start="Okay, the user is asking how to cross the street.",
        text_start="To cross the street safely, follow these steps:",
        text_end="you can ensure a safe crossing.",
        usage=usage(10, 232),
    ),
    Case(
        "openai-compat/mistral-whole-args-finish-same-chunk.sse",
        ("tool_use",),
        TOOLS,
        tools=(("weather", {"location": "San Francisco"}),),
        tool_ids=("gSIMJiOkT",),
        usage=usage(124, 22),
    ),
    Case(
        "openai-compat/ollama-v1-nonstream.json",
        ("text",),
        END,
        text="4200 + 42 = 4242\n",
        usage=usage(21, 16),
    ),
    Case(
        "openai-compat/ollama-v1-parallel-tool-calls.sse",
        ("tool_use", "tool_use"),
        TOOLS,
        tools=(("run_command", {"command": "ls"}), ("run_command", {"command": "ls -l"})),
        tool_ids=("call_wteop8bt", "call_rk2xye1l"),
    ),
    Case(
        "openai-compat/openrouter-claude-thinking-tool-call.sse",
        ("reasoning", "text", "tool_use"),
        TOOLS,
        reasoning_start="The user is asking about the current weather in Boston, MA.",
        signature_start="ErUBCkYIBBgCIkBF+avTtRXxkevA+wQqX056t+B3Uhkf8ZzOdmxRufAkIjXZ",
        text="I'll check the current weather in Boston, MA for you.",
        tools=(("getCurrentWeather", BOSTON),),
        tool_ids=("toolu_01PRhKjgGfxLjJyiW6sm5CG3",),
        usage=usage(453, 210, reasoning_tokens=150),
    ),
    Case(
        # An error object after two `length` finishes: a ProviderError (code 400) whose
        # partial keeps the reasoning and the usage the error chunk carried.
        "openai-compat/openrouter-error-chunk-after-length.sse",
        ("reasoning",),
        reasoning="We need to respond to a greeting. The user",
        usage=usage(43, 10, reasoning_tokens=11),
        error=ProviderError,
        error_type="400",
        retryable=False,
    ),
    Case(
        "openai-compat/openrouter-gemini-2-parallel-calls-one-chunk.sse",
        ("tool_use", "tool_use"),
        TOOLS,
        tools=(("getCurrentWeather", BOSTON), ("getCurrentTime", BOSTON)),
        tool_ids=("tool_0_getCurrentWeather", "tool_1_getCurrentTime"),
        usage=usage(71, 12),
    ),
    Case(
        "openai-compat/openrouter-mistral-parallel-calls-whole-args.sse",
        ("tool_use", "tool_use"),
        TOOLS,
        tools=(("getCurrentWeather", BOSTON_F), ("getCurrentTime", BOSTON)),
        tool_ids=("efwSWlo7w", "1aGURJJ1a"),
        usage=usage(191, 34),
    ),
    Case(
        "openai-compat/openrouter-nonstream-gemini-parallel.json",
        ("tool_use", "tool_use"),
        TOOLS,
        tools=(("getCurrentWeather", BOSTON), ("getCurrentTime", BOSTON)),
        tool_ids=("tool_0_getCurrentWeather", "tool_1_getCurrentTime"),
        usage=usage(71, 12),
    ),
    Case(
        # Same id and name on both fragments, never a finish reason: [DONE] ends it.
        "openai-compat/openrouter-novita-kimi-k2-dup-tool-call-no-finish.sse",
        ("tool_use",),
        ("tool_use", ""),
        tools=(("llm_version", {}),),
        tool_ids=("0",),
        usage=usage(57, 17),
    ),
    Case(
        "openai-compat/openrouter-o4-mini-tool-call.sse",
        ("reasoning", "tool_use"),
        ("tool_use", "stop"),
        reasoning="",
        signature_start="gAAAAABoWX8LenUjZpMmlU5q-uLNTAubOZTXcwwd85Rc",
        redacted=(True,),
        reasoning_id="rs_68597f0647d0819091018c65f206ba2e",
        tools=(("getCurrentWeather", BOSTON_F),),
        tool_ids=("call_LxBJm3xDQRdYTpm7kjk5sLNB",),
        usage=usage(78, 412, reasoning_tokens=384),
    ),
    Case(
        "openai-compat/snowflake-cortex.sse",
        ("reasoning", "text"),
        ("end_turn", ""),
        reasoning="15 * 27 = 405",
        reasoning_id="reasoning-text-1",
        text=(
            "15 \u00d7 27 = **405**\n\nHere's the breakdown:\n- 15 \u00d7 20 = 300\n"
            "- 15 \u00d7 7 = 105\n- 300 + 105 = **405**"
        ),
        usage=usage(45, 73),
        id="",
    ),
    Case(
        "openai-compat/tgi-hf-data-no-space.sse",
        ("text",),
        ("max_tokens", "length"),
        text_start="Deep learning is a subset of machine learning that involves",
        text_end="multiple levels of abstraction. The algorithms can",
        usage=usage(None, None),
        id="",
    ),
    Case(
        "openai-compat/together-nonstream-empty-tool-calls.json",
        ("text",),
        END,
        text="To find the answer, add 4200 and 42.\n\n4200 + 42 = 4242",
        usage=usage(44, 23, cache_read_tokens=0),
    ),
    Case(
        "openai-compat/together-via-hf-router-text-token-id.sse",
        ("text",),
        END,
        text_start='<think>\nOkay, the user asked "How do I cross the street?"',
        text_end="could save your life! 🌟",
        usage=usage(10, 955),
    ),
    Case(
        "openai-compat/together-via-hf-router-text-token-id.sse",
        ("reasoning", "text"),
        END,
        reasoning_start='\nOkay, the user asked "How do I cross the street?"',
        text_start="Crossing the street safely requires attention",
        text_end="could save your life! 🌟",
        options={"think_tags": True},
        name="think_tags",
    ),
    Case(
        "openai-compat/vllm-tool-call-empty-model.sse",
        ("tool_use",),
        TOOLS,
        tools=(("run_command", {"command": "ls"}),),
        tool_ids=("chatcmpl-tool-ca99dda515524c6abe47d1ea22813507",),
        model="",
    ),
    Case(
        "openai-compat/xai-grok-reasoning-tool-call.sse",
        ("reasoning", "tool_use"),
        TOOLS,
        reasoning="First, the user is",
        tools=(("weather", {"location": "San Francisco"}),),
        tool_ids=("call_55117580",),
        usage=usage(291, 26, cache_read_tokens=290, reasoning_tokens=196),
    ),
    Case(
        "openai-compat/zai-glm-reasoning-content.sse",
        ("reasoning", "text"),
        END,
        reasoning_start="\n1.  **Analyze the User's Request:**",
        text="4",
        usage=usage(13, 564, reasoning_tokens=561),
    ),
]

ANTHROPIC_END = ("end_turn", "end_turn")
ANTHROPIC_TOOLS = ("tool_use", "tool_use")

ANTHROPIC = [
    Case(
        "anthropic-messages/code-execution-server-tool.sse",
        (
            "reasoning",
            "text",
            "unknown:server_tool_use",
            "unknown:bash_code_execution_tool_result",
            "text",
        ),
        ANTHROPIC_END,
        reasoning="Let me calculate this mathematical expression.",
        signature_start="EusBClsIDRgCKkBpzetW9oKOZtFP6IeFJJr3gnQBXqdZrYcRnw",
        text_start="I'll calculate that expression for you right away!",
        text_end="Answer: **-428,330,955.97745**",
        unknown_inputs=({"command": 'echo "65465-6544 * 65464-6+1.02255" | bc -l'},),
        usage=usage(4714, 304, cache_read_tokens=0, cache_write_tokens=0),
    ),
    Case(
        "anthropic-messages/compat-message-delta-input-tokens.sse",
        ("text",),
        ANTHROPIC_END,
        text="pong",
        usage=usage(61, 2),
    ),
    Case(
        "anthropic-messages/hand-written-duplicate-message-start.sse",
        ("text",),
        ANTHROPIC_END,
        text="Hello, World!",
        usage=usage(17, 227),
        id="msg_dup",
    ),
    Case(
        # Two messages spliced into one stream: never merged.
        "anthropic-messages/hand-written-spliced-message-start.sse",
        ("reasoning", "invalid_tool_use"),
        reasoning="I will call the tool.",
        signature_start="sig-first",
        invalid=(("test-tool", '{"value":"Spark'),),
        id="msg_first",
        error=MalformedStreamError,
    ),
    Case(
        "anthropic-messages/nonstream-text.json",
        ("text",),
        ANTHROPIC_END,
        text=(
            "Hello! As an AI language model, I don't have feelings, but I'm functioning "
            "properly and ready to assist you. How can I help you today?"
        ),
        usage=usage(13, 35),
    ),
    Case(
        "anthropic-messages/nonstream-tool-use.json",
        ("tool_use",),
        ANTHROPIC_TOOLS,
        tools=(("get_weather", {"location": "San Francisco, CA", "units": "f"}),),
        tool_ids=("toolu_01A9HHF5Ezy3oBrKmSgfASm9",),
        usage=usage(656, 74),
    ),
    Case(
        "anthropic-messages/parallel-tool-use.sse",
        ("tool_use", "tool_use"),
        ANTHROPIC_TOOLS,
        tools=(("pelican_name_generator", {}), ("pelican_name_generator", {})),
        tool_ids=("toolu_01LtHJmixrs9NcWQkK8hu8hj", "toolu_01N8a4jWyf116qKTMqKKmjyt"),
        usage=usage(542, 62),
    ),
    Case(
        "anthropic-messages/redacted-thinking.sse",
        ("reasoning", "reasoning", "text"),
        ANTHROPIC_END,
        reasoning="",
        signature_start="EqkECkYIBxgCKkA8AZ4noDfV5VcOJe/p3JTRB6Xz5297mrWhl3MbHSXDKTMf",
        redacted=(True, True),
        text_start="I notice that you've sent what appears to be",
        usage=usage(92, 189),
    ),
    Case(
        "anthropic-messages/refusal-stop-reason.sse",
        ("text",),
        ("refusal", "refusal"),
        text="",
        usage=usage(20, 0),
    ),
    Case(
        "anthropic-messages/server-web-search-citations.sse",
        (
            "unknown:server_tool_use",
            "unknown:web_search_tool_result",
            "text",
            "unknown:server_tool_use",
            "unknown:web_search_tool_result",
            "text",
        )
        # Each cited text block is followed by its citations (nine in all).
        + ("text", "unknown:citation", "unknown:citation", "text")
        + ("text", "unknown:citation", "text") * 7,
        ANTHROPIC_END,
        text_start=(
            "Let me search for more specific breaking news stories to get clearer headlines."
        ),
        unknown_inputs=(
            {"query": "top world news today"},
            {"query": "breaking news headlines August 14 2025"},
        ),
        usage=usage(31772, 644),
    ),
    Case(
        "anthropic-messages/text-basic.sse",
        ("text",),
        ANTHROPIC_END,
        text="Hello there!",
        usage=usage(11, 6),
    ),
    Case(
        "anthropic-messages/thinking-signature-text.sse",
        ("reasoning", "text"),
        ANTHROPIC_END,
        reasoning_start="This is a straightforward question about pedestrian safety.",
        signature_start="EvMCCkYICxgCKkCHP2cSuEdcJK/0rFwqES/ecn+VurRpNTwI4X",
        redacted=(False,),
        text_start="Here are the basic steps for safely crossing the street",
        usage=usage(43, 282),
    ),
    Case(
        "anthropic-messages/thinking-then-tool-use.sse",
        ("reasoning", "tool_use"),
        ANTHROPIC_TOOLS,
        reasoning_start="The user wants me to:\n1. Use the fixed_version tool",
        signature_start="EoQDCm0IDhgCKkCDzGs2kL2PgnDCZU/nM2wG2P1VIXCRHVnhDD",
        tools=(("fixed_version", {}),),
        tool_ids=("toolu_01825dXWLSoJwCst1qTsiWdb",),
        usage=usage(598, 92),
    ),
    Case(
        "anthropic-messages/tool-search-tool-use.sse",
        (
            "text",
            "unknown:server_tool_use",
            "unknown:tool_search_tool_result",
            "text",
            "tool_use",
        ),
        ANTHROPIC_TOOLS,
        text=(
            "Let me search for a tool that can provide current exchange rate information."
            "I found the right tool! Let me fetch the current USD to EUR exchange rate for you."
        ),
        tools=(("get_exchange_rate", {"from_currency": "USD", "to_currency": "EUR"}),),
        tool_ids=("toolu_01EFn5wTNBYA8Reni8rbmnHT",),
        unknown_inputs=({"query": "USD EUR exchange rate currency conversion"},),
        usage=usage(1591, 175),
    ),
    Case(
        "anthropic-messages/tool-use-empty-input.sse",
        ("text", "tool_use"),
        ANTHROPIC_TOOLS,
        text="I'll update the issue list for you.",
        tools=(("updateIssueList", {}),),
        tool_ids=("toolu_01QE1WLsSVp5hy5Q3GmGTmjP",),
        usage=usage(565, 48),
    ),
    Case(
        "anthropic-messages/tool-use-fragmented.sse",
        ("text", "tool_use"),
        ANTHROPIC_TOOLS,
        text="I'll check the current weather in Paris for you.",
        tools=(("get_weather", {"location": "Paris"}),),
        tool_ids=("toolu_01NRLabsLyVHZPKxbKvkfSMn",),
        usage=usage(377, 65),
    ),
    Case(
        # The tool_use block is never stopped; max_tokens cuts it off.
        "anthropic-messages/tool-use-max-tokens-whitespace-padded.sse",
        ("text", "invalid_tool_use"),
        ("max_tokens", "max_tokens"),
        text_start="I'll create a comprehensive tax guide for someone",
        invalid=(("make_file", '{"filename": "taxes.txt", "lines_of_text": [\n"# CO'),),
        usage=usage(450, 124),
    ),
]

OLLAMA_END = ("end_turn", "stop")
COUNT_TEXT = "Okay, here we go!\n\n1, 2, 3, 4, 5\n"

OLLAMA = [
    Case(
        "ollama-native/chat-stream-text-gemma3.ndjson",
        ("text",),
        OLLAMA_END,
        text=COUNT_TEXT,
        usage=usage(16, 22),
        id="",
        model="gemma3:1b",
    ),
    Case(
        "ollama-native/chat-stream-thinking-gpt-oss-cloud.ndjson",
        ("reasoning", "text"),
        OLLAMA_END,
        reasoning=(
            'User asks: "Count from 1 to 5". Simple. Respond with numbers: 1 2 3 4 5. '
            "Possibly each on separate line. Provide answer."
        ),
        text="1  \n2  \n3  \n4  \n5",
        usage=usage(74, 57),
    ),
    Case(
        # Ollama Cloud labels this NDJSON stream application/json.
        "ollama-native/chat-stream-thinking-gpt-oss-cloud.ndjson",
        ("reasoning", "text"),
        OLLAMA_END,
        text="1  \n2  \n3  \n4  \n5",
        options={"content_type": "application/json"},
        name="content-type",
    ),
    Case(
        "ollama-native/generate-stream-gemma3.ndjson",
        ("text",),
        OLLAMA_END,
        text=COUNT_TEXT,
        usage=usage(16, 22),
    ),
    Case(
        "ollama-native/hand-written-docs-stream-tool-call.ndjson",
        ("tool_use",),
        ("tool_use", "stop"),
        tools=(("get_weather", {"city": "Tokyo"}),),
        tool_ids=("call_0",),
        usage=usage(169, 15),
    ),
    Case(
        "ollama-native/nonstream-after-tool-result.json",
        ("text",),
        OLLAMA_END,
        text_start='<think>\nOkay, the user asked, "Which date do we have today?"',
        text_end="</think>\n\nThe current date is August 13, 2010.",
        usage=usage(210, 365),
    ),
    Case(
        "ollama-native/nonstream-after-tool-result.json",
        ("reasoning", "text"),
        OLLAMA_END,
        reasoning_start='\nOkay, the user asked, "Which date do we have today?"',
        text="The current date is August 13, 2010.",
        options={"provider": "ollama", "think_tags": True},
        name="think_tags",
    ),
    Case(
        "ollama-native/nonstream-cloud-tool-call-gpt-oss.json",
        ("reasoning", "tool_use"),
        ("tool_use", "stop"),
        reasoning="User asks about weather in San Francisco. Use function getWeather.",
        tools=(("getWeather", {"location": "San Francisco, CA"}),),
        tool_ids=("call_mo1wm122",),
        usage=usage(145, 44),
    ),
    Case(
        "ollama-native/nonstream-tool-call-qwen3-think-in-content.json",
        ("text", "tool_use"),
        ("tool_use", "stop"),
        text_start="<think>\nOkay, the user is asking for today's date.",
        text_end="Let's call it.\n</think>\n\n",
        tools=(("getTime", {}),),
        tool_ids=("call_1",),
        usage=usage(132, 126),
    ),
    Case(
        # With the tags split out, only whitespace is left after `</think>`: no text.
        "ollama-native/nonstream-tool-call-qwen3-think-in-content.json",
        ("reasoning", "tool_use"),
        ("tool_use", "stop"),
        reasoning_start="\nOkay, the user is asking for today's date.",
        tools=(("getTime", {}),),
        options={"provider": "ollama", "think_tags": True},
        name="think_tags",
    ),
]

CASES = OPENAI_CHAT + OPENAI_COMPAT + ANTHROPIC + OLLAMA
STREAM_CASES = [c for c in CASES if not c.path.endswith(".json") and not c.options]


def test_cases_name_every_recording() -> None:
    if not REAL_STREAMS.is_dir():
        pytest.skip("the shared real-stream recordings (../shared/real-streams) are absent")
    on_disk = {
        f"{folder}/{path.name}"
        for folder in FORMATS
        for path in (REAL_STREAMS / folder).iterdir()
        if path.is_file()
    }
    assert on_disk == {case.path for case in CASES}


def normalized(case: Case) -> tuple[NormalizedResponse | None, LaminateError | None]:
    data = (REAL_STREAMS / case.path).read_bytes()
    if case.path.endswith(".json") and not case.options:
        try:
            return normalize(data), None
        except LaminateError as exc:
            return exc.partial, exc
    options = dict(case.options)
    provider = options.pop("provider", None)
    outcome = run_chunks([data], provider, **options)
    return outcome.response, outcome.error


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


def check_error(case: Case, error: LaminateError | None) -> None:
    if case.error is None:
        assert error is None, f"unexpected {type(error).__name__}: {error}"
        return
    assert isinstance(error, case.error), f"expected {case.error.__name__}, got {error!r}"
    if case.error_type is not None:
        assert isinstance(error, ProviderError)
        assert error.error_type == case.error_type
        assert error.retryable is case.retryable


def check_text(case: Case, response: NormalizedResponse) -> None:
    text = response.text()
    if case.text is not None:
        assert text == case.text
    assert text.startswith(case.text_start), text[:120]
    assert text.endswith(case.text_end), text[-120:]


def check_reasoning(case: Case, response: NormalizedResponse) -> None:
    reasoning = response.reasoning()
    if not reasoning:
        return
    first = reasoning[0]
    if case.reasoning is not None:
        assert first.text == case.reasoning
    assert first.text.startswith(case.reasoning_start), first.text[:120]
    if case.signature_start:
        assert first.signature is not None
        assert first.signature.startswith(case.signature_start)
    if case.redacted is not None:
        assert tuple(r.redacted for r in reasoning) == case.redacted
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
    invalid = [b for b in response.content if isinstance(b, InvalidToolUse)]
    assert len(invalid) == len(case.invalid)
    for block, (name, raw_start) in zip(invalid, case.invalid, strict=True):
        assert block.name == name
        assert block.raw_input.startswith(raw_start)
    inputs = [
        b.data.value["input"]
        for b in response.content
        if isinstance(b, Unknown) and "input" in b.data
    ]
    assert inputs == list(case.unknown_inputs)


@needs_real_streams
@pytest.mark.parametrize("case", CASES, ids=[c.test_id for c in CASES])
def test_recording(case: Case) -> None:
    response, error = normalized(case)
    check_error(case, error)
    assert response is not None
    assert tuple(kind_of(b) for b in response.content) == case.blocks
    if case.error is None:
        assert case.stop is not None
        assert (response.stop_reason.kind, response.stop_reason.raw) == case.stop
    check_text(case, response)
    check_reasoning(case, response)
    check_tools(case, response)
    got_usage = {name: getattr(response.usage, name) for name in case.usage}
    assert got_usage == case.usage
    if case.id is not None:
        assert response.id == case.id
    if case.model is not None:
        assert response.model == case.model


@needs_real_streams
@pytest.mark.parametrize("case", STREAM_CASES, ids=[c.test_id for c in STREAM_CASES])
def test_recording_chunking_does_not_matter(case: Case) -> None:
    data = (REAL_STREAMS / case.path).read_bytes()
    whole = run_chunks([data])
    for chunks in (lines_of(data), list(split_at(data, range(7, len(data), 7)))):
        other = run_chunks(chunks)
        assert other.events == whole.events
        assert type(other.error) is type(whole.error)
