"""Large, realistic provider streams for the benchmarks, generated (never recorded).

Each builder writes the exact wire shape of one provider (the fields its servers send
today, e.g. OpenAI's ``service_tier``, ``system_fingerprint`` and ``obfuscation``), with
deterministic pseudo-random content, and returns a :class:`BenchStream` that also carries
what a correct normalizer must find in it (the text and the tool arguments).

- ``text_stream(provider, body_bytes)``: one text answer in token-sized deltas whose body
  is about ``body_bytes`` long.
- ``tools_stream(provider, args_chars)``: a turn with three parallel tool calls carrying
  ``args_chars`` characters of arguments in all, in ~5-character fragments. OpenAI
  interleaves the calls by ``index``; Anthropic, the Responses API, Cohere (after its
  tool plan) and Bedrock send one block or item after the other; Ollama and Gemini send
  whole calls in one frame, so their streams open with a text preamble of as many deltas
  as the others have fragments, to stay comparable.

Framings: SSE (Gemini's with CRLF line ends, as Google's servers send it), JSON lines
(Ollama), and AWS binary event stream messages (Bedrock, written with laminate's own
``encode_message``; each payload padded with ``p`` as AWS pads it).
- ``whole_calls_stream(provider, args_chars)``: for Ollama and Gemini, a short text and
  three calls sent whole, ``args_chars`` characters of arguments in all (hundreds of KB
  a call): the arguments' objects are nearly all of the stream.
- ``text_stream_from_deltas(provider, deltas)``: a text answer with the given deltas (the
  same text cut into more, smaller frames must cost no more memory).
- ``network_chunks(body, size)``: the body cut as a socket would deliver it.
"""

from __future__ import annotations

import json
import random
import string
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from laminate._framing.eventstream import encode_message

__all__ = [
    "PROVIDERS",
    "WHOLE_CALLS",
    "BenchStream",
    "ToolCall",
    "fine_deltas",
    "network_chunks",
    "text_stream",
    "text_stream_from_deltas",
    "tools_stream",
    "whole_calls_stream",
]

PROVIDERS: Final = (
    "openai",
    "anthropic",
    "ollama",
    "openai-responses",
    "gemini",
    "cohere",
    "bedrock",
)
FRAGMENT: Final = 5  # mean tool-argument fragment length, in characters

_OPENAI_MODEL: Final = "gpt-4o-2024-08-06"
_ANTHROPIC_MODEL: Final = "claude-sonnet-4-20250514"
_OLLAMA_MODEL: Final = "llama3.2"
_GEMINI_MODEL: Final = "gemini-2.5-flash"

_WORD_LIST: Final = (
    "the of and to in is that for it as with was on be by this are from at or an have not "
    "which but can all their more one has been will there if would when so what about into "
    "stream parser buffer event token response request function value result server client "
    "protocol latency memory chunk frame delta message content model provider answer tool "
    "argument schema error retry timeout connection header payload encoding however therefore "
    "because although meanwhile example implementation performance configuration"
)
_WORDS: Final = tuple(_WORD_LIST.split())
_RARE: Final = (
    "café",
    "naïve",
    "Zürich",
    "straße",
    "日本語",
    "東京",
    "—",
    "\u2019s",
    "🚀",
    "✓",
    "€12",
    "Ωmega",
)
_PUNCT: Final = (
    ",",
    ".",
    ":",
    ";",
    "!",
    "?",
    ")",
    " (",
    '"',
    " `",
    "`",
    "**",
    "\n\n",
    "\n- ",
    "\n",
)
_CODE: Final = (
    "def handle(event):\n",
    "    if event.kind == 'delta':\n",
    "        buffer.append(event.text)\n",
    '    return "\\n".join(buffer)\n',
    "for i in range(10):\n",
    '    print(f"{i}: {value!r}")\n',
    "class Parser:\n",
    "    '''Incremental, never re-parses.'''\n",
    '\tpath = r"C:\\\\tmp\\\\out"\n',
    '# TODO: handle the "edge" case\n',
)


