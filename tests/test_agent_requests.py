"""The coding agents' requests, translated for every backend the proxy serves them on.

The bodies below are written for these tests in the shape Claude Code (2.1) and Codex
(0.171) send: Claude Code's adaptive thinking, ``context_management``, ``output_config``,
a system message inside ``messages`` that says the working directory, cache points, a
deferred tool; Codex's developer messages, input items with ids, function tools with
``strict: false``, a namespace of tools, hosted web search, the free-form ``apply_patch``
tool with its grammar, a client-run tool search. Each translation must be a body the
backend's own SDK types accept (tests/request_validators.py), and keep what the agent's
loop needs: the working directory, the agent's file tool under a name that comes back as
the agent's own, the tool result with the call's id.

The full loop, with the real agents, is in tests/test_agents.py.
"""

from __future__ import annotations

import json
from typing import Any, Final

import pytest

from laminate import translate_request

from .request_validators import validate

WORKDIR: Final = "/tmp/agent-work.5kQ2"
CALL: Final = "call_9f2c1d7e04b84a6b"
CLAUDE_BACKENDS: Final = ("openai", "openai-responses", "gemini", "ollama", "bedrock", "cohere")
CODEX_BACKENDS: Final = ("anthropic", "gemini", "openai", "ollama")

_OBJECT_SCHEMA: Final = "https://json-schema.org/draft/2020-12/schema"


def _claude_tool(name: str, description: str, properties: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": name,
        "description": description,
        "input_schema": {
            "$schema": _OBJECT_SCHEMA,
            "type": "object",
            "properties": properties,
            "required": list(properties),
            "additionalProperties": False,
        },
    }


def claude_code_request(*, with_result: bool) -> dict[str, Any]:
    """A request shaped like Claude Code's (``-p``, the second turn when
    ``with_result``)."""
    text = {"type": "string", "description": "text"}
    messages: list[dict[str, Any]] = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "<system-reminder>\nProject notes.\n</system-reminder>"},
                {"type": "text", "text": "Write the file note.txt.",
                 "cache_control": {"type": "ephemeral"}},
            ],
        },
        {
            "role": "system",
            "content": (
                "# Environment\nYou have been invoked in the following environment: \n"
                f" - Primary working directory: {WORKDIR}\n - Platform: linux\n"
            ),
        },
    ]  # fmt: skip
    if with_result:
        call = {"file_path": f"{WORKDIR}/note.txt", "content": "hello"}
        messages.append(
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": CALL, "name": "Write", "input": call}],
            }
        )
        result = {
            "type": "tool_result",
            "tool_use_id": CALL,
            "content": f"File created successfully at: {WORKDIR}/note.txt",
            "cache_control": {"type": "ephemeral"},
        }
        messages.append({"role": "user", "content": [result]})
    return {
        "model": "claude-opus-5-5",
        "messages": messages,
        "system": [
            {"type": "text", "text": "x-anthropic-billing-header: cc_version=2.1;"},
            {"type": "text", "text": "You are an agent.", "cache_control": {"type": "ephemeral"}},
            {"type": "text", "text": "Use the tools to do the work."},
        ],
        "tools": [
            _claude_tool("Bash", "Runs a shell command.", {"command": text}),
            _claude_tool("Read", "Reads a file.", {"file_path": text}),
            _claude_tool("Write", "Writes a file.", {"file_path": text, "content": text}),
            {
                "name": "DeferredToolPlaceholder",
                "description": "Keeps deferred tool loading active; never call it.",
                "input_schema": {"type": "object", "properties": {}},
                "defer_loading": True,
            },
        ],
        "metadata": {"user_id": json.dumps({"device_id": "d0", "session_id": "s0"})},
        "max_tokens": 32000,
        "thinking": {"type": "adaptive", "display": "omitted"},
        "context_management": {"edits": [{"type": "clear_thinking_20251015", "keep": "all"}]},
        "output_config": {"effort": "medium"},
        "stream": True,
    }


def _function(name: str, properties: dict[str, Any]) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    schema |= {"required": list(properties)[:1], "additionalProperties": False}
    description = f"The {name} tool."
    return {"type": "function", "name": name, "description": description, "strict": False,
            "parameters": schema}  # fmt: skip


