"""A registry of tools: their schemas for each API, and the dispatch of a response's calls.

Dispatch rules (the README's "Tools" section repeats them for users). Every call of a
response gets exactly one :class:`ToolResult`, in call order, with the call's id:

* a ``ToolUse`` whose name is registered runs its handler with the arguments converted to
  the annotated parameter types by :func:`~laminate._core.coerce.coerce` (``"5"`` becomes
  ``5`` for an ``int``, an ISO string a ``datetime``, an object a dataclass; a pydantic
  model is built and validated by its own ``model_validate``; a ``null`` for a parameter
  that has a default and does not take ``None`` means "use the default");
* a name that is not registered, a missing required argument, an unexpected argument, a
  value that cannot be converted, a handler that raises, a handler that does not finish
  within ``timeout`` seconds and an ``InvalidToolUse`` (arguments that are not a JSON
  object) each give a failed result (``ok=False``) whose ``output`` tells the model what
  went wrong. Nothing is guessed: a near name is never taken for the one the model sent.
* Calls run concurrently in an anyio task group; sync handlers run in worker threads.
  Cancellation (and any ``BaseException`` that is not an ``Exception``) propagates.
* A handler's return value becomes ``output``: a ``str`` as it is, anything else as JSON
  (dataclasses through ``dataclasses.asdict``, enums by value, dates, times and UUIDs as
  their ISO strings, pydantic models through ``model_dump(mode="json")``); a value that is
  not JSON is a failed result.
"""

from __future__ import annotations

import copy
import dataclasses
import datetime
import enum
import functools
import inspect
import json
import logging
import re
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar, overload

import anyio
import anyio.to_thread

from .._apis.wire import tool_definitions
from .._core.coerce import _is_pydantic_model, coerce
from .._core.errors import ExtractError
from .._core.request import ToolResult
from .._core.response import InvalidToolUse, NormalizedResponse, ToolUse
from .schema import FunctionSpec, describe_function, strict_problem, strict_schema

__all__ = ["Tool", "ToolRegistry", "ToolResult"]

log = logging.getLogger("laminate")

F = TypeVar("F", bound=Callable[..., Any])

# What every supported API accepts as a function name (OpenAI: "a-z, A-Z, 0-9, underscores
# and dashes, with a maximum length of 64"; Anthropic: ``^[a-zA-Z0-9_-]{1,64}$``).
_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")


@dataclass(frozen=True, slots=True)
class Tool:
    """A registered tool.

    ``parameters`` is the JSON Schema of its arguments (an object). ``spec`` is ``None``
    for a hand-written schema: the arguments then reach the handler as keyword arguments
    as the model sent them, without conversion.
    """

    name: str
    description: str
    parameters: dict[str, Any]
    handler: Callable[..., Any]
    strict: bool = False
    spec: FunctionSpec | None = dataclasses.field(default=None, repr=False, compare=False)


