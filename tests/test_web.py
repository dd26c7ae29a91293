"""``laminate demo --web``: the page's streams over HTTP, then the page itself in a real
headless Chromium (Debian's ``chromium``, driven by playwright through ``executable_path``:
nothing is downloaded). The browser tests are skipped, saying why, where either is missing.
"""

from __future__ import annotations

import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import httpx
import pytest

from laminate import NormalizedResponse, Reasoning, StreamNormalizer
from laminate._cli.demo import PROVIDERS, path_label
from laminate._cli.server import DEMO_STREAMS, find_recordings
from laminate._cli.web import STATIC, WebDemo, web_server
from laminate._core import jsonlib

from .support import ROOT

DEMO_ORDER = [p for p in PROVIDERS if find_recordings(DEMO_STREAMS, p)]
CHROMIUM = os.environ.get("LAMINATE_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
# As root in a container: no sandbox, no GPU, nothing reaching out to the network.
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

# Hand-written answers that end badly: a call cut by the token limit after its first
# argument finished, and a stream that stops in the middle of a call's arguments.
CUT_ARGS = '{"path": "notes.txt", "content": "Dear team, th'
CUT_CALL = (
    b"".join(
        b"data: " + json.dumps(chunk).encode() + b"\n\n"
        for chunk in [
            {
                "id": "chatcmpl-cut",
                "object": "chat.completion.chunk",
                "model": "m",
                "choices": [
                    {
                        "index": 0,
                        "delta": {
                            "role": "assistant",
                            "tool_calls": [
                                {
                                    "index": 0,
                                    "id": "call_cut",
                                    "type": "function",
                                    "function": {"name": "write_file", "arguments": ""},
                                }
                            ],
                        },
                        "finish_reason": None,
                    }
                ],
            },
            {
                "id": "chatcmpl-cut",
                "object": "chat.completion.chunk",
                "model": "m",
                "choices": [
                    {
                        "index": 0,
                        "delta": {
                            "tool_calls": [
                                {
                                    "index": 0,
                                    "function": {"arguments": CUT_ARGS},
                                }
                            ]
                        },
                        "finish_reason": None,
                    }
                ],
            },
            {
                "id": "chatcmpl-cut",
                "object": "chat.completion.chunk",
                "model": "m",
                "choices": [{"index": 0, "delta": {}, "finish_reason": "length"}],
            },
        ]
    )
    + b"data: [DONE]\n\n"
)
BROKEN_OFF = (
    b"event: message_start\n"
    b'data: {"type":"message_start","message":{"id":"msg_broken","type":"message",'
    b'"role":"assistant","model":"m","content":[],"stop_reason":null,'
    b'"usage":{"input_tokens":5,"output_tokens":1}}}\n\n'
    b"event: content_block_start\n"
    b'data: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use",'
    b'"id":"toolu_broken","name":"run_command","input":{}}}\n\n'
    b"event: content_block_delta\n"
    b'data: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta",'
    b'"partial_json":"{\\"command\\": \\"python -m doc"}}\n\n'
)


def demo_answers(provider: str) -> list[NormalizedResponse]:
    """What laminate makes of the provider's demo recordings, turn by turn."""
    answers = []
    for recording in find_recordings(DEMO_STREAMS, provider):
        normalizer = StreamNormalizer(provider)
        normalizer.feed(recording.stream.read_bytes())
        normalizer.close()
        assert normalizer.response is not None
        answers.append(normalizer.response)
    return answers


def leaves(value: Any, path: tuple[str | int, ...] = ()) -> Iterator[tuple[str, Any]]:
    """Every scalar (or empty container) in ``value``, labelled as the page labels it."""
    if isinstance(value, dict | list) and value:
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for key, item in items:
            yield from leaves(item, (*path, key))
    else:
        yield path_label(path), value


def shown(value: Any) -> str:
    """A value as the page writes it: strings as they are, anything else as JSON."""
    return value if isinstance(value, str) else json.dumps(value)


# -- the streams, over HTTP -----------------------------------------------------------------


def ui_chunks(response: httpx.Response) -> list[dict[str, Any]]:
    """The UI message stream's chunks, in order, up to ``[DONE]``."""
    chunks = []
    for frame in response.text.split("\n\n"):
        if not frame.startswith("data: "):
            continue
        data = frame.removeprefix("data: ")
        if data == "[DONE]":
            break
        chunks.append(json.loads(data))
    return chunks


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[str, WebDemo]]:
    with web_server(pace=0.0) as (url, app):
        yield url, app


def play(client: httpx.Client, request: dict[str, Any]) -> list[dict[str, Any]]:
    response = client.post("api/turn", json=request)
    assert response.status_code == 200, response.text
    assert response.headers["x-vercel-ai-ui-message-stream"] == "v1"
    assert response.headers["content-type"].startswith("text/event-stream")
    return ui_chunks(response)


