"""``laminate demo``: a two-turn tool loop against the bundled mock provider, rendered live.

The renderer is a :class:`Transcript`: it reads events and writes text as it arrives,
reasoning dimmed, and each tool call's arguments field by field from the live argument
view (``string_deltas`` for the characters, ``is_written`` for the check marks). In a
terminal with rich installed, tool calls are drawn as live panels; otherwise everything
is plain, append-only text (also what ``laminate replay --format pretty`` prints).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any, Final, Protocol

import anyio
import httpx

from .._apis.registry import APIS, api
from .._core.errors import UnknownProviderError
from .._core.events import (
    BlockEnd,
    BlockStart,
    Event,
    ReasoningDelta,
    ResponseDone,
    ResponseStart,
    TextDelta,
    ToolInputDelta,
)
from .._core.partial_json import JSONPath
from .._core.response import InvalidToolUse, NormalizedResponse, Reasoning, Text, ToolUse, Unknown
from .._io.adapters import normalize_stream
from .._normalizer import StreamNormalizer
from .server import DEMO_PACE, PROVIDERS, mock_server

if TYPE_CHECKING:
    from rich.console import Console, RenderableType
    from rich.live import Live

    from .._tools.registry import ToolRegistry

__all__ = ["PROVIDERS", "PlainSink", "ProviderRun", "RichSink", "Transcript", "run_demo"]

PROMPT: Final = "Write a slugify(title) helper to slugify.py, then run its doctest."
ENDPOINTS: Final = {
    name: record.mock.demo_endpoint() for name, record in APIS.items() if record.mock is not None
}
"""The endpoint each demo provider is asked on (its ``Mock.demo_path``)."""
_ENDPOINT: Final = ENDPOINTS
_INDENT: Final = "      "


# -- writing ------------------------------------------------------------------------------


class Sink(Protocol):
    """Where the demo's text goes: a plain stream, or a rich console with styles."""

    def write(self, text: str, style: str = "") -> None: ...


class PlainSink:
    """Text only: no colour, no cursor movement. ``live``: flush every write."""

    def __init__(self, stream: IO[str], *, live: bool = True) -> None:
        self.stream = stream
        self.live = live

    def write(self, text: str, style: str = "") -> None:
        self.stream.write(text)
        if self.live:
            self.stream.flush()


class RichSink:
    def __init__(self, console: Console) -> None:
        self.console = console

    def write(self, text: str, style: str = "") -> None:
        self.console.print(
            text, style=style or None, end="", markup=False, highlight=False, soft_wrap=True
        )


def path_label(path: JSONPath) -> str:
    """``("files", 0, "name")`` as ``files[0].name``."""
    label = ""
    for part in path:
        label += f"[{part}]" if isinstance(part, int) else f".{part}" if label else part
    return label or "(value)"


# -- tool calls ---------------------------------------------------------------------------


@dataclass(slots=True)
class _Call:
    """What a renderer knows of one tool call while it streams."""

    name: str
    id: str
    fields: dict[JSONPath, str] = field(default_factory=dict)
    complete: set[JSONPath] = field(default_factory=set)
    path: JSONPath | None = None
    end: ToolUse | InvalidToolUse | None = None

    def take(self, event: ToolInputDelta) -> None:
        for delta in event.string_deltas:
            self.fields[delta.path] = self.fields.get(delta.path, "") + delta.text
        self.complete.update(p for p in self.fields if event.is_written(p))

    def missing(self) -> list[tuple[str, Any]]:
        """Top-level arguments that never streamed as strings (numbers, lists, ...)."""
        if not isinstance(self.end, ToolUse) or not isinstance(self.end.input.value, dict):
            return []
        shown = {p[0] for p in self.fields if p}
        return [(k, v) for k, v in self.end.input.value.items() if k not in shown]