Framing = Literal["sse", "sse-crlf", "ndjson", "eventstream"]
"""How the body is cut into frames: SSE (LF or CRLF line ends), JSON lines, or AWS
binary event stream messages."""


@dataclass(frozen=True, slots=True)
class ToolCall:
    id: str
    name: str
    arguments: str  # the JSON text of the arguments, as the model writes it
    fragments: tuple[str, ...]  # ``arguments`` cut into ~5-character pieces


@dataclass(frozen=True, slots=True)
class BenchStream:
    name: str
    provider: str
    framing: Framing
    body: bytes
    frames: int
    text: str  # the text the answer must hold
    calls: tuple[ToolCall, ...]  # the tool calls it must hold


# -- content ----------------------------------------------------------------------------------


def fine_deltas(rng: random.Random, count: int) -> list[str]:
    """``count`` token-sized text deltas (about 4.5 characters each, some non-ASCII)."""
    out: list[str] = []
    while len(out) < count:
        roll = rng.random()
        if roll < 0.72:
            word = rng.choice(_WORDS)
            if len(word) > 7 and rng.random() < 0.5:  # a sub-word token pair
                cut = rng.randrange(3, len(word) - 2)
                out += [" " + word[:cut], word[cut:]]
                continue
            out.append((" " if rng.random() < 0.93 else "") + word)
        elif roll < 0.90:
            out.append(rng.choice(_PUNCT))
        elif roll < 0.96:
            out.append(" " + rng.choice(_RARE))
        else:
            out.append(str(rng.randrange(0, 10_000)))
    return out[:count]


