"""The model a real coding agent talks to in the agent tests: a loopback server that
answers as any of the seven APIs and plays one scripted turn of agent work.

The script, in neutral terms (:class:`Script`):

1. While the conversation holds no tool result, and the request offers the tool the
   script names, the answer calls that tool with the script's arguments (built from the
   request: Claude Code's file tool needs an absolute path, and the agent's working
   directory is only said in its prompt).
2. Once a tool result is there, the answer is the script's final text (its marker) with
   the start of the result, and the conversation is over.
3. Any other request (a title request without tools, a tool the script does not know) is
   answered with a short text, and recorded.

A ``check`` (``check(api, body, path)``, raising ``AssertionError``; by default
``request_validators.validate``, the API's types and what its servers refuse beyond them)
judges each request as the real API would: a request it refuses is answered as that API's
servers answer it (``request_validators.refusal``: their status and error body), and
recorded (:attr:`Seen.refused`), so that the agent fails and the test says why.

Every request is read in the backend's own API (the small readers below, written for
these tests) and recorded as a :class:`Turn`, so a test can say what the backend saw: the
tools offered, the tool result and the id it named. The answer is written with
laminate's own encoders, streamed or whole as the request asks.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from laminate import StreamEncoder, StreamNormalizer, encode_response
from laminate._apis.registry import APIS
from laminate._cli.server import base_url, listen, make_server, serving

from .request_validators import Refused, refusal, validate

Check = Callable[[str, dict[str, Any], str], None]
"""Judges a request body of an API sent to a path (with its query); raises
``AssertionError`` saying why it is refused."""


@dataclass(frozen=True)
class Script:
    """What the scripted model does: call ``tool`` with ``arguments(request text)``, then
    answer ``marker``."""

    tool: str
    arguments: Callable[[str], dict[str, Any]]
    marker: str
    call_id: str = "call_agent0001"
    thinking: str | None = None
    """Reasoning the model shows before each answer (as a reasoning model's would)."""


@dataclass
class Turn:
    """One request the backend answered."""

    api: str
    path: str
    model: str
    stream: bool
    tools: list[str]
    result: str | None
    result_id: str | None
    answer: str
    """``"call"``, ``"final"`` or ``"other"``."""


@dataclass
class Seen:
    turns: list[Turn] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    """Why each refused request was refused."""
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, turn: Turn) -> None:
        with self.lock:
            self.turns.append(turn)

    def of(self, answer: str) -> list[Turn]:
        with self.lock:
            return [t for t in self.turns if t.answer == answer]

    def summary(self) -> str:
        with self.lock:
            turns = [
                f"  {t.api} {t.path} stream={t.stream} answer={t.answer} "
                f"tools={t.tools[:14]} result_id={t.result_id} result={(t.result or '')[:80]!r}"
                for t in self.turns
            ]
            return "\n".join(turns + [f"  refused: {why}" for why in self.refused])


# -- reading a request in its API ---------------------------------------------------------


def _text(content: Any) -> str:
    """The text of a tool result's content, however the API nests it."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(_text(part) for part in content)
    if isinstance(content, dict):
        for key in ("text", "output", "result", "content", "json"):
            if key in content:
                return _text(content[key])
        return json.dumps(content)
    return "" if content is None else json.dumps(content)


def _tools(api: str, body: dict[str, Any]) -> list[str]:
    tools = body.get("tools") or []
    if api in ("openai", "ollama", "cohere"):
        return [t["function"]["name"] for t in tools if "function" in t]
    if api == "openai-responses":
        return [t["name"] for t in tools if t.get("type") == "function"]
    if api == "anthropic":
        return [t["name"] for t in tools if "name" in t]
    if api == "gemini":
        return [
            d["name"]
            for tool in tools
            for d in tool.get("functionDeclarations") or tool.get("function_declarations") or []
        ]
    if api == "bedrock":
        config = body.get("toolConfig") or {}
        return [t["toolSpec"]["name"] for t in config.get("tools", []) if "toolSpec" in t]
    raise ValueError(api)


def _result(api: str, body: dict[str, Any]) -> tuple[str | None, str | None]:
    """The last tool result of the conversation and the id it names."""
    found: tuple[str | None, str | None] = (None, None)
    if api in ("openai", "ollama", "cohere"):
        for m in body.get("messages", []):
            if m.get("role") == "tool":
                found = (_text(m.get("content")), m.get("tool_call_id"))
    elif api == "openai-responses":
        items = body.get("input")
        for item in items if isinstance(items, list) else []:
            if item.get("type") == "function_call_output":
                found = (_text(item.get("output")), item.get("call_id"))
    elif api == "anthropic":
        for m in body.get("messages", []):
            blocks = m.get("content")
            for b in blocks if isinstance(blocks, list) else []:
                if b.get("type") == "tool_result":
                    found = (_text(b.get("content")), b.get("tool_use_id"))
    elif api == "gemini":
        for c in body.get("contents", []):
            for p in c.get("parts", []):
                response = p.get("functionResponse") or p.get("function_response")
                if response is not None:
                    found = (_text(response.get("response")), response.get("id"))
    elif api == "bedrock":
        for m in body.get("messages", []):
            for b in m.get("content", []):
                if "toolResult" in b:
                    result = b["toolResult"]
                    found = (_text(result.get("content")), result.get("toolUseId"))
    return found


# -- writing the answer -------------------------------------------------------------------


def _answer(
    model: str, call: tuple[str, str, dict[str, Any]] | None, text: str, thinking: str | None
) -> Any:
    """The answer as a normalized stream: laminate reads Chat Completions chunks written
    here, and its encoders write them in the backend's API."""
    head = {"id": "chatcmpl-agent", "object": "chat.completion.chunk", "model": model}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    chunks = [chunk({"role": "assistant", "content": ""})]
    if thinking:
        chunks.extend(chunk({"reasoning_content": w}) for w in re.findall(r"\S+\s*", thinking))
    if call is not None:
        name, ident, arguments = call
        encoded = json.dumps(arguments)
        cut = len(encoded) // 2
        function = {"name": name, "arguments": encoded[:cut]}
        first = {"index": 0, "id": ident, "type": "function", "function": function}
        rest = {"index": 0, "function": {"arguments": encoded[cut:]}}
        chunks.append(chunk({"tool_calls": [first]}))
        chunks.append(chunk({"tool_calls": [rest]}))
        chunks.append(chunk({}, "tool_calls"))
    else:
        chunks.extend(chunk({"content": word}) for word in re.findall(r"\S+\s*", text))
        chunks.append(chunk({}, "stop"))
    usage = {"prompt_tokens": 21, "completion_tokens": 9, "total_tokens": 30}
    chunks.append({**head, "choices": [], "usage": usage})
    data = b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks)
    normalizer = StreamNormalizer("openai")
    events = normalizer.feed(data + b"data: [DONE]\n\n") + normalizer.close()
    return events, normalizer.response


