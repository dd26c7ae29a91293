"""Gemini request shapes: the ``functionDeclarations`` tool, the ``model`` turn, the
``functionResponse`` turn.

A response that came from Gemini goes back with every ``thoughtSignature`` on the part it
came with (Gemini 3 rejects a turn whose calls lost theirs) and with its other parts
(``executableCode``, ``inlineData``, ...) as they were sent. Signatures and parts from
another provider mean nothing to Gemini and are left out. A call id goes back only when
the provider gave one: the ids laminate makes up for calls without one (``call_<n>``) are
not Gemini's, and Gemini pairs results by name when there is none.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Final

from ..._core.response import InvalidToolUse, NormalizedResponse, Reasoning, Text, ToolUse, Unknown
from ..shapes import arguments_object, copy_value, described
from ..spec import Message, ToolDefinition, ToolOutcome
from .stream import METADATA

__all__ = ["assistant", "first_request", "results", "tool", "tools_array"]

# The ids the assembler makes up for calls the provider gave none (`call_<index>`, and
# `_<index>` added on a clash).
_MADE_UP: Final = re.compile(r"call_\d+(?:_\d+)*")


def tool(tool: ToolDefinition) -> Message:
    """One function declaration. ``parametersJsonSchema`` takes the JSON Schema as it is
    (``parameters`` only takes Gemini's OpenAPI subset)."""
    return {
        "name": tool.name,
        **described(tool),
        "parametersJsonSchema": copy_value(tool.parameters),
    }


def tools_array(declarations: list[Message]) -> list[Message]:
    """Gemini's ``tools`` array: one tool holding every function declaration."""
    return [{"functionDeclarations": declarations}] if declarations else []


def assistant(response: NormalizedResponse, reasoning_field: str | None) -> Message:
    own = response.provider == "gemini"
    parts: list[Message] = []
    for block in response.content:
        match block:
            case Reasoning(text=text, signature=signature) if own:
                if text or signature:
                    parts.append(_signed({"text": text, "thought": True}, signature))
            case Text(text=text, signature=signature):
                if text or (own and signature):
                    parts.append(_signed({"text": text}, signature if own else None))
            case ToolUse() | InvalidToolUse():
                call: dict[str, Any] = {"name": block.name, "args": arguments_object(block)}
                if block.id and not _MADE_UP.fullmatch(block.id):
                    call["id"] = block.id
                signature = block.signature if isinstance(block, ToolUse) and own else None
                parts.append(_signed({"functionCall": call}, signature))
            case Unknown(block_type=kind, data=data) if own and kind not in METADATA:
                part = data.value
                if isinstance(part, dict) and kind in part:
                    parts.append(copy_value(part))
            case _:
                pass  # foreign reasoning, metadata: nothing Gemini can take back
    return {"role": "model", "parts": parts}


def results(results: Sequence[ToolOutcome]) -> list[Message]:
    """One ``user`` turn of ``functionResponse`` parts: ``{"output": ...}`` for a result,
    ``{"error": ...}`` for a failure (the keys Gemini's documentation names)."""
    if not results:
        return []
    parts: list[Message] = []
    for result in results:
        reply: dict[str, Any] = {
            "name": result.name,
            "response": {"output": result.output} if result.ok else {"error": result.output},
        }
        if result.call_id and not _MADE_UP.fullmatch(result.call_id):
            reply["id"] = result.call_id
        parts.append({"functionResponse": reply})
    return [{"role": "user", "parts": parts}]


def _signed(part: Message, signature: str | None) -> Message:
    if signature:
        part["thoughtSignature"] = signature
    return part


def first_request(model: str, prompt: str, tools: list[Message]) -> Message:
    """A first request: the model is named in the path, and the endpoint (not a field)
    says whether the answer streams."""
    return {"contents": [{"role": "user", "parts": [{"text": prompt}]}], "tools": tools}
