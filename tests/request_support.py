"""Helpers for the request tests: the recorded requests in ../shared/request-vectors (used
by path, never copied), the JSON of a request with the forms its API takes as equal made
one (what "the same body" means when a request is read and written back: key order and
explicit defaults aside), and what a read-back must keep."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlsplit

import pytest

import laminate
from laminate import Request, Text, ToolResult, ToolUse
from laminate._apis.registry import APIS

from .support import ROOT

VECTORS: Final = ROOT.parent / "shared" / "request-vectors"
FOLDERS: Final = {
    "openai": "openai_chat",
    "openai-responses": "openai_responses",
    "anthropic": "anthropic",
    "gemini": "gemini",
    "bedrock": "bedrock_converse",
    "ollama": "ollama",
    "cohere": "cohere_v2",
}
WRITERS: Final = tuple(name for name, record in APIS.items() if record.write_request is not None)
READERS: Final = tuple(name for name, record in APIS.items() if record.read_request is not None)

needs_vectors = pytest.mark.skipif(
    not VECTORS.is_dir(),
    reason="the recorded requests (../shared/request-vectors) are not beside this clone",
)
# Real clients' requests (coding agents among them), as bare bodies: the path (which names
# the model and the streaming for Gemini and Bedrock) is made from the recorded answer
# of the same name, streamed or not, with a model of that API's.
REAL_REQUESTS: Final = ROOT.parent / "shared" / "real-streams-4" / "requests"
_ANSWERS: Final = {"gemini": "gemini-native", "bedrock_converse": "bedrock-converse"}
_PATHS: Final = {  # (not streamed, streamed)
    "gemini": (
        "/v1beta/models/gemini-2.5-flash:generateContent",
        "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
    ),
    "bedrock_converse": (
        "/model/us.anthropic.claude-haiku-4-5-20251001-v1%3A0/converse",
        "/model/us.anthropic.claude-haiku-4-5-20251001-v1%3A0/converse-stream",
    ),
}
# Recorded bodies that are not a request of the API their folder names, with why.
NOT_REQUESTS: Final = {
    "lmnr-bedrock-invoke-anthropic-claude3-haiku-msg-bdrk": (
        "a Bedrock InvokeModel body (anthropic_version, the model in its path), not a "
        "Messages request"
    ),
}


@dataclass(frozen=True)
class Vector:
    """One recorded request body: the API it was sent to, its file, and the path it was
    sent to (with its query: Gemini and Bedrock name the model and the streaming in it)."""

    api: str
    file: Path
    given_path: str | None = None
    real: bool = False
    """One of the real clients' requests (``REAL_REQUESTS``), whose path is made."""

    @property
    def id(self) -> str:
        return f"{'real/' if self.real else ''}{self.api}/{self.file.stem}"

    @property
    def name(self) -> str:
        return self.file.stem

    def body(self) -> dict[str, Any]:
        data = json.loads(self.file.read_text(encoding="utf-8"))
        assert isinstance(data, dict), self.file
        return data

    @cached_property
    def path(self) -> str:
        """From the ``.source.txt`` beside the body: its ``method/uri`` or ``url`` line."""
        if self.real:
            return self.given_path  # type: ignore[return-value]
        source = self.file.with_name(self.file.stem + ".source.txt")
        for line in source.read_text(encoding="utf-8").splitlines():
            if line.startswith(("method/uri:", "url:")):
                parts = urlsplit(line.split()[-1])
                return parts.path + (f"?{parts.query}" if parts.query else "")
        raise ValueError(f"{source}: no method/uri or url line")


def vectors(api: str | None = None) -> list[Vector]:
    """Every recorded request body (of ``api``), in a stable order; none when the
    recordings are not beside this clone."""
    found: list[Vector] = []
    for name, folder in FOLDERS.items():
        if api is not None and name != api:
            continue
        paths = sorted((VECTORS / folder).glob("*.json"))
        found.extend(Vector(name, path) for path in paths if ".response" not in path.name)
    return found


def real_requests() -> list[Vector]:
    """Every real client's recorded request (``REAL_REQUESTS``), in a stable order; none
    when the recordings are not beside this clone."""
    found: list[Vector] = []
    for name, folder in FOLDERS.items():
        for file in sorted((REAL_REQUESTS / folder).glob("*.json")):
            path = None
            if folder in _PATHS:
                answers = REAL_REQUESTS.parent / _ANSWERS[folder]
                streamed = any(answers.glob(f"{file.stem}.sse")) or any(
                    answers.glob(f"{file.stem}.eventstream")
                )
                path = _PATHS[folder][streamed]
            found.append(Vector(name, file, path, real=True))
    return found