def _route(path: str) -> tuple[str, bool] | None:
    """The backend API an endpoint path belongs to, and whether it streams by default."""
    for name, record in APIS.items():
        if record.mock is None:
            continue
        for endpoint in record.mock.endpoints:
            pattern = re.escape(endpoint.path).replace(re.escape("{model}"), endpoint.model)
            if re.fullmatch(pattern, path):
                return name, endpoint.streams
    return None


def _model_in(path: str) -> str:
    found = re.search(r"/models?/([^/:]+)", path)
    return found.group(1) if found else ""


class AgentModel:
    """The ASGI app of the scripted model."""

    def __init__(self, script: Script, check: Check = validate) -> None:
        self.script = script
        self.check = check
        self.seen = Seen()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        raw = b""
        while True:
            message = await receive()
            raw += message.get("body", b"")
            if not message.get("more_body"):
                break
        route = _route(scope["path"])
        if route is None or scope["method"] != "POST":
            await _reply(send, 404, b'{"error": {"message": "no such endpoint"}}')
            return
        api, streams = route
        body = json.loads(raw)
        stream = body.get("stream")
        stream = streams if not isinstance(stream, bool) else stream
        if api == "gemini":
            stream = scope["path"].endswith(":streamGenerateContent")
            if stream and b"alt=sse" not in scope.get("query_string", b""):
                await self._refuse(send, Refused(api, ["streams only with alt=sse"]))
                return
        query = scope.get("query_string", b"").decode()
        try:
            self.check(api, body, scope["path"] + (f"?{query}" if query else ""))
        except Refused as exc:
            await self._refuse(send, exc)
            return
        except AssertionError as exc:
            await self._refuse(send, Refused(api, [str(exc)]))
            return
        model = str(body.get("model") or _model_in(scope["path"]))
        tools = _tools(api, body)
        result, result_id = _result(api, body)
        script = self.script
        call = None
        if result is not None:
            kind, text = "final", f"{script.marker} (the tool said: {result[:60].strip()})"
        elif script.tool in tools:
            kind, text = "call", ""
            call = (script.tool, script.call_id, script.arguments(raw.decode()))
        else:
            kind, text = "other", "Scripted title"
        self.seen.add(Turn(api, scope["path"], model, stream, tools, result, result_id, kind))
        events, response = _answer(model, call, text, script.thinking)
        if not stream:
            await _reply(send, 200, json.dumps(encode_response(response, api)).encode())
            return
        encoder = StreamEncoder(api)
        headers = [(k.encode(), v.encode()) for k, v in encoder.headers.items()]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        for event in events:
            piece = encoder.encode(event)
            if piece:
                await send({"type": "http.response.body", "body": piece, "more_body": True})
        await send({"type": "http.response.body", "body": encoder.close()})

    async def _refuse(self, send: Any, refused: Refused) -> None:
        with self.seen.lock:
            self.seen.refused.append(str(refused))
        status, headers, error = refusal(refused)
        await _reply(send, status, json.dumps(error).encode(), headers)


async def _reply(
    send: Any, status: int, body: bytes, extra: Mapping[str, str] | None = None
) -> None:
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    headers += [(k.encode(), v.encode()) for k, v in (extra or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


@contextmanager
def agent_model(script: Script, check: Check = validate) -> Iterator[tuple[str, AgentModel]]:
    """The scripted model on a free loopback port: ``(base URL, app)``."""
    app = AgentModel(script, check)
    server = make_server(app)
    sock = listen("127.0.0.1", 0)
    with serving(server, sock, "agent-model", "the scripted agent model"):
        yield base_url(sock), app
