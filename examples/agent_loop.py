"""A full two-turn tool loop against each provider, offline.

The provider is laminate's mock server (the recordings bundled with laminate: the model
asks for two tool calls, then answers once it has their results). The loop itself is what
you would write against the real APIs: only the base URL and the headers change.

    python examples/agent_loop.py            # every provider
    python examples/agent_loop.py anthropic  # one of them
"""

from __future__ import annotations

import sys
from typing import Any

import anyio
import httpx

import laminate
from laminate.testing import mock_server

ENDPOINTS = {
    "openai": "/v1/chat/completions",
    "openai-responses": "/v1/responses",
    "anthropic": "/v1/messages",
    "ollama": "/api/chat",
    "cohere": "/v2/chat",
    # Gemini names the model in the path; `alt=sse` asks for SSE (without it: a JSON array,
    # which laminate reads as well).
    "gemini": "/v1beta/models/gemini-3-pro-preview:streamGenerateContent?alt=sse",
    # Bedrock's ConverseStream names the model in the path too, and answers in AWS's
    # binary event stream framing.
    "bedrock": "/model/us.anthropic.claude-sonnet-4-5-20250929-v1:0/converse-stream",
}
MODELS = {
    "openai": "gpt-4.1-mini",
    "openai-responses": "gpt-4.1-mini",
    "anthropic": "claude-sonnet-4-5",
    "ollama": "qwen3:8b",
    "cohere": "command-a-03-2025",
}

registry = laminate.ToolRegistry()


@registry.tool
def write_file(path: str, content: str) -> str:
    """Write a text file."""
    return f"wrote {len(content.encode())} bytes to {path} (not really: this is an example)"


@registry.tool
async def run_command(command: str) -> str:
    """Run a shell command and return its output."""
    return "1 passed and 0 failed. Test passed."


def first_request(provider: str) -> dict[str, Any]:
    if provider == "gemini":  # `contents` of parts; the endpoint says it streams
        return {
            "contents": [{"role": "user", "parts": [{"text": "Write slugify.py and test it."}]}],
            "tools": registry.tools(provider),
        }
    if provider == "bedrock":  # Converse: content blocks, and the tools under toolConfig
        return {
            "messages": [{"role": "user", "content": [{"text": "Write slugify.py and test it."}]}],
            "toolConfig": {"tools": registry.tools(provider)},
        }
    key = "input" if provider == "openai-responses" else "messages"
    request: dict[str, Any] = {
        "model": MODELS[provider],
        "stream": True,
        key: [{"role": "user", "content": "Write slugify.py and run its doctest."}],
        "tools": registry.tools(provider),
    }
    if provider == "anthropic":
        request["max_tokens"] = 2048
    return request


async def tool_loop(client: httpx.AsyncClient, provider: str) -> laminate.NormalizedResponse:
    """Ask, run the tools the model calls, send the results back; until it answers."""
    request = first_request(provider)
    history_key = {"openai-responses": "input", "gemini": "contents"}.get(provider, "messages")
    for _ in range(5):  # a bound on the number of turns
        async with client.stream("POST", ENDPOINTS[provider], json=request) as http:
            response = await laminate.collect(http)
        if not response.has_tool_use():
            return response
        for call in response.tool_uses():
            print(f"  {provider}: {call.name}({', '.join(call.input.value)})")
        results = await registry.run(response, timeout=30)
        turn = laminate.assistant_message(response, provider)
        history = request[history_key] + (turn if isinstance(turn, list) else [turn])
        request = {**request, history_key: history + laminate.tool_results(results, provider)}
    raise RuntimeError("the model kept calling tools")


async def main(providers: list[str]) -> None:
    with mock_server() as base_url:
        async with httpx.AsyncClient(base_url=base_url, timeout=30) as client:
            for provider in providers:
                final = await tool_loop(client, provider)
                print(f"{provider} answered ({final.stop_reason}): {final.text()[:70]}...")


if __name__ == "__main__":
    anyio.run(main, sys.argv[1:] or list(ENDPOINTS))
