"""Read any API's request, write it for any other: the public functions.

``read_request`` and ``write_request`` look the API up in the registry and call its
reader or writer (``_apis/<name>/request.py``); ``translate_request`` does both. What
they add around the per-API code, once for every API:

* Bodies are taken as a ``dict`` (or its JSON text); anything else is a ``TypeError``.
* Tool names and call ids the target refuses (its ``tool_name_rule`` and
  ``call_id_rule``: over 64 characters, characters outside its set) are renamed before
  the writer sees them, the same way every time (a readable prefix and a short hash of
  the original, so two names never meet), and :meth:`Translation.restore` maps them back
  in every event and in the final response, so the client sees its own names and ids.
* ``strict=True`` raises :class:`TranslationError` when anything would be lost, before a
  body is handed out.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, get_args

from .._core.errors import TranslationError
from .._core.events import BlockEnd, BlockStart, Event, ResponseDone
from .._core.request import Block, Loss, Message, Request, ToolResult
from .._core.response import ContentBlock, InvalidToolUse, NormalizedResponse, ToolUse
from .registry import api
from .spec import Api, MaxTokensField, WriteOptions

__all__ = ["Translation", "WrittenRequest", "read_request", "translate_request", "write_request"]

_HASH_LENGTH: Final = 8
_LIMIT: Final = 64


@dataclass(frozen=True, slots=True)
class WrittenRequest:
    """A request written for one API: the ``body`` to send, the ``path`` (and query) to
    send it to, and what it could not carry (``losses``).

    ``names`` and ``ids`` map each renamed tool name and call id, as written, to the
    original; :meth:`restore` and :meth:`restore_response` apply them to the answer."""

    body: dict[str, Any]
    path: str
    losses: list[Loss]
    names: Mapping[str, str] = field(default_factory=dict)
    ids: Mapping[str, str] = field(default_factory=dict)

    def restore(self, event: Event) -> Event:
        """``event`` with the original tool names and call ids (the same object when
        nothing in it was renamed)."""
        return _restore_event(event, self.names, self.ids)

    def restore_response(self, response: NormalizedResponse) -> NormalizedResponse:
        """``response`` with the original tool names and call ids."""
        return _restore_response(response, self.names, self.ids)


@dataclass(frozen=True, slots=True)
class Translation(WrittenRequest):
    """A request read in one API and written for another: :class:`WrittenRequest`'s
    fields, and the neutral ``request`` in between."""

    request: Request | None = None


def _body(body: object) -> Mapping[str, Any]:
    if isinstance(body, bytes | bytearray | str):
        try:
            body = json.loads(body)
        except ValueError as exc:
            raise TranslationError(f"the body is not JSON: {exc}", reason="invalid") from exc
        if not isinstance(body, dict):
            raise TranslationError("the body is not a JSON object", reason="invalid")
    if not isinstance(body, Mapping):
        raise TypeError(
            "a request body must be a dict (the parsed JSON) or its JSON text as str or "
            f"bytes, not {type(body).__name__}"
        )
    return body


def _record(name: str, hook: str) -> Api:
    if not isinstance(name, str):
        raise TypeError(f"an API must be named by a str, not {type(name).__name__}")
    return api(name, wanted=f"request {hook}")


def read_request(body: object, api: str, *, path: str | None = None) -> Request:
    """The neutral :class:`Request` of ``body``, a request of ``api`` (``path``: where it
    was sent, which names the model and whether it streams for some APIs)."""
    record = _record(api, "reader")
    if record.read_request is None:
        raise TranslationError(f"requests of {api!r} cannot be read yet", reason="unsupported")
    if path is not None and not isinstance(path, str):
        raise TypeError(f"path must be a str, not {type(path).__name__}")
    return record.read_request(_body(body), path)


def write_request(
    request: Request,
    api: str,
    *,
    strict: bool = False,
    max_tokens_field: MaxTokensField = "auto",
    cache_key: str | None = None,
) -> WrittenRequest:
    """``request`` as a body of ``api``, with the path to send it to and what it lost;
    ``strict=True``: a :class:`TranslationError` instead of any loss.

    ``max_tokens_field`` names the field that carries the output limit of a request
    translated into Chat Completions: ``"max_tokens"`` (what every compatible server
    reads), ``"max_completion_tokens"`` (what OpenAI's reasoning models require) or
    ``"auto"``, the default: ``max_completion_tokens`` for OpenAI's reasoning models
    (``o1``, ``o3``, ``o4-mini``, ``gpt-5``, ...) and ``max_tokens`` for any other model.
    A request read from Chat Completions keeps its client's spelling.

    ``cache_key`` is the key the target's servers group the prompt cache by (a stable
    one per conversation, so that its next turn reads what this one cached), written
    where the target has such a field (Chat Completions' and Responses'
    ``prompt_cache_key``) unless the request carries its own; other targets ignore it."""
    if not isinstance(request, Request):
        raise TypeError(f"write_request takes a laminate.Request, not {type(request).__name__}")
    options = _options(max_tokens_field, cache_key)
    record = _record(api, "writer")
    if record.write_request is None:
        raise TranslationError(f"requests of {api!r} cannot be written yet", reason="unsupported")
    renamed, names, ids = _rename(request, record)
    body, where, losses = record.write_request(renamed, options)
    if strict and losses:
        first = losses[0]
        listed = ", ".join(f"{loss.path} ({loss.reason})" for loss in losses)
        raise TranslationError(
            f"{api} cannot carry all of the request: {listed}",
            path=first.path,
            reason=first.reason,
            losses=losses,
        )
    return WrittenRequest(body, where, list(losses), names, ids)


def translate_request(
    body: object,
    source: str,
    target: str,
    *,
    path: str | None = None,
    strict: bool = False,
    max_tokens_field: MaxTokensField = "auto",
    model: str | None = None,
    cache_key: str | None = None,
) -> Translation:
    """A request of ``source`` written for ``target``: read, then written
    (``strict``, ``max_tokens_field`` and ``cache_key`` as :func:`write_request` takes
    them). ``model``,
    when given, is the target's model in place of the client's (a translator's mapping);
    the ``request`` kept on the result is the client's, as read."""
    _options(max_tokens_field, cache_key)
    if model is not None and not isinstance(model, str):
        raise TypeError(f"model must be a str or None, not {type(model).__name__}")
    request = read_request(body, source, path=path)
    target_request = request if model is None else dataclasses.replace(request, model=model)
    written = write_request(
        target_request,
        target,
        strict=strict,
        max_tokens_field=max_tokens_field,
        cache_key=cache_key,
    )
    return Translation(
        written.body, written.path, written.losses, written.names, written.ids, request
    )


_FIELDS: Final = frozenset(get_args(MaxTokensField))


def _options(max_tokens_field: object, cache_key: object = None) -> WriteOptions:
    if not isinstance(max_tokens_field, str):
        raise TypeError(f"max_tokens_field must be a str, not {type(max_tokens_field).__name__}")
    if max_tokens_field not in _FIELDS:
        wanted = ", ".join(repr(f) for f in sorted(_FIELDS))
        raise ValueError(f"max_tokens_field must be one of {wanted}, not {max_tokens_field!r}")
    if cache_key is not None and not isinstance(cache_key, str):
        raise TypeError(f"cache_key must be a str or None, not {type(cache_key).__name__}")
    return WriteOptions(max_tokens_field, cache_key)  # type: ignore[arg-type]


# -- renaming -------------------------------------------------------------------------------


class _Renamer:
    """Original -> written, for names (or ids) the target refuses; reversible."""

    def __init__(self, rule: str, taken: set[str]) -> None:
        self._rule = re.compile(rule)
        self._taken = taken
        self.forward: dict[str, str] = {}

    def __call__(self, original: str) -> str:
        if self._rule.fullmatch(original):
            return original
        done = self.forward.get(original)
        if done is not None:
            return done
        digest = hashlib.sha256(original.encode()).hexdigest()
        clean = re.sub(r"[^A-Za-z0-9_-]", "_", original)
        for size in range(_HASH_LENGTH, len(digest) + 1):
            suffix = "_" + digest[:size]
            head = clean[: _LIMIT - len(suffix)] if clean else "t"
            if not head[0].isalpha():
                head = "t" + head[: _LIMIT - len(suffix) - 1]
            candidate = head + suffix
            if candidate not in self._taken and self._rule.fullmatch(candidate):
                break
        else:  # a rule no sanitized name matches: leave it for the API to judge
            return original
        self._taken.add(candidate)
        self.forward[original] = candidate
        return candidate

    def backward(self) -> dict[str, str]:
        return {new: old for old, new in self.forward.items()}


def _rename(request: Request, record: Api) -> tuple[Request, dict[str, str], dict[str, str]]:
    known_names = {t.name for t in request.tools} | set(request.allowed_tools or ())
    known_ids: set[str] = set()
    for message in request.messages:
        for block in message.content:
            match block:
                case ToolUse() | InvalidToolUse():
                    known_names.add(block.name)
                    known_ids.add(block.id)
                case ToolResult():
                    known_ids.add(block.tool_use_id)
    name = _Renamer(record.tool_name_rule, set(known_names))
    ident = _Renamer(record.call_id_rule, set(known_ids))
    if all(name(n) == n for n in known_names) and all(ident(i) == i for i in known_ids):
        return request, {}, {}
    tools = [
        t if t.kind not in {"function", "custom"} else dataclasses.replace(t, name=name(t.name))
        for t in request.tools
    ]
    messages = [
        Message(m.role, [_renamed_block(b, name, ident) for b in m.content], m.extra)
        for m in request.messages
    ]
    choice = request.tool_choice
    if choice is not None and choice not in ("auto", "any", "none"):
        choice = name(choice)
    allowed = None if request.allowed_tools is None else [name(n) for n in request.allowed_tools]
    renamed = dataclasses.replace(
        request, tools=tools, messages=messages, tool_choice=choice, allowed_tools=allowed
    )
    return renamed, name.backward(), ident.backward()


def _renamed_block(block: Block, name: Callable[[str], str], ident: Callable[[str], str]) -> Block:
    match block:
        case ToolUse() | InvalidToolUse():
            return dataclasses.replace(block, id=ident(block.id), name=name(block.name))
        case ToolResult():
            return ToolResult(
                tool_use_id=ident(block.tool_use_id),
                content=block.content,
                is_error=block.is_error,
                name=name(block.name) if block.name else "",
            )
        case _:
            return block


def _restored_block(
    block: ContentBlock, names: Mapping[str, str], ids: Mapping[str, str]
) -> ContentBlock:
    if isinstance(block, ToolUse | InvalidToolUse) and (block.name in names or block.id in ids):
        return dataclasses.replace(
            block, name=names.get(block.name, block.name), id=ids.get(block.id, block.id)
        )
    return block


def _restore_response(
    response: NormalizedResponse, names: Mapping[str, str], ids: Mapping[str, str]
) -> NormalizedResponse:
    if not names and not ids:
        return response
    content = [_restored_block(b, names, ids) for b in response.content]
    if all(a is b for a, b in zip(content, response.content, strict=True)):
        return response
    return dataclasses.replace(response, content=content)


def _restore_event(event: Event, names: Mapping[str, str], ids: Mapping[str, str]) -> Event:
    if not names and not ids:
        return event
    match event:
        case BlockStart(block=block) | BlockEnd(block=block):
            restored = _restored_block(block, names, ids)
            return event if restored is block else dataclasses.replace(event, block=restored)
        case ResponseDone(response=response):
            again = _restore_response(response, names, ids)
            return event if again is response else dataclasses.replace(event, response=again)
        case _:
            return event