class _AppendCalls:
    """Tool calls as append-only text: each field's characters as they arrive."""

    def __init__(self, transcript: Transcript) -> None:
        self.out = transcript
        self.calls: dict[int, _Call] = {}
        self.last: int | None = None
        self.indent = False  # a value's line just ended: indent before what follows

    def start(self, index: int, block: ToolUse) -> None:
        self.calls[index] = _Call(block.name, block.id)
        self.out.line(f"→ {block.name}", "bold magenta")
        self.out.write(f"  ({block.id})", "dim")
        self.last = index

    def delta(self, event: ToolInputDelta) -> None:
        call = self.calls[event.index]
        if self.last != event.index:  # parallel calls interleaving: say whose field this is
            self.out.line(f"  ({call.name} continues)", "dim")
            call.path, self.last = None, event.index
        for d in event.string_deltas:
            if d.path != call.path:
                self._check(call, event)
                self.out.line(f"    {path_label(d.path)}: ", "cyan")
                self.indent = False
                call.path = d.path
                call.fields.setdefault(d.path, "")
            call.fields[d.path] += d.text
            self._value(d.text)
        self._check(call, event)

    def _value(self, text: str, style: str = "") -> None:
        """Part of a value; its later lines indented (lazily: no trailing blanks)."""
        for n, piece in enumerate(text.split("\n")):
            if n:
                self.out.write("\n")
                self.indent = True
            if piece and self.indent:
                self.out.write(_INDENT)
                self.indent = False
            self.out.write(piece, style)

    def _check(self, call: _Call, event: ToolInputDelta) -> None:
        path = call.path
        if path is not None and path not in call.complete and event.is_written(path):
            call.complete.add(path)
            self._value(" ✓", "green")

    def end(self, index: int, block: ToolUse | InvalidToolUse) -> None:
        call = self.calls.pop(index)
        call.end = block
        for key, value in call.missing():
            self.out.line(f"    {key}: ", "cyan")
            self.out.write(json.dumps(value, ensure_ascii=False) + " ✓")
        if isinstance(block, InvalidToolUse):
            self.out.line(f"    ✗ invalid arguments: {block.reason}", "bold red")
        self.out.newline()
        self.last = None


class _LiveCalls:
    """Tool calls as rich panels redrawn on every fragment, one row per field."""

    def __init__(self, transcript: Transcript, console: Console) -> None:
        self.out = transcript
        self.console = console
        self.calls: dict[int, _Call] = {}
        self.live: Live | None = None

    def start(self, index: int, block: ToolUse) -> None:
        from rich.live import Live

        self.out.newline()
        self.calls[index] = _Call(block.name, block.id)
        if self.live is None:
            self.live = Live(console=self.console, auto_refresh=False, transient=False)
            self.live.start()
        self._draw()

    def delta(self, event: ToolInputDelta) -> None:
        self.calls[event.index].take(event)
        self._draw()

    def end(self, index: int, block: ToolUse | InvalidToolUse) -> None:
        self.calls[index].end = block
        self._draw()
        if self.live is not None and all(c.end is not None for c in self.calls.values()):
            self.live.stop()
            self.live = None
            self.calls.clear()

    def _draw(self) -> None:
        from rich.console import Group

        if self.live is not None:
            self.live.update(Group(*map(_panel, self.calls.values())), refresh=True)


def _panel(call: _Call) -> RenderableType:
    from rich.panel import Panel
    from rich.table import Table
    from rich.text import Text as RichText

    grid = Table.grid(padding=(0, 1))
    grid.add_column(width=1)
    grid.add_column(style="cyan", no_wrap=True)
    grid.add_column()
    for path, value in call.fields.items():
        mark = RichText("✓", style="green") if path in call.complete else RichText("…", "yellow")
        grid.add_row(mark, path_label(path), RichText(value))
    for key, value in call.missing():
        grid.add_row(RichText("✓", style="green"), key, json.dumps(value, ensure_ascii=False))
    if isinstance(call.end, InvalidToolUse):
        reason = RichText(f"invalid arguments: {call.end.reason}", style="red")
        grid.add_row(RichText("✗", style="red"), "", reason)
    style = "magenta" if call.end is None else "red" if call.end.as_tool_use() is None else "green"
    title = RichText(f" {call.name} ", style="bold")
    return Panel(grid, title=title, title_align="left", subtitle=call.id, border_style=style)


# -- the transcript ----------------------------------------------------------------------


