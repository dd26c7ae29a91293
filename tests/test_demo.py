"""``laminate demo`` and its renderer: plain text when not on a terminal, live rich
panels on one (a rich Console forced into terminal mode, writing to a StringIO)."""

from __future__ import annotations

import io
import itertools
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from laminate import Event, StreamNormalizer, ToolInputDelta
from laminate._cli.demo import PROVIDERS, PlainSink, Transcript, path_label, run_demo, supported

from .support import ROOT

DEMO = ROOT / "src" / "laminate" / "_cli" / "demo_streams"
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
CONTENT_START = '"""URL slugs from titles."""'
CONTENT_END = 'return re.sub(r"[^a-z0-9]+", "-", ascii_only.lower()).strip("-")'


def events_of(path: Path) -> list[Event]:
    normalizer = StreamNormalizer()
    return [*normalizer.feed(path.read_bytes()), *normalizer.close()]


def test_every_provider_is_supported() -> None:
    assert all(supported(p) for p in PROVIDERS)
    assert not supported("gopher")


def test_the_demo_without_a_terminal() -> None:
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    result = subprocess.run(
        [sys.executable, "-m", "laminate", "demo", "--pace", "0"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=env,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "\x1b" not in out  # no colour, no cursor movement
    for provider in PROVIDERS:
        assert f"=== {provider} · turn 1 · POST " in out
        assert f"--- {provider} summary ---" in out
    assert out.count("  stop reasons ") == len(PROVIDERS)
    assert out.count("  tool calls    write_file, run_command") == len(PROVIDERS)
    assert "  ↳ write_file: wrote " in out
    assert f"{len(PROVIDERS)} providers, " in out


def test_plain_summary_per_provider() -> None:
    out = io.StringIO()
    runs = run_demo(["anthropic", "ollama"], pace=0, stream=out)
    assert [r.provider for r in runs] == ["anthropic", "ollama"]
    text = out.getvalue()
    anthropic = text[text.index("--- anthropic summary ---") :].splitlines()[1:5]
    assert anthropic == [
        "  stop reasons  tool_use (tool_use) then end_turn (end_turn)",
        "  tool calls    write_file, run_command",
        "  usage         2703 input, 328 output tokens",
        anthropic[3],
    ]
    assert re.fullmatch(r"  events        \d+ in 2 turns, \d+\.\d\d s", anthropic[3])
    for run in runs:
        assert [r.stop_reason.kind for r in run.responses] == ["tool_use", "end_turn"]
        assert run.events == sum(len(events_of(p)) for p in sorted((DEMO / run.provider).iterdir()))


def test_the_live_rendering_shows_the_arguments_growing() -> None:
    file = io.StringIO()
    console = Console(file=file, force_terminal=True, width=100, color_system="standard")
    run_demo(["openai"], pace=0, console=console)
    raw = file.getvalue()
    assert "\x1b[" in raw
    text = ANSI.sub("", raw)
    # Every redraw of the write_file panel, in order: its `content` row fills up.
    panels = [p.split("╰")[0] for p in text.split("╭─  write_file ")[1:]]
    assert len(panels) > 10
    sizes = [len(re.sub(r"\s|│", "", p)) for p in panels]
    assert sizes == sorted(sizes)
    assert len(set(sizes)) > 10
    # Unfinished fields are marked "…", finished ones "✓" (from is_complete).
    assert any("✓ path" in p and "… content" in p and CONTENT_START in p for p in panels)
    assert not any(CONTENT_END in p for p in panels if "… content" in p)
    assert "✓ content" in panels[-1]
    assert CONTENT_END in panels[-1]
    assert "╭─  run_command " in text
    assert "openai summary" in text
    assert "thinking: The user wants a slug helper" in text


def test_the_plain_rendering_writes_each_field_as_it_grows() -> None:
    out = io.StringIO()
    transcript = Transcript(PlainSink(out))
    seen = []  # the output after each fragment of the write_file call
    for event in events_of(DEMO / "openai-responses" / "1-tool-calls.sse"):
        transcript.feed(event)
        if isinstance(event, ToolInputDelta) and event.index == 2:
            seen.append(out.getvalue())
    assert len(seen) > 10
    assert all(len(a) < len(b) for a, b in itertools.pairwise(seen))
    halfway = [s for s in seen if "import re" in s and CONTENT_END not in s]
    assert halfway
    assert "    path: slugify.py ✓\n    content: " in halfway[0]
    text = out.getvalue()
    assert '    content: """URL slugs from titles."""\n\n      import re\n' in text
    assert "\n      def slugify(title: str) -> str:\n" in text
    assert '          >>> slugify("Crème brûlée: 10 recipes!")\n' in text
    assert "    command: python -m doctest -v slugify.py ✓\n" in text
    assert all(line == line.rstrip() for line in text.splitlines())  # no trailing blanks


def test_plain_rendering_of_non_string_and_invalid_arguments() -> None:
    out = io.StringIO()
    transcript = Transcript(PlainSink(out))
    for event in events_of(ROOT / "fixtures" / "anthropic" / "tool-call.sse"):
        transcript.feed(event)
    assert "    max_lines: 40 ✓" in out.getvalue()
    out = io.StringIO()
    transcript = Transcript(PlainSink(out))
    normalizer = StreamNormalizer("anthropic")
    data = (ROOT / "fixtures" / "anthropic" / "max-tokens.sse").read_bytes()
    for event in [*normalizer.feed(data), *normalizer.close()]:
        transcript.feed(event)
    assert "✗ invalid arguments: cut off" in out.getvalue()


@pytest.mark.parametrize(
    ("path", "label"),
    [((), "(value)"), (("city",), "city"), (("files", 0, "name"), "files[0].name"), ((3,), "[3]")],
)
def test_path_label(path: tuple[str | int, ...], label: str) -> None:
    assert path_label(path) == label


def test_a_terminal_without_rich_gets_plain_text(monkeypatch: pytest.MonkeyPatch) -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setitem(sys.modules, "rich.console", None)  # `import rich.console` fails
    out = Terminal()
    run_demo(["ollama"], pace=0, stream=out)
    assert "--- ollama summary ---" in out.getvalue()
    assert "\x1b" not in out.getvalue()