@pytest.mark.parametrize("provider", DEMO_ORDER)
def test_a_tool_loop_as_ui_message_streams(served: tuple[str, WebDemo], provider: str) -> None:
    url, _ = served
    first, second = demo_answers(provider)
    with httpx.Client(base_url=url, timeout=30) as client:
        turn1 = play(client, {"provider": provider})
        summary = next(c["data"] for c in turn1 if c["type"] == "data-laminate-summary")
        turn2 = play(client, {"continue": summary["continue"]})
    types = [c["type"] for c in turn1]
    assert types[:3] == ["start", "start-step", "data-laminate-turn"]
    assert types[-2:] == ["finish-step", "finish"]
    heading = turn1[2]["data"]
    assert (heading["provider"], heading["turn"]) == (provider, 1)
    assert summary["stopReason"] == "tool_use"
    assert summary["sentAs"] == first.stop_reason.raw

    # Each call's string values, rebuilt from laminate's marks, equal the final input;
    # each is marked finished once, after its last characters.
    for call in first.tool_uses():
        marks = [
            c["data"]
            for c in turn1
            if c["type"] == "data-laminate-args" and c["data"]["toolCallId"] == call.id
        ]
        assert all(c["transient"] for c in turn1 if c["type"].startswith("data-laminate-args"))
        values: dict[str, str] = {}
        finished: list[str] = []
        for mark in marks:
            for path, text in mark["strings"]:
                label = path_label(tuple(path))
                assert label not in finished, f"{label} grew after it was marked finished"
                values[label] = values.get(label, "") + text
            finished += [path_label(tuple(p)) for p in mark["complete"]]
        strings = {k: v for k, v in leaves(call.input.value) if isinstance(v, str)}
        assert values == strings
        assert sorted(finished) == sorted(strings)
        available = next(
            c for c in turn1 if c["type"] == "tool-input-available" and c["toolCallId"] == call.id
        )
        assert available["input"] == call.input.value
    outputs = [c["toolCallId"] for c in turn1 if c["type"] == "tool-output-available"]
    assert outputs == [call.id for call in first.tool_uses()]
    assert "continue" not in next(c for c in turn2 if c["type"] == "data-laminate-summary")["data"]
    text = "".join(c["delta"] for c in turn2 if c["type"] == "text-delta")
    assert text == second.text()
    assert turn2[-1] == {"type": "finish", "finishReason": "stop"}


def test_the_page_and_its_plan(served: tuple[str, WebDemo]) -> None:
    url, _ = served
    with httpx.Client(base_url=url) as client:
        page = client.get("/")
        assert page.headers["content-type"] == "text/html; charset=utf-8"
        assert page.content == (STATIC / "index.html").read_bytes()
        assert client.get("/app.js").headers["content-type"].startswith("text/javascript")
        assert client.get("/style.css").headers["content-type"].startswith("text/css")
        plan = client.get("/api/demo").json()
        assert plan["providers"] == DEMO_ORDER
        # The mock provider answers on the same server.
        listing = client.get("/v1/chat/completions")
        assert listing.status_code == 405


def test_nothing_on_the_page_comes_from_elsewhere() -> None:
    for name in ("index.html", "app.js", "style.css"):
        text = (STATIC / name).read_text(encoding="utf-8")
        assert not re.search(r"(https?:)?//[a-z0-9.-]+\.[a-z]{2,}/", text, re.IGNORECASE), name
        assert "@import" not in text


@pytest.mark.parametrize(
    ("request_body", "status"),
    [
        ({"provider": "gopher"}, 400),
        ({"continue": "no-such-turn"}, 400),
        ([], 400),
    ],
)
def test_a_turn_the_demo_does_not_have(
    served: tuple[str, WebDemo], request_body: Any, status: int
) -> None:
    url, _ = served
    with httpx.Client(base_url=url) as client:
        assert client.post("/api/turn", json=request_body).status_code == status
        assert client.get("/api/turn").status_code == 405


def test_a_cut_call_and_a_broken_stream(tmp_path: Path) -> None:
    (tmp_path / "openai").mkdir()
    (tmp_path / "openai" / "1-cut.sse").write_bytes(CUT_CALL)
    (tmp_path / "anthropic").mkdir()
    (tmp_path / "anthropic" / "1-broken.sse").write_bytes(BROKEN_OFF)
    with (
        web_server(tmp_path, pace=0.0) as (url, app),
        httpx.Client(base_url=url, timeout=30) as client,
    ):
        assert app.providers == ["openai", "anthropic"]
        cut = play(client, {"provider": "openai"})
        broken = play(client, {"provider": "anthropic"})
    error = next(c for c in cut if c["type"] == "tool-input-error")
    assert error["toolCallId"] == "call_cut"
    assert "cut off" in error["errorText"]
    assert not any(c["type"].startswith("tool-output") for c in cut)
    marks = [c["data"] for c in cut if c["type"] == "data-laminate-args"]
    assert [p for m in marks for p in m["complete"]] == [["path"]]  # content never finished
    assert cut[-1] == {"type": "finish", "finishReason": "length"}
    assert broken[-1]["type"] == "error"
    assert "IncompleteStreamError" in broken[-1]["errorText"]
    assert not any(c["type"] in ("finish", "tool-input-available") for c in broken)