def recordings() -> list[Vector]:
    """The request vectors and the real clients' requests."""
    return vectors() + real_requests()


def recording_params() -> list[Any]:
    """``recordings()`` that are requests, as pytest parameters; a body that is not a
    request of its API is skipped with why (one skipped parameter when there are none)."""
    found = []
    for v in recordings():
        if v.api not in READERS:
            continue
        why = NOT_REQUESTS.get(v.name)
        marks = [pytest.mark.skip(reason=why)] if why is not None else []
        found.append(pytest.param(v, id=v.id, marks=marks))
    if not found:
        reason = "no recorded requests here (../shared is not beside this clone)"
        return [pytest.param(None, marks=pytest.mark.skip(reason=reason))]
    return found


def vector_params(api: str | None = None, readable: bool = True) -> list[Any]:
    """``vectors(api)`` as pytest parameters (one skipped parameter when there are none)."""
    found = [pytest.param(v, id=v.id) for v in vectors(api) if not readable or v.api in READERS]
    if not found:
        return [pytest.param(None, marks=pytest.mark.skip(reason="no recorded requests here"))]
    return found


# -- what a read-back must keep -------------------------------------------------------------


@dataclass(frozen=True)
class Kept:
    """What of a request must survive a translation (or be listed as lost)."""

    system: str
    texts: str
    calls: tuple[tuple[str, str], ...]
    results: tuple[str, ...]
    tools: tuple[tuple[str, tuple[str, ...]], ...]
    tool_choice: str | None
    max_tokens: int | None


def kept(request: Request) -> Kept:
    system = [b.text for b in request.system if isinstance(b, Text)]
    texts: list[str] = []
    calls: list[tuple[str, str]] = []
    results: list[str] = []
    for message in request.messages:
        for block in message.content:
            if message.role == "system" and isinstance(block, Text):
                system.append(block.text)
            elif isinstance(block, Text) and block.text.strip():
                texts.append(block.text.strip())
            elif isinstance(block, ToolUse):
                calls.append((block.name, json.dumps(block.input.value, sort_keys=True)))
            elif isinstance(block, ToolResult):
                results.append(block.output.removeprefix("Error: ").strip())
    tools = tuple(
        (t.name, tuple(sorted(t.schema.get("properties", {}))))
        for t in request.tools
        if t.kind == "function"
    )
    return Kept(
        "".join("".join(system).split()),
        "".join("".join(texts).split()),
        tuple(calls),
        tuple(results),
        tools,
        request.tool_choice,
        request.max_tokens,
    )


def canonical(api: str, body: Any) -> Any:
    """``body`` with equivalent spellings made one, for ``api``."""
    return CANONICAL.get(api, _same)(body)


def _same(body: Any) -> Any:
    return body


def _text_blocks(content: Any, kind: str = "text") -> Any:
    if isinstance(content, str):
        return [{"type": kind, "text": content}]
    return content


def _anthropic(body: dict[str, Any]) -> dict[str, Any]:
    out = dict(body)
    if "system" in out:
        out["system"] = _text_blocks(out["system"])
        if out["system"] == [{"type": "text", "text": ""}] or out["system"] == []:
            del out["system"]
    messages = []
    for original in out.get("messages", []):
        message = {**original, "content": _text_blocks(original["content"])}
        blocks = []
        for given in message["content"]:
            block = dict(given)
            if block.get("type") == "tool_result":
                if block.get("is_error") is False:
                    del block["is_error"]
                if "content" in block:
                    block["content"] = _text_blocks(block["content"])
                    if block["content"] == [{"type": "text", "text": ""}] or block["content"] == []:
                        del block["content"]
            if block.get("type") == "text" and not block.get("text") and len(block) == 2:
                continue
            blocks.append(block)
        message["content"] = blocks
        messages.append(message)
    out["messages"] = messages
    if "tools" in out:
        out["tools"] = [_no_empty(t, "description") for t in out["tools"]]
    return out


def _no_empty(obj: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in obj.items() if not (k == key and v in ("", None))}


def _json_or_text(text: str) -> Any:
    # Arguments are JSON text: the same object written with other spacing is the same.
    try:
        return json.loads(text)
    except ValueError:
        return text


def _parsed(call: dict[str, Any]) -> dict[str, Any]:
    if "function" not in call:
        return call
    function = call["function"]
    return {**call, "function": {**function, "arguments": _json_or_text(function["arguments"])}}


