"""A scripted backend for the proxy's tests: one loopback server that answers as every API.

Each request is read in its own API's shape (a small reader per API below, written for
these tests), and answered by a script that plays a tool loop:

- when the conversation holds a tool result, the answer is the text
  ``"The tool said: <the result's text>"``;
- else, when the request offers tools, the answer calls the first one with
  ``{"city": <the user's first text>}`` and the id ``call_<hash of that text>``;
- else, the answer is ``"echo: <the user's first text>"``.

A tool result must name the id the backend gave its call, or the id of a call the same
request's assistant turn makes (as the real APIs check: a client whose API has no ids,
Ollama's, cannot send the backend's back), or the answer is a 400: so a proxy that loses
or mismatches ids fails the loop.

The answer is written with laminate's own encoders in the API asked: a stream (chunk by
chunk, ``pace`` seconds apart) or a complete body, as the request asks. Models whose name
starts with ``fail-`` script a failure: ``fail-429`` (that status, with ``retry-after:
7``), ``fail-mid`` (the API's in-stream error after the first text), ``fail-garbage`` (a
200 whose body is not the API's), ``fail-stall`` (one chunk, then nothing until the client
leaves), ``fail-slow`` (nothing at all for a while), ``fail-overflow`` (the API's own "the prompt
does not fit the context" error, as its servers word it, :data:`OVERFLOWS`; for the Chat
Completions API also ``fail-overflow-vllm`` and ``fail-overflow-llamacpp``, the words of
those servers), ``fail-overflow-mid`` (that error in the stream, after the first text),
``fail-cut`` (the connection cut after the first text, without the end of the body) and
``fail-junk`` (bytes that are not the API's framing after the first text). The model
``bulk`` gets its stream in one write (a reader then gets it in reads as large as its
buffer). A model ``late-<status>`` is answered with that status after 0.3 s (before
which nothing is sent). A streamed answer for a model ``pause-S`` (``pause-0.3``) begins
at once (its status and headers), then thinks: ``S`` seconds before its first event and
again after its second. Every request and every disconnect is recorded
(:class:`Record`).

Each request is judged as the real API judges it (``request_validators.validate``: the
API's own types and what its servers refuse beyond them; a counting request by the
servers' rules only): a request it refuses is answered as that API's servers answer it
(``request_validators.refusal``), before any script, and recorded
(:attr:`Record.refused`), so that a test can say no request was refused, and why one was.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from laminate import ProviderError, StreamEncoder, StreamNormalizer, encode_response
from laminate._apis.registry import APIS
from laminate._cli.server import base_url, listen, make_server, serving

from .request_validators import Refused, refusal, validate

PROVIDERS = tuple(APIS)


@dataclass
class Record:
    """What the backend saw."""

    requests: list[tuple[str, str, dict[str, Any], dict[str, str]]] = field(default_factory=list)
    """``(api, path, body, headers)`` for each request."""
    disconnects: list[str] = field(default_factory=list)
    """The model of each request whose client left before the answer ended."""
    finished: list[str] = field(default_factory=list)
    """The model of each request whose answer was sent whole."""
    peers: list[tuple[str, int]] = field(default_factory=list)
    """The address each request came from (its connection's)."""
    refused: list[str] = field(default_factory=list)
    """Why each refused request was refused (the validator's words, with the path)."""
    lock: threading.Lock = field(default_factory=threading.Lock)


# -- reading requests -------------------------------------------------------------------


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(_text_of(part) for part in content)
    if isinstance(content, dict):
        for key in ("text", "output", "result", "content", "json"):
            if key in content:
                value = content[key]
                return value if isinstance(value, str) else _text_of(value)
        return json.dumps(content)
    return ""


@dataclass
class Asked:
    """What a request asks, whatever its API."""

    user: str = ""
    tools: list[str] = field(default_factory=list)
    result: str | None = None
    result_id: str | None = None
    call_ids: set[str] = field(default_factory=set)


def _read(api: str, body: dict[str, Any]) -> Asked:
    asked = Asked()
    if api in ("openai", "ollama", "cohere"):
        asked.tools = [t["function"]["name"] for t in body.get("tools") or []]
        for m in body.get("messages", []):
            if m.get("role") == "user" and not asked.user:
                asked.user = _text_of(m.get("content"))
            asked.call_ids.update(c.get("id") or "" for c in m.get("tool_calls") or [])
            if m.get("role") == "tool":
                asked.result = _text_of(m.get("content"))
                asked.result_id = m.get("tool_call_id")
    elif api == "openai-responses":
        asked.tools = [t["name"] for t in body.get("tools") or [] if t.get("type") == "function"]
        items = body.get("input")
        if isinstance(items, str):
            asked.user = items
            items = []
        for item in items or []:
            if item.get("role") == "user" and not asked.user:
                asked.user = _text_of(item.get("content"))
            if item.get("type") == "function_call":
                asked.call_ids.add(item.get("call_id") or "")
            if item.get("type") == "function_call_output":
                asked.result = _text_of(item.get("output"))
                asked.result_id = item.get("call_id")
    elif api == "anthropic":
        asked.tools = [t["name"] for t in body.get("tools") or []]
        for m in body.get("messages", []):
            blocks = m.get("content")
            if isinstance(blocks, str):
                blocks = [{"type": "text", "text": blocks}]
            for b in blocks:
                if m["role"] == "user" and b.get("type") == "text" and not asked.user:
                    asked.user = b["text"]
                if b.get("type") == "tool_use":
                    asked.call_ids.add(b.get("id") or "")
                if b.get("type") == "tool_result":
                    asked.result = _text_of(b.get("content"))
                    asked.result_id = b.get("tool_use_id")
    elif api == "gemini":
        for tool in body.get("tools") or []:
            for d in tool.get("functionDeclarations") or tool.get("function_declarations") or []:
                asked.tools.append(d["name"])
        for c in body.get("contents", []):
            for p in c.get("parts", []):
                if c.get("role", "user") == "user" and "text" in p and not asked.user:
                    asked.user = p["text"]
                response = p.get("functionResponse") or p.get("function_response")
                if response is not None:
                    asked.result = _text_of(response.get("response"))
    elif api == "bedrock":
        config = body.get("toolConfig") or {}
        asked.tools = [t["toolSpec"]["name"] for t in config.get("tools", [])]
        for m in body.get("messages", []):
            for b in m.get("content", []):
                if m["role"] == "user" and "text" in b and not asked.user:
                    asked.user = b["text"]
                if "toolUse" in b:
                    asked.call_ids.add(b["toolUse"].get("toolUseId") or "")
                if "toolResult" in b:
                    asked.result = _text_of(b["toolResult"].get("content"))
                    asked.result_id = b["toolResult"].get("toolUseId")
    return asked


# -- writing answers ----------------------------------------------------------------------


def call_id(text: str) -> str:
    return "call_" + hashlib.sha256(text.encode()).hexdigest()[:12]


def _chunks(pieces: list[dict[str, Any]]) -> bytes:
    return b"".join(b"data: " + json.dumps(p).encode() + b"\n\n" for p in pieces) + (
        b"data: [DONE]\n\n"
    )


def answer_events(model: str, asked: Asked) -> tuple[list[Any], Any]:
    """The script's answer as laminate events and the final response (built by reading
    Chat Completions chunks written here)."""
    head: dict[str, Any] = {"id": "resp_1", "object": "chat.completion.chunk", "model": model}
    usage = {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}
    if asked.result is None and asked.tools:
        arguments = json.dumps({"city": asked.user})
        half = len(arguments) // 2
        call = {"index": 0, "id": call_id(asked.user), "type": "function"}
        pieces = [
            {**head, "choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [
                {**call, "function": {"name": asked.tools[0], "arguments": arguments[:half]}}
            ]}}]},
            {**head, "choices": [{"index": 0, "delta": {"tool_calls": [
                {"index": 0, "function": {"arguments": arguments[half:]}}
            ]}}]},
            {**head, "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
        ]  # fmt: skip
    else:
        text = (
            f"The tool said: {asked.result}" if asked.result is not None else f"echo: {asked.user}"
        )
        words = re.findall(r"\S+\s*", text) or [text]
        pieces = [
            {**head, "choices": [{"index": 0, "delta": {"role": "assistant", "content": w}}]}
            for w in words
        ]
        pieces.append({**head, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    pieces.append({**head, "choices": [], "usage": usage})
    normalizer = StreamNormalizer("openai")
    events = normalizer.feed(_chunks(pieces)) + normalizer.close()
    return events, normalizer.response


def _api_of(path: str) -> tuple[str, bool | None] | None:
    for name, record in APIS.items():
        if record.http is None:
            continue
        for endpoint in record.http.endpoints:
            if endpoint.envelope is not None:  # a cloud's endpoint: the proxy's to unwrap
                continue
            pattern = re.escape(endpoint.path).replace(re.escape("{model}"), "(?P<model>.+)")
            if re.fullmatch(pattern, path):
                return name, endpoint.streams
    return None


_COUNTING = (
    ("anthropic", r"/v1/messages/count_tokens"),
    ("gemini", r"/v1(?:beta)?/models/(?P<model>[^/:]+):countTokens"),
    ("openai-responses", r"/v1/responses/input_tokens"),
    ("bedrock", r"/model/(?P<model>[^/]+)/count-tokens"),
)
# What each counting endpoint takes, as the real ones check it.
_RESPONSES_COUNT_FIELDS = {
    "model", "input", "instructions", "tools", "tool_choice", "parallel_tool_calls",
    "reasoning", "text", "truncation", "conversation", "previous_response_id",
}  # fmt: skip
_CONVERSE_COUNT_FIELDS = {"messages", "system", "toolConfig", "additionalModelRequestFields"}


def _count_api(path: str) -> tuple[str, str | None] | None:
    """``(api, the model the path names)`` for a counting endpoint's path."""
    for api, pattern in _COUNTING:
        found = re.fullmatch(pattern, path)
        if found is not None:
            model = found.groupdict().get("model")
            return api, unquote(model) if model else None
    return None


def _counted_request(api: str, data: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The chat request a counting request holds, or what is wrong with it."""
    if api == "gemini":
        request = data.get("generateContentRequest")
        if not isinstance(request, dict) or "contents" in data:
            return {}, "send contents or a generateContentRequest, not both"
        if not str(request.get("model", "")).startswith("models/"):
            return {}, "generateContentRequest.model must be models/{model}"
        return request, ""
    if api == "bedrock":
        converse = (data.get("input") or {}).get("converse")
        if not isinstance(converse, dict) or set(converse) - _CONVERSE_COUNT_FIELDS:
            return {}, "input.converse takes messages, system, toolConfig and model fields"
        return converse, ""
    if api == "openai-responses" and set(data) - _RESPONSES_COUNT_FIELDS:
        return {}, f"unknown parameters: {sorted(set(data) - _RESPONSES_COUNT_FIELDS)}"
    if api == "anthropic" and "max_tokens" in data:
        return {}, "max_tokens: extra inputs are not permitted"
    return data, ""


def _model_in(path: str) -> str | None:
    found = re.search(r"/models?/([^/:]+)", path)
    return found.group(1) if found else None


# How each API's servers answer a request that does not fit the model's context:
# (status, body, headers), in their own words (what a translating proxy must recognise).
OVERFLOWS: dict[str, tuple[int, dict[str, Any], dict[str, str]]] = {
    "openai": (
        400,
        {
            "error": {
                "message": "This model's maximum context length is 8192 tokens. However, "
                "your messages resulted in 9120 tokens. Please reduce the length of the "
                "messages.",
                "type": "invalid_request_error",
                "param": "messages",
                "code": "context_length_exceeded",
            }
        },
        {},
    ),
    "openai-responses": (
        400,
        {
            "error": {
                "message": "Your input exceeds the context window of this model. Please "
                "adjust your input and try again.",
                "type": "invalid_request_error",
                "param": "input",
                "code": "context_length_exceeded",
            }
        },
        {},
    ),
    "anthropic": (
        400,
        {
            "type": "error",
            "error": {
                "type": "invalid_request_error",
                "message": "prompt is too long: 208113 tokens > 200000 maximum",
            },
        },
        {},
    ),
    "gemini": (
        400,
        {
            "error": {
                "code": 400,
                "message": "The input token count (1104000) exceeds the maximum number of "
                "tokens allowed (1048576).",
                "status": "INVALID_ARGUMENT",
            }
        },
        {},
    ),
    "bedrock": (
        400,
        {"message": "Input is too long for requested model."},
        {"x-amzn-errortype": "ValidationException:http://internal.amazon.com/coral/"},
    ),
    "ollama": (400, {"error": "the input length exceeds the context length"}, {}),
    "cohere": (
        400,
        {
            "id": "5e1a3c7d-0000-4000-8000-000000000001",
            "message": "too many tokens: size limit exceeded by 1311 tokens. Try using "
            "shorter or fewer inputs.",
        },
        {},
    ),
    # Chat Completions servers other than OpenAI's.
    "openai/vllm": (
        400,
        {
            "object": "error",
            "message": "This model's maximum context length is 32768 tokens. However, you "
            "requested 40960 tokens in the messages. Please reduce the length of the "
            "messages.",
            "type": "BadRequestError",
            "param": None,
            "code": 400,
        },
        {},
    ),
    "openai/llamacpp": (
        400,
        {
            "error": {
                "code": 400,
                "message": "the request exceeds the available context size, try increasing it",
                "type": "exceed_context_size_error",
                "n_prompt_tokens": 9000,
                "n_ctx": 8192,
            }
        },
        {},
    ),
}


def overflow_error(api: str) -> ProviderError:
    """The overflow of ``api``'s servers as the error in a stream would carry it."""
    _, body, _ = OVERFLOWS[api]
    inner = body.get("error", body)
    message = inner if isinstance(inner, str) else str(inner.get("message"))
    kind = inner.get("type") or inner.get("status") if isinstance(inner, dict) else None
    return ProviderError(message, error_type=str(kind or "ValidationException"), retryable=False)


# Bytes that no reader of the framing takes, after a first frame.
_JUNK: dict[str, bytes] = {
    "sse": b'data: {"unterminated\n\n',
    "ndjson": b'{"unterminated\n',
    "eventstream": b"\x00\x00\x00\x20\x00\x00\x00\x00" + b"\xff" * 24,
}


class ScriptedBackend:
    """The ASGI app."""

    def __init__(self, pace: float = 0.0) -> None:
        self.pace = pace
        self.record = Record()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        path = scope["path"]
        counting = _count_api(path)
        if counting is not None:
            await self._count(*counting, json.loads(body), scope, send)
            return
        found = _api_of(path)
        if found is None:
            await _reply(send, 404, "application/json", b'{"error": "no such endpoint"}')
            return
        api, streams_by_default = found
        data = json.loads(body)
        headers = {k.decode(): v.decode() for k, v in scope["headers"]}
        model = data.get("model") or _model_in(path) or ""
        with self.record.lock:
            self.record.requests.append((api, path, data, headers))
            self.record.peers.append(tuple(scope.get("client") or ("", 0)))
        query = scope.get("query_string", b"").decode()
        try:
            validate(api, data, path + (f"?{query}" if query else ""))
        except Refused as refused:
            await self._refuse(send, path, refused)
            return
        stream = data.get("stream")
        stream = streams_by_default if not isinstance(stream, bool) else stream
        # Gemini streams SSE when asked with `alt=sse`, else one JSON array.
        array = api == "gemini" and b"alt=sse" not in scope.get("query_string", b"").split(b"&")
        await self._answer(
            api, model, data, stream=bool(stream), array=array, send=send, receive=receive
        )

    async def _refuse(self, send: Any, path: str, refused: Refused) -> None:
        with self.record.lock:
            self.record.refused.append(f"{path}: {refused}")
        status, headers, body = refusal(refused)
        extra = [(k.encode(), v.encode()) for k, v in headers.items()]
        await _reply(send, status, "application/json", json.dumps(body).encode(), extra)

    async def _count(
        self, api: str, path_model: str | None, data: dict[str, Any], scope: Any, send: Any
    ) -> None:
        """A counting endpoint's answer: ``1000 + len(user text) + 10 * tools``, read from
        the request in that endpoint's shape (a 400 for a shape it does not take)."""
        headers = {k.decode(): v.decode() for k, v in scope["headers"]}
        with self.record.lock:
            self.record.requests.append((api, scope["path"], data, headers))
        model = path_model or str(data.get("model") or "")
        http = APIS[api].http
        assert http is not None
        if model.startswith("fail-") and model[5:].isdigit():
            status = int(model[5:])
            body = json.dumps(http.error_body(status, http.error_kind(status), "scripted"))
            await _reply(send, status, "application/json", body.encode())
            return
        if model == "fail-garbage":
            await _reply(send, 200, "application/json", b"<html>not a count</html>")
            return
        request, problem = _counted_request(api, data)
        if problem:
            body = json.dumps(http.error_body(400, http.error_kind(400), problem))
            await _reply(send, 400, "application/json", body.encode())
            return
        try:
            validate(api, request, None, schema=False)
        except Refused as refused:
            await self._refuse(send, scope["path"], refused)
            return
        asked = _read(api, request)
        count = 1000 + len(asked.user) + 10 * len(asked.tools)
        answers: dict[str, dict[str, Any]] = {
            "anthropic": {"input_tokens": count},
            "gemini": {"totalTokens": count},
            "openai-responses": {"object": "response.input_tokens", "input_tokens": count},
            "bedrock": {"inputTokens": count},
        }
        await _reply(send, 200, "application/json", json.dumps(answers[api]).encode())

    async def _answer(
        self,
        api: str,
        model: str,
        data: dict[str, Any],
        *,
        stream: bool,
        array: bool = False,
        send: Any,
        receive: Any,
    ) -> None:
        record = APIS[api]
        http = record.http
        assert http is not None
        late = model.startswith("late-") and model[5:].isdigit()
        if late:
            await asyncio.sleep(0.3)
        if late or (model.startswith("fail-") and model[5:].isdigit()):
            status = int(model[5:])
            kind = http.error_kind(status)
            extra = [(b"retry-after", b"7")]
            if record.error_type_header:
                extra.append((record.error_type_header.encode(), kind.encode()))
            body = json.dumps(http.error_body(status, kind, f"scripted {status}")).encode()
            await _reply(send, status, "application/json", body, extra)
            return
        if model == "fail-garbage":
            await _reply(send, 200, "application/json", b"<html>not an answer</html>")
            return
        if model.startswith("fail-overflow") and model != "fail-overflow-mid":
            server = model.removeprefix("fail-overflow").removeprefix("-")
            status, said, headers = OVERFLOWS[f"{api}/{server}" if server else api]
            extra = [(k.encode(), v.encode()) for k, v in headers.items()]
            await _reply(send, status, "application/json", json.dumps(said).encode(), extra)
            return
        if model == "fail-slow":
            await asyncio.sleep(5)
        asked = _read(api, data)
        known = {call_id(asked.user), *asked.call_ids}
        if asked.result_id is not None and asked.result_id not in known:
            status = 400
            body = json.dumps(
                http.error_body(status, http.error_kind(status), "tool result for an unknown id")
            ).encode()
            await _reply(send, status, "application/json", body)
            return
        events, response = answer_events(model, asked)
        if not stream:
            body = json.dumps(encode_response(response, api)).encode()
            await _reply(send, 200, "application/json", body)
            with self.record.lock:
                self.record.finished.append(model)
            return
        encoder: Any = _ArrayEncoder(api) if array else StreamEncoder(api)
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", encoder.media_type.encode())],
            }
        )
        left = asyncio.Event()

        async def watch() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass
            left.set()

        if model == "bulk":
            whole = b"".join([encoder.encode(event) for event in events]) + encoder.close()
            await send({"type": "http.response.body", "body": whole})
            with self.record.lock:
                self.record.finished.append(model)
            return
        watcher = asyncio.ensure_future(watch())
        pause = float(model[6:]) if model.startswith("pause-") else 0.0
        try:
            for n, event in enumerate(events):
                if pause and n in (0, 2):
                    await asyncio.sleep(pause)
                if model == "fail-mid" and n == 3:
                    error = ProviderError(
                        "scripted overload", error_type="overloaded_error", retryable=True
                    )
                    await send(
                        {
                            "type": "http.response.body",
                            "body": encoder.error(error),
                            "more_body": True,
                        }
                    )
                    break
                if model == "fail-overflow-mid" and n == 3:
                    body = encoder.error(overflow_error(api))
                    await send({"type": "http.response.body", "body": body, "more_body": True})
                    break
                if model == "fail-cut" and n == 3:
                    # Raised inside the answer: the server drops the connection at once,
                    # without the end of its chunked body.
                    raise RuntimeError("the scripted connection is cut")
                if model == "fail-junk" and n == 3:
                    junk = _JUNK[record.framing]
                    await send({"type": "http.response.body", "body": junk, "more_body": True})
                    await send({"type": "http.response.body", "body": b""})
                    watcher.cancel()
                    return
                if model == "fail-stall" and n == 2:
                    await left.wait()
                    break
                chunk = encoder.encode(event)
                if chunk:
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
                    if self.pace:
                        await asyncio.sleep(self.pace)
                if left.is_set():
                    break
            else:
                tail = encoder.close()
                await send({"type": "http.response.body", "body": tail, "more_body": True})
        except OSError:
            left.set()
        if left.is_set():
            with self.record.lock:
                self.record.disconnects.append(model)
            watcher.cancel()
            return
        await send({"type": "http.response.body", "body": b""})
        with self.record.lock:
            self.record.finished.append(model)
        watcher.cancel()


class _ArrayEncoder:
    """A stream as one JSON array, element by element (Gemini without ``alt=sse``)."""

    media_type = "application/json; charset=UTF-8"

    def __init__(self, api: str) -> None:
        self._sse = StreamEncoder(api)
        self._count = 0

    def _elements(self, sse: bytes) -> bytes:
        out = b""
        for frame in sse.split(b"\r\n\r\n"):
            if frame.startswith(b"data: "):
                out += (b",\r\n" if self._count else b"[") + frame[6:]
                self._count += 1
        return out

    def encode(self, event: Any) -> bytes:
        return self._elements(self._sse.encode(event))

    def error(self, error: Any) -> bytes:
        return self._elements(self._sse.error(error)) + b"]"

    def close(self) -> bytes:
        return self._elements(self._sse.close()) + (b"]" if self._count else b"[]")


async def _reply(
    send: Any, status: int, kind: str, body: bytes, extra: list[tuple[bytes, bytes]] | None = None
) -> None:
    headers = [(b"content-type", kind.encode()), (b"content-length", str(len(body)).encode())]
    await send(
        {"type": "http.response.start", "status": status, "headers": headers + (extra or [])}
    )
    await send({"type": "http.response.body", "body": body})


@contextmanager
def scripted_backend(pace: float = 0.0) -> Iterator[tuple[str, ScriptedBackend]]:
    """The scripted backend on a free loopback port: ``(base URL, app)``."""
    backend = ScriptedBackend(pace)
    server = make_server(backend)
    sock = listen("127.0.0.1", 0)
    with serving(server, sock, "scripted-backend", "the scripted backend"):
        yield base_url(sock), backend