class ToolRegistry:
    """Tools by name; see the module documentation for the dispatch rules."""

    def __init__(self) -> None:
        self._tools: dict[str, Tool] = {}

    # -- registration ---------------------------------------------------------------------

    @overload
    def tool(
        self,
        fn: F,
        /,
        *,
        name: str | None = ...,
        description: str | None = ...,
        strict: bool = ...,
    ) -> F: ...
    @overload
    def tool(
        self, *, name: str | None = ..., description: str | None = ..., strict: bool = ...
    ) -> Callable[[F], F]: ...

    def tool(
        self,
        fn: Callable[..., Any] | None = None,
        *,
        name: str | None = None,
        description: str | None = None,
        strict: bool = False,
    ) -> Any:
        """Register a typed function (sync or async) as a tool; returns it unchanged.

        Used bare (``@registry.tool``), with options (``@registry.tool(name=...)``) or
        called (``registry.tool(fn, strict=True)``).
        The name defaults to the function's, the description to the first paragraph of
        its docstring; the schema comes from its signature. ``strict=True`` asks the
        OpenAI APIs to enforce the schema, which must then have every property required;
        the objects of pydantic models that do not say whether they take other keys are
        then closed (``"additionalProperties": false``, as strict mode requires).
        """

        def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
            spec = describe_function(fn, description=description)
            tool_name = name if name is not None else getattr(fn, "__name__", "")
            schema = strict_schema(spec.schema) if strict else spec.schema
            self._add(Tool(tool_name, spec.description, schema, fn, strict, spec))
            return fn

        return decorate if fn is None else decorate(fn)

    def register(
        self,
        name: str,
        description: str,
        parameters_schema: Mapping[str, Any],
        handler: Callable[..., Any],
        *,
        strict: bool = False,
    ) -> Tool:
        """Register a tool with a hand-written JSON Schema (an object schema). The
        handler gets the arguments as keyword arguments, unconverted."""
        if not isinstance(parameters_schema, Mapping) or parameters_schema.get("type") != "object":
            raise ValueError(
                f'the parameters of tool {name!r} must be a {{"type": "object"}} schema'
            )
        schema = json.loads(json.dumps(parameters_schema))  # a private, plain-JSON copy
        tool = Tool(name, description, schema, handler, strict)
        self._add(tool)
        return tool

    def _add(self, tool: Tool) -> None:
        if not _NAME.fullmatch(tool.name):
            raise ValueError(f"tool name {tool.name!r} must be 1 to 64 letters, digits, '_' or '-'")
        if tool.name in self._tools:
            raise ValueError(f"a tool named {tool.name!r} is already registered")
        if not callable(tool.handler):
            raise TypeError(f"the handler of tool {tool.name!r} is not callable")
        if tool.strict:
            problem = strict_problem(tool.parameters)
            if problem:
                raise ValueError(f"tool {tool.name!r} cannot be strict: {problem}")
        self._tools[tool.name] = tool

    # -- lookup ---------------------------------------------------------------------------

    def __getitem__(self, name: str) -> Tool:
        return self._tools[name]

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[Tool]:
        return iter(list(self._tools.values()))

    def __len__(self) -> int:
        return len(self._tools)

    def tools(self, provider: str) -> list[dict[str, Any]]:
        """The request's ``tools`` array for ``provider``, in registration order."""
        return tool_definitions(self._tools.values(), provider)

    # -- dispatch -------------------------------------------------------------------------

    async def run(
        self, response: NormalizedResponse, *, timeout: float | None = None
    ) -> list[ToolResult]:
        """Run every call of ``response`` (``ToolUse`` and ``InvalidToolUse``)
        concurrently; one result per call, in call order. ``timeout`` bounds each call
        in seconds (``None``: no limit). A sync handler that times out keeps running in
        its worker thread (a thread cannot be stopped); its result is discarded."""
        calls = [b for b in response.content if isinstance(b, ToolUse | InvalidToolUse)]
        results: list[ToolResult | None] = [None] * len(calls)

        async def run_one(index: int, call: ToolUse | InvalidToolUse) -> None:
            results[index] = await self._run_call(call, timeout)

        async with anyio.create_task_group() as group:
            for index, call in enumerate(calls):
                group.start_soon(run_one, index, call)
        return [r for r in results if r is not None]

    def run_sync(
        self, response: NormalizedResponse, *, timeout: float | None = None
    ) -> list[ToolResult]:
        """:meth:`run` for code without an event loop: it runs one (asyncio) for the
        duration of the call, so calls still run concurrently and async handlers work.
        Inside a running event loop, ``await registry.run(response)`` instead."""
        if _in_event_loop():
            raise RuntimeError(
                "ToolRegistry.run_sync() was called inside a running event loop; "
                "use `await registry.run(response)` there"
            )
        return anyio.run(functools.partial(self.run, response, timeout=timeout))

    async def _run_call(self, call: ToolUse | InvalidToolUse, timeout: float | None) -> ToolResult:
        if isinstance(call, InvalidToolUse):
            return _failed(
                call.id,
                call.name,
                f"the call to {call.name!r} was not run: its arguments are not a valid JSON "
                f"object ({call.reason}); call it again with a JSON object",
            )
        tool = self._tools.get(call.name)
        if tool is None:
            known = ", ".join(self._tools) or "none"
            return _failed(
                call.id, call.name, f"unknown tool {call.name!r} (the tools are: {known})"
            )
        try:
            kwargs = _arguments(tool, call.input.value)
        except _BadArguments as exc:
            return _failed(call.id, call.name, f"the call to {call.name!r} was not run: {exc}")
        return await _invoke(tool, call.id, kwargs, timeout)