def _chat(body: dict[str, Any]) -> dict[str, Any]:
    out = dict(body)
    messages = []
    for original in out.get("messages", []):
        message = dict(original)
        if (
            isinstance(message.get("content"), list)
            and all(
                isinstance(p, dict) and p.get("type") == "text" and set(p) == {"type", "text"}
                for p in message["content"]
            )
            and message["role"] != "user"
        ):
            message["content"] = "".join(p["text"] for p in message["content"])
        if message.get("role") == "user" and isinstance(message.get("content"), str):
            message["content"] = [{"type": "text", "text": message["content"]}]
        if message.get("content") in ("", None) and message.get("tool_calls"):
            message["content"] = None
        if message.get("tool_calls") == []:
            del message["tool_calls"]
        if message.get("tool_calls"):
            message["tool_calls"] = [_parsed(call) for call in message["tool_calls"]]
        messages.append(message)
    out["messages"] = messages
    if "tools" in out:
        out["tools"] = [
            {**t, "function": _no_empty(t["function"], "description")} if "function" in t else t
            for t in out["tools"]
        ]
    if out.get("stream") is True:
        out.setdefault("stream_options", {"include_usage": True})
    if "max_tokens" in out and "max_completion_tokens" not in out:
        out["max_completion_tokens"] = out.pop("max_tokens")
    return out


def _responses(body: dict[str, Any]) -> dict[str, Any]:
    out = dict(body)
    if isinstance(out.get("input"), str):
        out["input"] = [{"role": "user", "content": out["input"]}]
    items = []
    for original in out.get("input", []):
        item = dict(original)
        if item.get("role") is not None and item.get("type", "message") == "message":
            item["type"] = "message"
            kind = "output_text" if item["role"] == "assistant" else "input_text"
            content = item.get("content")
            if isinstance(content, str):
                item["content"] = [{"type": kind, "text": content}]
            elif isinstance(content, list):
                item["content"] = [
                    {k: v for k, v in p.items() if not (k == "annotations" and v == [])}
                    for p in content
                ]
        if item.get("type") == "function_call":
            item["arguments"] = _json_or_text(item["arguments"])
        items.append(item)
    out["input"] = items
    if "tools" in out:
        out["tools"] = [_no_empty(t, "description") for t in out["tools"]]
    return out


def _gemini(body: Any) -> Any:
    """The body with the spellings proto3 JSON takes as one made one (snake_case keys as
    camelCase; empty objects, lists and descriptions, which say nothing, left out)."""
    if isinstance(body, dict):
        out = {}
        for key, value in body.items():
            head, *rest = key.split("_")
            name = head + "".join(w[:1].upper() + w[1:] for w in rest)
            if value not in ({}, []) and not (name == "description" and value == ""):
                out[name] = _gemini(value)
        return out
    if isinstance(body, list):
        return [_gemini(item) for item in body]
    return body


def _bedrock(body: Any) -> Any:
    """The body with its explicit defaults left out: empty objects and lists, a tool
    result's ``status: "success"``."""
    if isinstance(body, dict):
        return {
            key: _bedrock(value)
            for key, value in body.items()
            if value not in ({}, []) and not (key == "status" and value == "success")
        }
    if isinstance(body, list):
        return [_bedrock(item) for item in body]
    return body


CANONICAL: Final[dict[str, Callable[[Any], Any]]] = {
    "anthropic": _anthropic,
    "openai": _chat,
    "openai-responses": _responses,
    "gemini": _gemini,
    "bedrock": _bedrock,
}


# A model each target's servers can serve, for a recording whose model cannot be one of
# theirs (a router's "vendor/model" or a Bedrock id for Gemini): a translator maps it, as
# the proxy's --model does.
TARGET_MODELS: Final[dict[str, str]] = {
    "gemini": "gemini-2.5-flash",
    "bedrock": "anthropic.claude-3-haiku-20240307-v1:0",
}


def translated(vector: Vector, target: str) -> laminate.Translation:
    """``vector`` translated for ``target``, its model mapped to one of the target's where
    the target refuses the recorded one (a ``TranslationError`` whose reason is
    ``"model"``, checked here)."""
    try:
        return laminate.translate_request(vector.body(), vector.api, target, path=vector.path)
    except laminate.TranslationError as exc:
        if exc.reason != "model" or target not in TARGET_MODELS:
            raise
    return laminate.translate_request(
        vector.body(), vector.api, target, path=vector.path, model=TARGET_MODELS[target]
    )


def written_mapped(request: Request, target: str) -> laminate.WrittenRequest:
    """``request`` written for ``target``, its model mapped as :func:`translated` maps it."""
    try:
        return laminate.write_request(request, target)
    except laminate.TranslationError as exc:
        if exc.reason != "model" or target not in TARGET_MODELS:
            raise
    return laminate.write_request(dataclasses.replace(request, model=TARGET_MODELS[target]), target)
