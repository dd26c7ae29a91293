"""Each API's official SDK playing a two-turn tool loop against a base URL (the proxy's).

``tool_loop(api, base_url, model, prompt, stream)`` asks with one tool (``get_weather``),
expects a call to it, answers it with ``result_for(city)``, and returns
``(the call's arguments, the final text)``. Each client is the SDK's usual one, with its
retries off, reading the answer with its own stream accumulator where it has one (so its
own checks of the answer's shape apply).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"city": {"type": "string", "description": "The city."}},
    "required": ["city"],
}
DESCRIPTION = "The weather in a city."
KEY = "client-key"


def result_for(city: str) -> str:
    return f"sunny in {city}"


Loop = Callable[[str, str, str, bool], tuple[dict[str, Any], str]]

_OPEN: list[Any] = []


def _keep(client: Any) -> Any:
    """Remember a client, closed when its loop ends (``tool_loop``)."""
    _OPEN.append(client)
    return client


def _openai(base_url: str, model: str, prompt: str, stream: bool) -> tuple[dict[str, Any], str]:
    import openai

    client = _keep(openai.OpenAI(base_url=f"{base_url}/v1", api_key=KEY, max_retries=0))
    tools: Any = [
        {
            "type": "function",
            "function": {"name": "get_weather", "description": DESCRIPTION, "parameters": SCHEMA},
        }
    ]
    messages: list[Any] = [{"role": "user", "content": prompt}]

    def ask() -> Any:
        if stream:
            with client.chat.completions.stream(
                model=model, messages=messages, tools=tools
            ) as events:
                return events.get_final_completion().choices[0].message
        return (
            client.chat.completions.create(model=model, messages=messages, tools=tools)
            .choices[0]
            .message
        )

    message = ask()
    call = message.tool_calls[0]
    assert call.function.name == "get_weather"
    args = json.loads(call.function.arguments)
    messages.append(
        {
            "role": "assistant",
            "tool_calls": [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": call.function.arguments},
                }
            ],
        }
    )
    messages.append({"role": "tool", "tool_call_id": call.id, "content": result_for(args["city"])})
    return args, ask().content or ""


def _responses(base_url: str, model: str, prompt: str, stream: bool) -> tuple[dict[str, Any], str]:
    import openai

    client = _keep(openai.OpenAI(base_url=f"{base_url}/v1", api_key=KEY, max_retries=0))
    tools: Any = [
        {
            "type": "function",
            "name": "get_weather",
            "description": DESCRIPTION,
            "parameters": SCHEMA,
            "strict": False,
        }
    ]
    items: list[Any] = [{"role": "user", "content": prompt}]

    def ask() -> Any:
        if stream:
            with client.responses.stream(model=model, input=items, tools=tools) as events:
                return events.get_final_response()
        return client.responses.create(model=model, input=items, tools=tools)

    first = ask()
    call = next(item for item in first.output if item.type == "function_call")
    assert call.name == "get_weather"
    args = json.loads(call.arguments)
    items.append(
        {
            "type": "function_call",
            "call_id": call.call_id,
            "name": call.name,
            "arguments": call.arguments,
        }
    )
    items.append(
        {
            "type": "function_call_output",
            "call_id": call.call_id,
            "output": result_for(args["city"]),
        }
    )
    return args, ask().output_text


def _anthropic(base_url: str, model: str, prompt: str, stream: bool) -> tuple[dict[str, Any], str]:
    import anthropic

    client = _keep(anthropic.Anthropic(base_url=base_url, api_key=KEY, max_retries=0))
    tools: Any = [{"name": "get_weather", "description": DESCRIPTION, "input_schema": SCHEMA}]
    messages: list[Any] = [{"role": "user", "content": prompt}]

    def ask() -> Any:
        if stream:
            with client.messages.stream(
                model=model, max_tokens=256, messages=messages, tools=tools
            ) as events:
                return events.get_final_message()
        return client.messages.create(model=model, max_tokens=256, messages=messages, tools=tools)

    first = ask()
    use = next(block for block in first.content if block.type == "tool_use")
    assert use.name == "get_weather"
    assert first.stop_reason == "tool_use"
    args = dict(use.input)
    messages.append(
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": use.id, "name": use.name, "input": args}],
        }
    )
    messages.append(
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": use.id, "content": result_for(args["city"])}
            ],
        }
    )
    final = ask()
    return args, "".join(block.text for block in final.content if block.type == "text")


def _gemini(base_url: str, model: str, prompt: str, stream: bool) -> tuple[dict[str, Any], str]:
    from google import genai
    from google.genai import types

    client = _keep(genai.Client(api_key=KEY, http_options=types.HttpOptions(base_url=base_url)))
    config = types.GenerateContentConfig(
        tools=[
            types.Tool(
                function_declarations=[
                    types.FunctionDeclaration(
                        name="get_weather", description=DESCRIPTION, parameters_json_schema=SCHEMA
                    )
                ]
            )
        ],
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
    )
    contents: list[Any] = [types.Content(role="user", parts=[types.Part(text=prompt)])]

    def ask() -> tuple[list[Any], str]:
        if stream:
            calls: list[Any] = []
            text = ""
            for chunk in client.models.generate_content_stream(
                model=model, contents=contents, config=config
            ):
                calls += chunk.function_calls or []
                text += chunk.text or ""
            return calls, text
        answer = client.models.generate_content(model=model, contents=contents, config=config)
        return answer.function_calls or [], answer.text or ""

    calls, _ = ask()
    call = calls[0]
    assert call.name == "get_weather"
    args = dict(call.args or {})
    contents.append(types.Content(role="model", parts=[types.Part(function_call=call)]))
    contents.append(
        types.Content(
            role="user",
            parts=[
                types.Part.from_function_response(
                    name="get_weather", response={"output": result_for(args["city"])}
                )
            ],
        )
    )
    return args, ask()[1]


def _ollama(base_url: str, model: str, prompt: str, stream: bool) -> tuple[dict[str, Any], str]:
    import ollama

    client = _keep(ollama.Client(host=base_url, headers={"authorization": f"Bearer {KEY}"}))
    tools: Any = [
        {
            "type": "function",
            "function": {"name": "get_weather", "description": DESCRIPTION, "parameters": SCHEMA},
        }
    ]
    messages: list[Any] = [{"role": "user", "content": prompt}]

    def ask() -> tuple[list[Any], str]:
        if stream:
            calls: list[Any] = []
            text = ""
            for part in client.chat(model=model, messages=messages, tools=tools, stream=True):
                calls += part.message.tool_calls or []
                text += part.message.content or ""
            return calls, text
        answer = client.chat(model=model, messages=messages, tools=tools, stream=False)
        return list(answer.message.tool_calls or []), answer.message.content or ""

    calls, _ = ask()
    call = calls[0]
    assert call.function.name == "get_weather"
    args = dict(call.function.arguments)
    messages.append(
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"function": {"name": "get_weather", "arguments": args}}],
        }
    )
    messages.append(
        {"role": "tool", "content": result_for(args["city"]), "tool_name": "get_weather"}
    )
    return args, ask()[1]


def bedrock_client(base_url: str) -> Any:
    import boto3
    from botocore.config import Config

    return boto3.client(
        "bedrock-runtime",
        endpoint_url=base_url,
        region_name="us-east-1",
        aws_access_key_id="AKIDEXAMPLE",
        aws_secret_access_key="secret",
        config=Config(retries={"max_attempts": 1, "mode": "standard"}),
    )


def _bedrock(base_url: str, model: str, prompt: str, stream: bool) -> tuple[dict[str, Any], str]:
    client = _keep(bedrock_client(base_url))
    tool_config = {
        "tools": [
            {
                "toolSpec": {
                    "name": "get_weather",
                    "description": DESCRIPTION,
                    "inputSchema": {"json": SCHEMA},
                }
            }
        ]
    }
    messages: list[Any] = [{"role": "user", "content": [{"text": prompt}]}]

    def ask() -> tuple[list[dict[str, Any]], str]:
        if not stream:
            answer = client.converse(modelId=model, messages=messages, toolConfig=tool_config)
            blocks = answer["output"]["message"]["content"]
            calls = [b["toolUse"] for b in blocks if "toolUse" in b]
            return calls, "".join(b.get("text", "") for b in blocks)
        answer = client.converse_stream(modelId=model, messages=messages, toolConfig=tool_config)
        calls, text, current = [], "", None
        for event in answer["stream"]:
            if "contentBlockStart" in event:
                start = event["contentBlockStart"]["start"].get("toolUse")
                if start is not None:
                    current = {**start, "input": ""}
                    calls.append(current)
            elif "contentBlockDelta" in event:
                delta = event["contentBlockDelta"]["delta"]
                text += delta.get("text", "")
                if "toolUse" in delta and current is not None:
                    current["input"] += delta["toolUse"]["input"]
        for call in calls:
            call["input"] = json.loads(call["input"] or "{}")
        return calls, text

    calls, _ = ask()
    call = calls[0]
    assert call["name"] == "get_weather"
    args = dict(call["input"])
    messages.append(
        {
            "role": "assistant",
            "content": [
                {"toolUse": {"toolUseId": call["toolUseId"], "name": "get_weather", "input": args}}
            ],
        }
    )
    messages.append(
        {
            "role": "user",
            "content": [
                {
                    "toolResult": {
                        "toolUseId": call["toolUseId"],
                        "content": [{"text": result_for(args["city"])}],
                    }
                }
            ],
        }
    )
    return args, ask()[1]


def _cohere(base_url: str, model: str, prompt: str, stream: bool) -> tuple[dict[str, Any], str]:
    import cohere

    client = _keep(cohere.ClientV2(api_key=KEY, base_url=base_url))
    tools: Any = [
        {
            "type": "function",
            "function": {"name": "get_weather", "description": DESCRIPTION, "parameters": SCHEMA},
        }
    ]
    messages: list[Any] = [{"role": "user", "content": prompt}]

    def ask() -> tuple[list[dict[str, str]], str]:
        if not stream:
            answer = client.chat(model=model, messages=messages, tools=tools)
            calls = [
                {"id": c.id, "name": c.function.name, "arguments": c.function.arguments}
                for c in answer.message.tool_calls or []
            ]
            text = "".join(getattr(c, "text", "") for c in answer.message.content or [])
            return calls, text
        calls, text = [], ""
        for event in client.chat_stream(model=model, messages=messages, tools=tools):
            if event.type == "tool-call-start":
                call = event.delta.message.tool_calls
                calls.append(
                    {
                        "id": call.id,
                        "name": call.function.name,
                        "arguments": call.function.arguments or "",
                    }
                )
            elif event.type == "tool-call-delta":
                calls[-1]["arguments"] += event.delta.message.tool_calls.function.arguments or ""
            elif event.type == "content-delta":
                text += event.delta.message.content.text or ""
        return calls, text

    calls, _ = ask()
    call = calls[0]
    assert call["name"] == "get_weather"
    args = json.loads(call["arguments"])
    messages.append(
        {
            "role": "assistant",
            "tool_calls": [
                {
                    "id": call["id"],
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": call["arguments"]},
                }
            ],
        }
    )
    messages.append(
        {"role": "tool", "tool_call_id": call["id"], "content": result_for(args["city"])}
    )
    return args, ask()[1]


LOOPS: dict[str, Loop] = {
    "openai": _openai,
    "openai-responses": _responses,
    "anthropic": _anthropic,
    "gemini": _gemini,
    "ollama": _ollama,
    "bedrock": _bedrock,
    "cohere": _cohere,
}


def tool_loop(
    api: str, base_url: str, model: str, prompt: str, stream: bool
) -> tuple[dict[str, Any], str]:
    """Run ``api``'s SDK through a two-turn tool loop; ``(call arguments, final text)``."""
    try:
        return LOOPS[api](base_url, model, prompt, stream)
    finally:
        while _OPEN:
            client = _OPEN.pop()
            if hasattr(client, "close"):
                client.close()
            else:
                client.__exit__(None, None, None)