class _BadArguments(Exception):
    """The arguments do not fit the tool; the message says how."""


def _arguments(tool: Tool, value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _BadArguments(f"the arguments are not a JSON object (got {type(value).__name__})")
    # The handler gets its own copy: the response's arguments stay as they were sent.
    arguments: dict[str, Any] = copy.deepcopy(value)
    if tool.spec is None:
        _check_binding(tool, arguments)
        return dict(arguments)
    problems = []
    names = {p.name for p in tool.spec.parameters}
    problems += [f"unexpected argument {key!r}" for key in arguments if key not in names]
    kwargs = {}
    for param in tool.spec.parameters:
        if param.name not in arguments:
            if param.required:
                problems.append(f"missing required argument {param.name!r}")
            continue
        value = arguments[param.name]
        if value is None and not param.required and not param.accepts_none:
            continue  # ``null`` for an optional parameter: its default applies
        try:
            kwargs[param.name], _ = coerce(value, param.annotation, path=param.name)
        except ExtractError as exc:
            problems.append(f"invalid argument {exc.path!r}: {exc.reason}")
    if problems:
        takes = ", ".join(sorted(names)) or "no arguments"
        raise _BadArguments(f"{'; '.join(problems)} ({tool.name} takes: {takes})")
    return kwargs


def _check_binding(tool: Tool, arguments: dict[str, Any]) -> None:
    try:
        signature = inspect.signature(tool.handler)
    except (TypeError, ValueError):  # no signature to check against (some builtins)
        return
    try:
        signature.bind(**arguments)
    except TypeError as exc:
        raise _BadArguments(f"the arguments do not fit: {exc}") from None


async def _invoke(
    tool: Tool, call_id: str, kwargs: dict[str, Any], timeout: float | None
) -> ToolResult:
    try:
        with anyio.move_on_after(timeout) as scope:
            value = await _call(tool.handler, kwargs)
    except Exception as exc:  # the handler's failure is the model's to read, not a crash
        log.warning("laminate: tool %r raised %s", tool.name, type(exc).__name__, exc_info=True)
        return _failed(
            call_id, tool.name, f"the call to {tool.name!r} failed: {type(exc).__name__}: {exc}"
        )
    if scope.cancelled_caught:
        return _failed(
            call_id, tool.name, f"the call to {tool.name!r} timed out after {timeout:g} s"
        )
    try:
        output = _output_text(value)
    except (TypeError, ValueError) as exc:
        return _failed(
            call_id,
            tool.name,
            f"the call to {tool.name!r} returned a value that is not JSON: {exc}",
        )
    return ToolResult(call_id, tool.name, output, True)


async def _call(handler: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
    if _is_async(handler):
        return await handler(**kwargs)
    result = await anyio.to_thread.run_sync(
        functools.partial(handler, **kwargs), abandon_on_cancel=True
    )
    if inspect.isawaitable(result):  # a sync wrapper around a coroutine function
        result = await result
    return result


def _is_async(handler: Callable[..., Any]) -> bool:
    if inspect.iscoroutinefunction(handler):
        return True
    call = getattr(handler, "__call__", None)  # noqa: B004 - an object with ``async def __call__``
    return call is not None and inspect.iscoroutinefunction(call)


def _output_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, allow_nan=False, default=_to_json)


def _to_json(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, datetime.date | datetime.time):
        return value.isoformat()
    if isinstance(value, uuid.UUID):
        return str(value)
    if _is_pydantic_model(type(value)):
        return value.model_dump(mode="json")
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def _failed(call_id: str, name: str, message: str) -> ToolResult:
    log.debug("laminate: call %s to %r failed: %s", call_id, name, message)
    return ToolResult(call_id, name, message, False)


def _in_event_loop() -> bool:
    try:
        anyio.get_current_task()
    except RuntimeError:  # anyio's "no event loop" error (sniffio's, on older anyio)
        return False
    return True