def test_the_last_page_closing_stops_the_demo() -> None:
    closed = threading.Event()
    with (
        web_server(pace=0.0, on_close=closed.set, close_grace=0.1) as (url, _),
        httpx.Client(base_url=url) as client,
    ):
        with client.stream("GET", "/api/presence") as presence:
            assert presence.headers["content-type"].startswith("text/event-stream")
            assert not closed.wait(0.3)  # open: nothing happens
        assert closed.wait(5)


def test_stopping_ends_an_open_turn_cleanly() -> None:
    with (
        web_server(pace=0.05) as (url, app),
        httpx.Client(base_url=url, timeout=30) as client,
        client.stream("POST", "/api/turn", json={"provider": DEMO_ORDER[0]}) as turn,
    ):
        lines = turn.iter_lines()
        assert next(lines).startswith("data: ")
        app.stop()
        rest = list(lines)
    assert rest[-2] == 'data: {"type":"error","errorText":"the demo server stopped"}'


# -- the page, in Chromium ----------------------------------------------------------------


def _browser_or_skip() -> Any:
    if not Path(CHROMIUM).is_file():
        pytest.skip(f"no Chromium at {CHROMIUM} (Debian: apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("the playwright package is not installed (pip install -e '.[test]')")
    return sync_playwright


@pytest.fixture
def browser(tmp_path: Path, json_backend: str) -> Iterator[Any]:
    """A fresh headless Chromium profile (the page is the same whatever JSON backend the
    test process uses: it runs once)."""
    if json_backend != jsonlib.available()[0]:
        pytest.skip("the browser tests run once, not per JSON backend")
    sync_playwright = _browser_or_skip()
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(tmp_path / "profile"),
            executable_path=CHROMIUM,
            headless=True,
            args=CHROMIUM_FLAGS,
            viewport={"width": 1280, "height": 860},
        )
        try:
            yield context
        finally:
            context.close()