class Transcript:
    """Renders events as they arrive. ``console`` switches tool calls to live panels."""

    def __init__(self, sink: Sink, console: Console | None = None) -> None:
        self.sink = sink
        self.at_line_start = True
        self.calls: _AppendCalls | _LiveCalls = (
            _LiveCalls(self, console) if console is not None else _AppendCalls(self)
        )

    def write(self, text: str, style: str = "") -> None:
        if text:
            self.sink.write(text, style)
            self.at_line_start = text.endswith("\n")

    def newline(self) -> None:
        if not self.at_line_start:
            self.write("\n")

    def line(self, text: str, style: str = "") -> None:
        """``text`` at the start of a line (left open for more)."""
        self.newline()
        self.write(text, style)

    def feed(self, event: Event) -> None:
        match event:
            case ResponseStart(id, model, provider):
                self.line(f"{provider} · {model or '?'} · {id or 'no id'}\n", "dim")
            case BlockStart(index, ToolUse() as block):
                self.calls.start(index, block)
            case BlockStart(_, Reasoning(_, _, redacted)):
                self.line("thinking: ", "dim")
                if redacted:
                    self.write("[redacted]", "dim italic")
            case BlockStart(_, Text()):
                self.newline()
            case BlockStart(_, Unknown(block_type)):
                self.line(f"[{block_type} block]", "dim")
            case TextDelta(_, text):
                self.write(text)
            case ReasoningDelta(_, text):
                self.write(text, "dim italic")
            case ToolInputDelta():
                self.calls.delta(event)
            case BlockEnd(index, ToolUse() | InvalidToolUse() as block):
                self.calls.end(index, block)
            case BlockEnd() | ResponseDone():
                self.newline()


def summary_lines(response: NormalizedResponse) -> list[tuple[str, str]]:
    """Label and value rows describing a finished response."""
    stop = response.stop_reason
    calls = [b.name for b in response.content if isinstance(b, ToolUse | InvalidToolUse)]
    return [
        ("stop reason", f"{stop} (sent as {stop.raw!r})" if stop.raw != str(stop) else str(stop)),
        ("tool calls", ", ".join(calls) or "none"),
        ("usage", _usage_text([response])),
    ]


def _usage_text(responses: Sequence[NormalizedResponse]) -> str:
    def total(name: str) -> int | None:
        counts = [getattr(r.usage, name) for r in responses]
        known = [c for c in counts if c is not None]
        return sum(known) if known else None

    parts = [
        f"{count} {label}"
        for label, count in (("input", total("input_tokens")), ("output", total("output_tokens")))
        if count is not None
    ]
    text = ", ".join(parts) + " tokens" if parts else "not reported"
    reasoning = total("reasoning_tokens")
    return f"{text} ({reasoning} reasoning)" if reasoning else text


# -- the demo -----------------------------------------------------------------------------


@dataclass(slots=True)
class ProviderRun:
    """What the demo did with one provider."""

    provider: str
    responses: list[NormalizedResponse] = field(default_factory=list)
    events: int = 0
    seconds: float = 0.0

    def rows(self) -> list[tuple[str, str]]:
        stops = " then ".join(f"{r.stop_reason} ({r.stop_reason.raw})" for r in self.responses)
        calls = [c.name for r in self.responses for c in r.tool_uses()]
        return [
            ("stop reasons", stops),
            ("tool calls", ", ".join(calls) or "none"),
            ("usage", _usage_text(self.responses)),
            ("events", f"{self.events} in {len(self.responses)} turns, {self.seconds:.2f} s"),
        ]


def demo_tools() -> ToolRegistry:
    """The demo's tools. Simulated: nothing is written and nothing runs."""
    from .._tools.registry import ToolRegistry

    registry = ToolRegistry()

    @registry.tool
    async def write_file(path: str, content: str) -> str:
        """Write a text file."""
        return f"wrote {len(content.encode())} bytes to {path} (simulated)"

    @registry.tool
    async def run_command(command: str) -> str:
        """Run a shell command and return its output."""
        return "1 passed and 0 failed. Test passed. (simulated)"

    return registry


def first_request(provider: str, registry: ToolRegistry) -> dict[str, Any]:
    """The demo's first request to ``provider``: the prompt and the demo's tools."""
    mock = api(provider).mock
    if mock is None:
        raise UnknownProviderError(f"the demo has no requests for {provider!r}", seen=provider)
    return mock.demo_request(mock.demo_model, PROMPT, registry.tools(provider))