def codex_request(*, with_result: bool, patch_tool: bool = False) -> dict[str, Any]:
    """A request shaped like Codex's (``codex exec``, the second turn when
    ``with_result``; ``patch_tool``: the free-form ``apply_patch`` tool Codex offers
    models it knows)."""
    text = {"type": "string", "description": "text"}

    def message(role: str, ident: str, words: str) -> dict[str, Any]:
        kind = "output_text" if role == "assistant" else "input_text"
        return {
            "type": "message",
            "id": ident,
            "role": role,
            "content": [{"type": kind, "text": words}],
        }

    items = [
        message("developer", "msg_1", "You are a coding agent running in a terminal."),
        message("user", "msg_2", f"<environment><cwd>{WORKDIR}</cwd></environment>"),
        message("user", "msg_3", "Write the file note.txt."),
    ]  # fmt: skip
    if with_result:
        arguments = json.dumps({"cmd": "printf hello > note.txt"})
        items.append(
            {"type": "function_call", "status": "completed", "id": "fc_1", "name": "exec_command",
             "arguments": arguments, "call_id": CALL}
        )  # fmt: skip
        items.append(
            {"type": "function_call_output", "id": "fco_1", "call_id": CALL,
             "output": "Process exited with code 0\nOutput:\n"}
        )  # fmt: skip
    tools: list[dict[str, Any]] = [
        _function("exec_command", {"cmd": text, "workdir": text, "login": {"type": "boolean"}}),
        _function("write_stdin", {"session_id": {"type": "number"}, "chars": text}),
        {"type": "namespace", "name": "multi_agent_v1", "description": "Sub-agents.",
         "tools": [_function("spawn_agent", {"task": text})]},
        {"type": "web_search", "external_web_access": True},
    ]  # fmt: skip
    if patch_tool:
        grammar = (
            'start: "*** Begin Patch" LF body "*** End Patch"\nbody: /(.|\\n)*/\n%import common.LF'
        )
        tools.append(
            {"type": "custom", "name": "apply_patch", "description": "Edits files (free-form).",
             "format": {"type": "grammar", "syntax": "lark", "definition": grammar}}
        )  # fmt: skip
    return {
        "model": "local-model",
        "stream": True,
        "input": items,
        "tools": tools,
        "tool_choice": "auto",
        "parallel_tool_calls": True,
        "reasoning": {"effort": "medium"},
        "store": False,
        "include": ["reasoning.encrypted_content"],
        "prompt_cache_key": "01a23-session",
        "client_metadata": {"session_id": "01a23-session"},
    }


def _check(source: str, target: str, request: dict[str, Any], path: str, tool: str) -> None:
    translation = translate_request(request, source, target, path=path)
    validate(target, translation.body, translation.path)
    written = json.dumps(translation.body)
    assert WORKDIR in written, "the working directory was lost"
    names = {translation.names.get(n, n) for n in _tool_names(target, translation.body)}
    assert tool in names, f"the agent's {tool} tool is not offered: {sorted(names)}"


def _tool_names(target: str, body: dict[str, Any]) -> list[str]:
    tools = body.get("tools") or []
    if target == "gemini":
        return [d["name"] for t in tools for d in t.get("functionDeclarations", [])]
    if target == "bedrock":
        return [t["toolSpec"]["name"] for t in body.get("toolConfig", {}).get("tools", [])]
    if target in ("openai", "ollama", "cohere"):
        return [t["function"]["name"] for t in tools if "function" in t]
    return [t["name"] for t in tools if "name" in t]


def _claude_cases() -> list[Any]:
    return [
        pytest.param(
            target,
            with_result,
            id=f"{target}-{'with-result' if with_result else 'first-turn'}",
        )
        for with_result in (False, True)
        for target in CLAUDE_BACKENDS
    ]


@pytest.mark.parametrize(("target", "with_result"), _claude_cases())
def test_claude_code_requests_on_other_apis(target: str, with_result: bool) -> None:
    request = claude_code_request(with_result=with_result)
    _check("anthropic", target, request, "/v1/messages?beta=true", "Write")
    if with_result:
        translation = translate_request(request, "anthropic", target, path="/v1/messages")
        assert "File created successfully" in json.dumps(translation.body)


@pytest.mark.parametrize("with_result", [False, True], ids=["first-turn", "with-result"])
@pytest.mark.parametrize("target", CODEX_BACKENDS)
def test_codex_requests_on_other_apis(target: str, with_result: bool) -> None:
    request = codex_request(with_result=with_result)
    _check("openai-responses", target, request, "/v1/responses", "exec_command")
    if with_result:
        translation = translate_request(request, "openai-responses", target, path="/v1/responses")
        assert "Process exited with code 0" in json.dumps(translation.body)


@pytest.mark.parametrize(
    "target",
    list(CODEX_BACKENDS),
)
def test_codex_free_form_patch_tool_on_other_apis(target: str) -> None:
    request = codex_request(with_result=False, patch_tool=True)
    _check("openai-responses", target, request, "/v1/responses", "exec_command")