class Demo:
    """``laminate demo --web --no-open --port 0`` in a subprocess, its output read aside."""

    def __init__(self, *options: str) -> None:
        env = {**os.environ, "PYTHONIOENCODING": "utf-8", "PYTHONUNBUFFERED": "1"}
        command = [sys.executable, "-m", "laminate", "demo", "--web", "--no-open", "--port", "0"]
        self.process = subprocess.Popen(
            [*command, *options],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            env=env,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.stderr: list[str] = []
        self.readers = [
            threading.Thread(target=self._read, args=(self.process.stdout, None), daemon=True),
            threading.Thread(
                target=self._read, args=(self.process.stderr, self.stderr), daemon=True
            ),
        ]
        for reader in self.readers:
            reader.start()
        self.out: list[str] = [self.lines.get(timeout=30)]

    def _read(self, stream: IO[str] | None, into: list[str] | None) -> None:
        assert stream is not None
        for line in stream:
            if into is None:
                self.lines.put(line)
            else:
                into.append(line)

    @property
    def url(self) -> str:
        match = re.search(r"http://127\.0\.0\.1:\d+/", self.out[0])
        assert match, self.out[0]
        return match.group(0)

    def wait(self, timeout: float = 15) -> int:
        """The exit status, once the process and both readers are done."""
        status = self.process.wait(timeout=timeout)
        for reader in self.readers:
            reader.join(timeout=5)
        while not self.lines.empty():
            self.out.append(self.lines.get())
        return status

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        for reader in self.readers:
            reader.join(timeout=5)
        for pipe in (self.process.stdout, self.process.stderr):
            if pipe is not None:
                pipe.close()


@pytest.fixture
def demo() -> Iterator[Callable[..., Demo]]:
    """Starts demos; kills any still running at the end."""
    started: list[Demo] = []

    def start(*options: str) -> Demo:
        started.append(Demo(*options))
        return started[-1]

    yield start
    for process in started:
        process.close()


_READ_PAGE = """() => [...document.querySelectorAll("section.provider")].map((section) => ({
  provider: section.dataset.provider,
  heading: section.querySelector("h2").textContent,
  turns: [...section.querySelectorAll(".turn")].map((turn) => ({
    state: turn.className,
    heading: turn.querySelector("h3").textContent,
    text: [...turn.querySelectorAll(".text .content")].map((n) => n.textContent).join(""),
    reasoning: [...turn.querySelectorAll(".reasoning .content")].map((n) => n.textContent),
    cards: [...turn.querySelectorAll("article.tool")].map((card) => ({
      id: card.dataset.callId,
      name: card.dataset.name,
      state: card.className,
      fields: Object.fromEntries([...card.querySelectorAll(".field")].map((f) => [
        f.dataset.path, [f.classList.contains("done"), f.querySelector(".value").textContent],
      ])),
      result: card.querySelector(".result .output")?.textContent ?? null,
      error: card.querySelector(".result.error")?.textContent ?? null,
    })),
  })),
}))"""


def watch_console(page: Any) -> list[str]:
    problems: list[str] = []

    def console(message: Any) -> None:
        if message.type in ("error", "warning"):
            problems.append(f"{message.type}: {message.text}")

    page.on("console", console)
    page.on("pageerror", lambda error: problems.append(f"uncaught: {error}"))
    return problems


def test_the_page_in_chromium(browser: Any, demo: Any, tmp_path: Path) -> None:
    process = demo("--pace", "0.004")
    page = browser.new_page()
    problems = watch_console(page)
    page.goto(process.url)

    # Mid-stream: a tool card shows a finished argument.
    page.wait_for_selector("article.tool .field.done", timeout=30_000)
    shot = tmp_path / "mid-stream.png"
    page.screenshot(path=str(shot))
    assert shot.stat().st_size > 10_000

    page.wait_for_selector("body[data-state='done']", timeout=90_000)
    sections = page.evaluate(_READ_PAGE)
    assert [s["heading"] for s in sections] == DEMO_ORDER
    for section in sections:
        first, second = demo_answers(section["provider"])
        turn1, turn2 = section["turns"]
        assert "done" in turn1["state"]
        assert "done" in turn2["state"]
        assert turn1["heading"].startswith("turn 1 · POST ")
        assert turn1["reasoning"] == [b.text for b in first.content if isinstance(b, Reasoning)]
        assert turn1["text"] == first.text()
        calls = first.tool_uses()
        assert [c["name"] for c in turn1["cards"]] == [c.name for c in calls]
        for card, call in zip(turn1["cards"], calls, strict=True):
            assert card["id"] == call.id
            assert "ran" in card["state"]
            expected = {label: [True, shown(value)] for label, value in leaves(call.input.value)}
            assert card["fields"] == expected
            assert card["result"].endswith("(simulated)")
        assert turn2["cards"] == []
        assert turn2["text"] == second.text()
    assert page.inner_text("#status").endswith("one event stream.")
    assert problems == []

    process.process.send_signal(signal.SIGINT)
    assert process.wait() == 0
    assert "Traceback" not in "".join(process.stderr), process.stderr
    assert process.out[-1].strip() == "stopping"
    assert any(line.startswith(f"{DEMO_ORDER[0]} · turn 1: ") for line in process.out)


def test_a_cut_call_on_the_page(browser: Any, tmp_path: Path) -> None:
    (tmp_path / "openai").mkdir()
    (tmp_path / "openai" / "1-cut.sse").write_bytes(CUT_CALL)
    (tmp_path / "anthropic").mkdir()
    (tmp_path / "anthropic" / "1-broken.sse").write_bytes(BROKEN_OFF)
    page = browser.new_page()
    problems = watch_console(page)
    with web_server(tmp_path, pace=0.0) as (url, _):
        page.goto(url)
        page.wait_for_selector("body[data-state='done']", timeout=30_000)
        sections = page.evaluate(_READ_PAGE)
        page.screenshot(path=str(tmp_path / "cut.png"))
        page.close()
    (cut,) = sections[0]["turns"][0]["cards"]
    assert "cut" in cut["state"]
    # The argument that finished stays finished; the one cut mid-way is never shown finished.
    assert cut["fields"] == {"path": [True, "notes.txt"], "content": [False, "Dear team, th"]}
    assert cut["error"].startswith("✗ cut off: the response hit its token limit")
    assert cut["result"] is None
    (broken,) = sections[1]["turns"][0]["cards"]
    assert "cut" in broken["state"]
    assert broken["fields"] == {"command": [False, "python -m doc"]}
    assert "failed" in sections[1]["turns"][0]["state"]
    assert problems == []


def test_closing_the_page_stops_the_demo(browser: Any, demo: Any) -> None:
    process = demo("--pace", "0.004")
    page = browser.new_page()
    page.goto(process.url)
    page.wait_for_selector("article.tool", timeout=30_000)
    page.close()
    assert process.wait() == 0
    assert "Traceback" not in "".join(process.stderr), process.stderr
    assert process.out[-1].strip() == "the page was closed: stopping"