class _Screen:
    """The demo's output: a rich console, or plain text."""

    def __init__(self, console: Console | None, stream: IO[str]) -> None:
        self.console = console
        self.sink: Sink = RichSink(console) if console is not None else PlainSink(stream)

    def transcript(self) -> Transcript:
        return Transcript(self.sink, self.console)

    def heading(self, text: str) -> None:
        if self.console is not None:
            self.console.rule(text, style="blue")
        else:
            self.sink.write(f"\n=== {text} ===\n")

    def note(self, text: str) -> None:
        if self.console is not None:
            self.console.print(text, style="yellow", markup=False, highlight=False)
        else:
            self.sink.write(text + "\n")

    def summary(self, run: ProviderRun) -> None:
        if self.console is None:
            self.sink.write(f"\n--- {run.provider} summary ---\n")
            for label, value in run.rows():
                self.sink.write(f"  {label:<14}{value}\n")
            return
        from rich.panel import Panel
        from rich.table import Table

        grid = Table.grid(padding=(0, 2))
        grid.add_column(style="bold")
        grid.add_column()
        for label, value in run.rows():
            grid.add_row(label, value)
        self.console.print(Panel(grid, title=f"{run.provider} summary", border_style="green"))


async def _turn(
    client: httpx.AsyncClient, provider: str, request: dict[str, Any], screen: _Screen
) -> tuple[NormalizedResponse, int]:
    transcript = screen.transcript()
    events = 0
    async with client.stream("POST", _ENDPOINT[provider], json=request) as http:
        if http.status_code != 200:
            await http.aread()
            raise RuntimeError(f"the mock provider answered {http.status_code}: {http.text}")
        async with normalize_stream(http) as stream:  # provider detected from the URL
            async for event in stream:
                events += 1
                transcript.feed(event)
    if stream.response is None:  # the loop ends with ResponseDone or raises
        raise RuntimeError("the stream ended without a response")
    return stream.response, events


async def _provider(client: httpx.AsyncClient, provider: str, screen: _Screen) -> ProviderRun:
    from .._apis.wire import assistant_message, tool_results

    registry = demo_tools()
    run = ProviderRun(provider)
    request = first_request(provider, registry)
    key = api(provider).turn_key
    started = time.perf_counter()
    for turn in (1, 2):
        screen.heading(f"{provider} · turn {turn} · POST {_ENDPOINT[provider]}")
        response, events = await _turn(client, provider, request, screen)
        run.responses.append(response)
        run.events += events
        if not response.has_tool_use():
            break
        results = await registry.run(response)
        for result in results:
            screen.note(f"  ↳ {result.name}: {result.output}")
        turn_items = assistant_message(response, provider)
        history = [*request[key], *(turn_items if isinstance(turn_items, list) else [turn_items])]
        request = {**request, key: [*history, *tool_results(results, provider)]}
    run.seconds = time.perf_counter() - started
    screen.summary(run)
    return run


def supported(provider: str) -> bool:
    """Whether this build of laminate reads ``provider``'s streams."""
    try:
        StreamNormalizer(provider)
    except (UnknownProviderError, ValueError):
        return False
    return True


async def _run_all(url: str, providers: Sequence[str], screen: _Screen) -> list[ProviderRun]:
    async with httpx.AsyncClient(base_url=url, timeout=30) as client:
        return [await _provider(client, provider, screen) for provider in providers]


def _console(stream: IO[str], plain: bool) -> Console | None:
    if plain or not stream.isatty():
        return None
    try:
        from rich.console import Console
    except ImportError:
        return None
    return Console(file=stream, highlight=False)


def run_demo(
    providers: Sequence[str] = PROVIDERS,
    *,
    pace: float = DEMO_PACE,
    stream: IO[str] | None = None,
    console: Console | None = None,
    plain: bool = False,
) -> list[ProviderRun]:
    """Serve the demo streams on a free loopback port and render a tool loop per provider.

    Output goes to ``console`` when given, else to ``stream`` (standard output): through
    rich when it is a terminal (and ``plain`` is false), as plain text otherwise.
    """
    stream = stream if stream is not None else sys.stdout
    screen = _Screen(console if console is not None else _console(stream, plain), stream)
    chosen = [p for p in providers if supported(p)]
    for provider in providers:
        if provider not in chosen:
            screen.note(f"({provider}: not supported by this version of laminate, skipped)")
    started = time.perf_counter()
    with mock_server(pace=pace) as url:
        screen.note(f"mock provider on {url}, streaming one frame every {pace * 1000:g} ms")
        runs = anyio.run(_run_all, url, chosen, screen)
    total = sum(r.events for r in runs)
    elapsed = time.perf_counter() - started
    providers_text = f"{len(runs)} provider{'s' if len(runs) != 1 else ''}"
    screen.note(f"\n{providers_text}, {total} events, {elapsed:.1f} s: one event stream.")
    return runs