def _tool_arguments(rng: random.Random, total_chars: int) -> list[tuple[str, str]]:
    """Three calls' (name, JSON arguments), ``total_chars`` characters in all."""
    each = max(total_chars // 3, 64)
    code: list[str] = []
    while sum(map(len, code)) < each - 40:
        code.append(rng.choice(_CODE))
    write_file = {"path": "src/app/handlers.py", "content": "".join(code), "overwrite": True}

    records: list[dict[str, Any]] = []
    rec_args = {"table": "customers", "records": records}
    while len(json.dumps(rec_args, ensure_ascii=False)) < each:
        n = len(records)
        records.append(
            {
                "id": 10_000 + n,
                "name": f"{rng.choice(_WORDS).title()} {rng.choice(_RARE)}",
                "email": f"user{n}@example.com",
                "score": round(rng.uniform(0, 100), 2),
                "active": rng.random() < 0.7,
                "tags": rng.sample(_WORDS, 3),
                "manager": None,
            }
        )

    sections: list[dict[str, str]] = []
    doc_args = {"title": "Release notes — Zürich 🚀", "language": "de", "sections": sections}
    while len(json.dumps(doc_args, ensure_ascii=False)) < each:
        body = "".join(fine_deltas(rng, 40)).strip()
        sections.append({"heading": rng.choice(_WORDS).title(), "body": body})

    return [
        ("write_file", json.dumps(write_file, ensure_ascii=False)),
        ("upsert_records", json.dumps(rec_args, ensure_ascii=False)),
        ("publish_document", json.dumps(doc_args, ensure_ascii=False)),
    ]


def _fragments(rng: random.Random, text: str) -> tuple[str, ...]:
    """Cut ``text`` anywhere (inside strings and escapes too) into 3..7-character pieces."""
    out: list[str] = []
    i = 0
    while i < len(text):
        step = rng.randint(FRAGMENT - 2, FRAGMENT + 2)
        out.append(text[i : i + step])
        i += step
    return tuple(out)


def _calls(rng: random.Random, args_chars: int, id_of: Callable[[int], str]) -> list[ToolCall]:
    return [
        ToolCall(id_of(k), name, args, _fragments(rng, args))
        for k, (name, args) in enumerate(_tool_arguments(rng, args_chars))
    ]


def _token(rng: random.Random, n: int, alphabet: str = string.ascii_letters + string.digits) -> str:
    return "".join(rng.choices(alphabet, k=n))


def _dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


# -- OpenAI Chat Completions ------------------------------------------------------------------


def _openai(rng: random.Random, deltas: Sequence[str], calls: Sequence[ToolCall]) -> list[bytes]:
    head = {
        "id": "chatcmpl-" + _token(rng, 29),
        "object": "chat.completion.chunk",
        "created": 1754688929,
        "model": _OPENAI_MODEL,
        "service_tier": "default",
        "system_fingerprint": "fp_" + _token(rng, 10, "0123456789abcdef"),
    }

    def frame(delta: dict[str, Any], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        # `obfuscation` pads every chunk to hide token lengths (2025 API).
        pad = _token(rng, rng.randint(1, 15))
        chunk = {**head, "choices": [choice], "usage": None, "obfuscation": pad}
        return b"data: " + _dumps(chunk).encode() + b"\n\n"

    frames = [frame({"role": "assistant", "content": "", "refusal": None})]
    frames += [frame({"content": d}) for d in deltas]
    for k, call in enumerate(calls):
        opener = {"index": k, "id": call.id, "type": "function"}
        opener["function"] = {"name": call.name, "arguments": ""}
        frames.append(frame({"tool_calls": [opener]}))
    # Parallel calls interleaved by index, one fragment per chunk.
    for step in range(max((len(c.fragments) for c in calls), default=0)):
        for k, call in enumerate(calls):
            if step < len(call.fragments):
                piece = {"index": k, "function": {"arguments": call.fragments[step]}}
                frames.append(frame({"tool_calls": [piece]}))
    frames.append(frame({}, "tool_calls" if calls else "stop"))
    usage = {
        "prompt_tokens": 1187,
        "completion_tokens": len(deltas) + sum(len(c.fragments) for c in calls),
        "total_tokens": 0,
        "prompt_tokens_details": {"cached_tokens": 1024, "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": 0,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }
    last = {**head, "choices": [], "usage": usage, "obfuscation": ""}
    frames.append(b"data: " + _dumps(last).encode() + b"\n\n")
    frames.append(b"data: [DONE]\n\n")
    return frames


# -- Anthropic Messages -----------------------------------------------------------------------


def _sse(event: str, payload: dict[str, Any]) -> bytes:
    return b"event: " + event.encode() + b"\ndata: " + _dumps(payload).encode() + b"\n\n"


def _anthropic(rng: random.Random, deltas: Sequence[str], calls: Sequence[ToolCall]) -> list[bytes]:
    usage = {
        "input_tokens": 1187,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 1024,
        "output_tokens": 1,
        "service_tier": "standard",
    }
    message: dict[str, Any] = {
        "id": "msg_01" + _token(rng, 22),
        "type": "message",
        "role": "assistant",
        "model": _ANTHROPIC_MODEL,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": usage,
    }
    frames = [_sse("message_start", {"type": "message_start", "message": message})]
    index = 0
    if deltas:
        start = {"type": "content_block_start", "index": 0}
        start["content_block"] = {"type": "text", "text": ""}
        frames += [_sse("content_block_start", start), _sse("ping", {"type": "ping"})]
        for d in deltas:
            payload = {"type": "content_block_delta", "index": 0}
            payload["delta"] = {"type": "text_delta", "text": d}
            frames.append(_sse("content_block_delta", payload))
        frames.append(_sse("content_block_stop", {"type": "content_block_stop", "index": 0}))
        index = 1
    for call in calls:
        block = {"type": "tool_use", "id": call.id, "name": call.name, "input": {}}
        block["caller"] = {"type": "direct"}
        start = {"type": "content_block_start", "index": index, "content_block": block}
        frames.append(_sse("content_block_start", start))
        for piece in ("", *call.fragments):  # the API opens with an empty fragment
            payload = {"type": "content_block_delta", "index": index}
            payload["delta"] = {"type": "input_json_delta", "partial_json": piece}
            frames.append(_sse("content_block_delta", payload))
        frames.append(_sse("content_block_stop", {"type": "content_block_stop", "index": index}))
        index += 1
    output = len(deltas) + sum(len(c.fragments) for c in calls)
    end = {
        "type": "message_delta",
        "delta": {"stop_reason": "tool_use" if calls else "end_turn", "stop_sequence": None},
        "usage": {"output_tokens": output},
    }
    frames += [_sse("message_delta", end), _sse("message_stop", {"type": "message_stop"})]
    return frames


# -- Ollama /api/chat -------------------------------------------------------------------------


def _ollama(rng: random.Random, deltas: Sequence[str], calls: Sequence[ToolCall]) -> list[bytes]:
    micros = rng.randrange(10**6)
    seconds = 0

    def stamp() -> str:
        nonlocal micros, seconds
        micros += rng.randrange(4000, 6000)
        seconds, micros = seconds + micros // 10**6, micros % 10**6
        return f"2025-08-20T13:{48 + seconds // 60 % 10:02d}:{seconds % 60:02d}.{micros:06d}Z"

    def line(message: dict[str, Any], **extra: Any) -> bytes:
        obj = {"model": _OLLAMA_MODEL, "created_at": stamp(), "message": message, "done": False}
        obj.update(extra)
        return _dumps(obj).encode() + b"\n"

    frames = [line({"role": "assistant", "content": d}) for d in deltas]
    if calls:
        whole = [
            {"function": {"name": c.name, "arguments": json.loads(c.arguments)}} for c in calls
        ]
        frames.append(line({"role": "assistant", "content": "", "tool_calls": whole}))
    frames.append(
        line(
            {"role": "assistant", "content": ""},
            done_reason="stop",
            done=True,
            total_duration=8_171_946_792,
            load_duration=38_473_250,
            prompt_eval_count=1187,
            prompt_eval_duration=27_608_250,
            eval_count=len(deltas) + len(calls),
            eval_duration=8_105_611_917,
        )
    )
    return frames


# -- OpenAI Responses -------------------------------------------------------------------------


def _responses(rng: random.Random, deltas: Sequence[str], calls: Sequence[ToolCall]) -> list[bytes]:
    suffix = _token(rng, 40, "0123456789abcdef")
    seq = 0
    frames: list[bytes] = []

    def emit(kind: str, **fields: Any) -> None:
        nonlocal seq
        frames.append(_sse(kind, {"type": kind, "sequence_number": seq, **fields}))
        seq += 1

    def response(status: str, output: list[Any], usage: Any) -> dict[str, Any]:
        return {
            "id": "resp_" + suffix,
            "object": "response",
            "created_at": 1757687078,
            "status": status,
            "background": False,
            "error": None,
            "incomplete_details": None,
            "instructions": None,
            "max_output_tokens": None,
            "model": _OPENAI_MODEL,
            "output": output,
            "parallel_tool_calls": True,
            "previous_response_id": None,
            "reasoning": {"effort": None, "summary": None},
            "store": True,
            "temperature": 1.0,
            "text": {"format": {"type": "text"}, "verbosity": "medium"},
            "tool_choice": "auto",
            "tools": [],
            "top_p": 1.0,
            "truncation": "disabled",
            "usage": usage,
            "user": None,
            "metadata": {},
        }

    emit("response.created", response=response("in_progress", [], None))
    emit("response.in_progress", response=response("in_progress", [], None))
    output: list[dict[str, Any]] = []
    if deltas:
        item_id = "msg_" + suffix
        text = "".join(deltas)
        item = {"id": item_id, "type": "message", "status": "in_progress", "content": []}
        item["role"] = "assistant"
        emit("response.output_item.added", output_index=0, item=item)
        part = {"type": "output_text", "annotations": [], "logprobs": [], "text": ""}
        where = {"item_id": item_id, "output_index": 0, "content_index": 0}
        emit("response.content_part.added", **where, part=part)
        for d in deltas:
            pad = _token(rng, rng.randint(2, 15))
            emit("response.output_text.delta", **where, delta=d, logprobs=[], obfuscation=pad)
        emit("response.output_text.done", **where, text=text, logprobs=[])
        emit("response.content_part.done", **where, part={**part, "text": text})
        done = {**item, "status": "completed", "content": [{**part, "text": text}]}
        emit("response.output_item.done", output_index=0, item=done)
        output.append(done)
    for call in calls:
        k = len(output)
        item = {
            "id": "fc_" + _token(rng, 40, "0123456789abcdef"),
            "type": "function_call",
            "status": "in_progress",
            "arguments": "",
            "call_id": call.id,
            "name": call.name,
        }
        emit("response.output_item.added", output_index=k, item=item)
        for piece in call.fragments:
            pad = _token(rng, rng.randint(2, 15))
            emit(
                "response.function_call_arguments.delta",
                item_id=item["id"],
                output_index=k,
                delta=piece,
                obfuscation=pad,
            )
        emit(
            "response.function_call_arguments.done",
            item_id=item["id"],
            output_index=k,
            arguments=call.arguments,
        )
        done = {**item, "status": "completed", "arguments": call.arguments}
        emit("response.output_item.done", output_index=k, item=done)
        output.append(done)
    usage = {
        "input_tokens": 1187,
        "input_tokens_details": {"cached_tokens": 1024},
        "output_tokens": len(deltas) + sum(len(c.fragments) for c in calls),
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 0,
    }
    emit("response.completed", response=response("completed", output, usage))
    return frames


# -- Gemini streamGenerateContent?alt=sse ------------------------------------------------------


def _gemini(rng: random.Random, deltas: Sequence[str], calls: Sequence[ToolCall]) -> list[bytes]:
    response_id = _token(rng, 23, string.ascii_letters + string.digits + "-_")
    produced = 0

    def chunk(parts: list[dict[str, Any]], finish: str | None = None) -> bytes:
        # Every chunk is a whole GenerateContentResponse with the usage so far; the wire
        # spells it with a space after each colon and lines end in CRLF.
        nonlocal produced
        produced += len(parts)
        candidate: dict[str, Any] = {"content": {"parts": parts, "role": "model"}}
        if finish is not None:
            candidate["finishReason"] = finish
        candidate["index"] = 0
        usage = {
            "promptTokenCount": 1187,
            "candidatesTokenCount": produced,
            "totalTokenCount": 1187 + produced,
            "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 1187}],
        }
        obj = {
            "candidates": [candidate],
            "usageMetadata": usage,
            "modelVersion": _GEMINI_MODEL,
            "responseId": response_id,
        }
        text = json.dumps(obj, ensure_ascii=False, separators=(",", ": "))
        return b"data: " + text.encode() + b"\r\n\r\n"

    if not calls:
        # The last text arrives with the finish reason.
        frames = [chunk([{"text": d}]) for d in deltas[:-1]]
        frames.append(chunk([{"text": deltas[-1] if deltas else ""}], "STOP"))
        return frames
    frames = [chunk([{"text": d}]) for d in deltas]
    # Parallel calls arrive whole, in one chunk; the first carries the thought signature.
    parts: list[dict[str, Any]] = []
    for k, call in enumerate(calls):
        part: dict[str, Any] = {"functionCall": {"name": call.name}}
        part["functionCall"]["args"] = json.loads(call.arguments)
        if k == 0:
            part["thoughtSignature"] = _token(rng, 300, string.ascii_letters + "+/")
        parts.append(part)
    frames.append(chunk(parts, "STOP"))
    return frames


# -- Cohere v2 chat -----------------------------------------------------------------------------


_PLAN: Final = ("I", " will", " call", " the", " three", " tools", " with", " their", " values.")


def _cohere(rng: random.Random, deltas: Sequence[str], calls: Sequence[ToolCall]) -> list[bytes]:
    hexes = "0123456789abcdef"
    message_id = "-".join(_token(rng, n, hexes) for n in (8, 4, 4, 4, 12))
    frames: list[bytes] = []

    def emit(kind: str, **fields: Any) -> None:
        frames.append(_sse(kind, {"type": kind, **fields}))

    def message(value: dict[str, Any]) -> dict[str, Any]:
        return {"message": value}

    start = {"role": "assistant", "content": [], "tool_plan": "", "tool_calls": [], "citations": []}
    first = {"id": message_id, "type": "message-start", "delta": message(start)}
    frames.append(_sse("message-start", first))
    if deltas:
        content = {"type": "text", "text": ""}
        emit("content-start", index=0, delta=message({"content": content}))
        for d in deltas:
            emit("content-delta", index=0, delta=message({"content": {"text": d}}))
        emit("content-end", index=0)
    if calls:
        # The model states its plan, then streams each call after the other.
        for word in _PLAN:
            emit("tool-plan-delta", delta=message({"tool_plan": word}))
    for k, call in enumerate(calls):
        function = {"name": call.name, "arguments": ""}
        opener = {"id": call.id, "type": "function", "function": function}
        emit("tool-call-start", index=k, delta=message({"tool_calls": opener}))
        for piece in call.fragments:
            fragment = {"function": {"arguments": piece}}
            emit("tool-call-delta", index=k, delta=message({"tool_calls": fragment}))
        emit("tool-call-end", index=k)
    output = len(deltas) + sum(len(c.fragments) for c in calls)
    usage = {
        "billed_units": {"input_tokens": 187, "output_tokens": output},
        "tokens": {"input_tokens": 1187, "output_tokens": output + 3},
    }
    finish = "TOOL_CALL" if calls else "COMPLETE"
    emit("message-end", delta={"finish_reason": finish, "usage": usage})
    frames.append(b"data: [DONE]\n\n")
    return frames


# -- Bedrock ConverseStream -------------------------------------------------------------------

_PADDING: Final = string.ascii_lowercase + string.ascii_uppercase + string.digits


def _bedrock(rng: random.Random, deltas: Sequence[str], calls: Sequence[ToolCall]) -> list[bytes]:
    frames: list[bytes] = []

    def emit(event: str, payload: dict[str, Any]) -> None:
        # Every payload carries `p`: a prefix of the alphabet of random length, against
        # traffic analysis by message size.
        payload["p"] = _PADDING[: rng.randint(1, len(_PADDING))]
        headers = {":event-type": event, ":content-type": "application/json"}
        headers[":message-type"] = "event"
        frames.append(encode_message(headers, _dumps(payload).encode()))

    emit("messageStart", {"role": "assistant"})
    index = 0
    if deltas:
        for d in deltas:
            emit("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": d}})
        emit("contentBlockStop", {"contentBlockIndex": 0})
        index = 1
    for call in calls:
        start = {"toolUse": {"toolUseId": call.id, "name": call.name}}
        emit("contentBlockStart", {"contentBlockIndex": index, "start": start})
        for piece in call.fragments:
            delta = {"toolUse": {"input": piece}}
            emit("contentBlockDelta", {"contentBlockIndex": index, "delta": delta})
        emit("contentBlockStop", {"contentBlockIndex": index})
        index += 1
    emit("messageStop", {"stopReason": "tool_use" if calls else "end_turn"})
    output = len(deltas) + sum(len(c.fragments) for c in calls)
    usage = {"inputTokens": 1187, "outputTokens": output, "totalTokens": 1187 + output}
    emit("metadata", {"usage": usage, "metrics": {"latencyMs": 8105}})
    return frames


# -- assembly ---------------------------------------------------------------------------------

_Builder = Callable[[random.Random, Sequence[str], Sequence[ToolCall]], list[bytes]]

_BUILDERS: Final[dict[str, tuple[_Builder, Framing]]] = {
    "openai": (_openai, "sse"),
    "anthropic": (_anthropic, "sse"),
    "ollama": (_ollama, "ndjson"),
    "openai-responses": (_responses, "sse"),
    "gemini": (_gemini, "sse-crlf"),
    "cohere": (_cohere, "sse"),
    "bedrock": (_bedrock, "eventstream"),
}

_TOOL_NAMES: Final = ("write_file", "upsert_records", "publish_document")

_CALL_IDS: Final[dict[str, Callable[[random.Random, int], str]]] = {
    "openai": lambda rng, k: "call_" + _token(rng, 24),
    "anthropic": lambda rng, k: "toolu_01" + _token(rng, 22),
    "ollama": lambda rng, k: "",  # Ollama sends none; laminate generates them
    "openai-responses": lambda rng, k: "call_" + _token(rng, 24),
    "gemini": lambda rng, k: "",  # the Gemini API sends none; laminate generates them
    "cohere": lambda rng, k: f"{_TOOL_NAMES[k]}_" + _token(rng, 12).lower(),
    "bedrock": lambda rng, k: "tooluse_" + _token(rng, 22, string.ascii_letters + "-_"),
}


WHOLE_CALLS: Final = frozenset({"ollama", "gemini"})
"""The providers that send each tool call whole, its arguments a JSON object."""


def _stream(
    name: str, provider: str, rng: random.Random, deltas: Sequence[str], calls: list[ToolCall]
) -> BenchStream:
    builder, framing = _BUILDERS[provider]
    frames = builder(rng, deltas, calls)
    text = "".join(deltas)
    return BenchStream(name, provider, framing, b"".join(frames), len(frames), text, tuple(calls))


def text_stream_from_deltas(provider: str, deltas: Sequence[str], *, seed: int = 1) -> BenchStream:
    """A text answer made of exactly these deltas."""
    return _stream(f"{provider} text", provider, random.Random(seed), deltas, [])


def text_stream(provider: str, body_bytes: int, *, seed: int = 1) -> BenchStream:
    """A text answer in token-sized deltas whose body is about ``body_bytes`` long."""
    builder, _ = _BUILDERS[provider]
    # Measure the cost of one more delta on this provider's wire, then size the answer.
    sample = fine_deltas(random.Random(seed), 2000)
    small = sum(map(len, builder(random.Random(seed), sample[:1000], [])))
    large = sum(map(len, builder(random.Random(seed), sample, [])))
    per_delta = (large - small) / 1000
    count = max(int((body_bytes - (small - 1000 * per_delta)) / per_delta), 10)
    rng = random.Random(seed)
    return _stream(f"{provider} text", provider, rng, fine_deltas(rng, count), [])


def tools_stream(provider: str, args_chars: int, *, seed: int = 2) -> BenchStream:
    """Three parallel tool calls carrying ``args_chars`` characters of arguments in all."""
    rng = random.Random(seed)
    calls = _calls(rng, args_chars, lambda k: _CALL_IDS[provider](rng, k))
    deltas: list[str] = []
    if provider in WHOLE_CALLS:
        # Whole calls in one frame: a preamble as long, in frames, as the others' fragments.
        deltas = fine_deltas(rng, sum(len(c.fragments) for c in calls))
    return _stream(f"{provider} 3 tool calls", provider, rng, deltas, calls)


def whole_calls_stream(provider: str, args_chars: int, *, seed: int = 3) -> BenchStream:
    """Three tool calls sent whole (a provider of :data:`WHOLE_CALLS`) carrying
    ``args_chars`` characters of arguments in all, after a short text: a stream whose
    cost is the arguments' objects."""
    rng = random.Random(seed)
    calls = _calls(rng, args_chars, lambda k: _CALL_IDS[provider](rng, k))
    return _stream(f"{provider} 3 whole calls", provider, rng, fine_deltas(rng, 20), calls)


def network_chunks(body: bytes, size: int) -> list[bytes]:
    """The body cut into ``size``-byte reads, as a socket delivers it (frames straddle)."""
    return [body[i : i + size] for i in range(0, len(body), size)]
