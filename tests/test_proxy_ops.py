"""The gateway as a team runs it: health, readiness, metrics, the log line, draining on
SIGTERM, reloading on SIGHUP and ``POST /admin/reload``, a misspelled configuration key,
the Dockerfile.

The process tests start ``laminate proxy --config FILE`` as a real process (one worker and
two) in front of the scripted backend (``tests/scripted_backend.py``, strict as the real
APIs, its streams paced so that one is still running when the proxy is signalled), and
talk to it with the official SDKs.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import anthropic
import httpx
import openai
import pytest
from starlette.routing import Route

from laminate._proxy.counting import Exchange
from laminate._proxy.metrics import Metrics
from laminate.proxy import (
    Backend,
    ConfigError,
    ProxyConfig,
    Timeouts,
    app,
    config_from_toml,
    proxy_server,
)

from .scripted_backend import ScriptedBackend, scripted_backend

ROOT = Path(__file__).resolve().parent.parent
ADMIN = "admin-secret-for-tests"
PACE = 0.12  # seconds between two chunks of a scripted stream
LONG = " ".join(f"word{n}" for n in range(16))  # a stream of about two seconds


def once(json_backend: str) -> None:
    if json_backend != "stdlib":
        pytest.skip("a proxy process does not follow the tests' JSON backend; run once")


@pytest.fixture(scope="module")
def backend() -> Iterator[tuple[str, ScriptedBackend]]:
    with scripted_backend(pace=PACE) as found:
        yield found


def _config(path: Path, backend_url: str, model: str, **top: Any) -> Path:
    lines = [f"{key} = {json.dumps(value)}" for key, value in top.items()]
    lines += [
        "[[backend]]",
        'api = "openai"',
        f'base_url = "{backend_url}/v1"',
        f'models = {{ "m" = "{model}" }}',
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Running:
    """A proxy process: its URL, its port, the process, its standard error's lines."""

    url: str
    port: int
    process: subprocess.Popen[str]
    errors: list[str] = field(default_factory=list)

    def wait_for(self, pattern: str, count: int = 1, timeout: float = 10) -> None:
        deadline = time.monotonic() + timeout
        while sum(pattern in line for line in self.errors) < count:
            assert time.monotonic() < deadline, f"no {pattern!r} in {self.errors}"
            time.sleep(0.05)


@contextmanager
def running_proxy(config: Path, workers: int = 1) -> Iterator[Running]:
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "ADMIN_KEY": ADMIN}
    process = subprocess.Popen(
        [
            sys.executable, "-m", "laminate", "proxy", "--config", str(config),
            "--port", str(port), "--workers", str(workers),
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its workers too are stopped at the end
    )  # fmt: skip
    found = Running(f"http://127.0.0.1:{port}", port, process)

    def read() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            found.errors.append(line.rstrip("\n"))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(found.url + "/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert process.poll() is None, f"the proxy did not start: {found.errors}"
            assert time.monotonic() < deadline, "the proxy did not start in time"
            time.sleep(0.05)
        yield found
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=10)
        with contextlib.suppress(ProcessLookupError):  # workers left behind by a failure
            os.killpg(process.pid, signal.SIGKILL)
        reader.join(timeout=5)
        assert process.stderr is not None
        process.stderr.close()


class Stream(threading.Thread):
    """A streamed chat through the openai SDK, read in a thread: ``begun`` is set at its
    first piece of text."""

    def __init__(self, url: str, prompt: str = LONG) -> None:
        super().__init__(daemon=True)
        self.url = url
        self.prompt = prompt
        self.begun = threading.Event()
        self.text = ""
        self.failure: BaseException | None = None

    def run(self) -> None:
        client = openai.OpenAI(base_url=self.url + "/v1", api_key="unused", max_retries=0)
        try:
            stream = client.chat.completions.create(
                model="m", messages=[{"role": "user", "content": self.prompt}], stream=True
            )
            with stream:
                for chunk in stream:
                    if chunk.choices and chunk.choices[0].delta.content:
                        self.text += chunk.choices[0].delta.content
                        self.begun.set()
        except BaseException as exc:
            self.failure = exc
        finally:
            client.close()

    def started(self) -> Stream:
        self.start()
        assert self.begun.wait(10), f"the stream did not begin: {self.failure!r}"
        return self

    def finished(self) -> None:
        self.join(30)
        assert not self.is_alive()
        assert self.failure is None, repr(self.failure)
        assert self.text == f"echo: {self.prompt}"


def _asked(scripted: ScriptedBackend, prompt: str) -> str:
    """The model the backend was asked for with ``prompt``, the last time."""
    for _, _, body, _ in reversed(scripted.record.requests):
        if json.dumps(prompt) in json.dumps(body["messages"]):
            return str(body["model"])
    raise AssertionError(f"the backend never saw {prompt!r}")


def _peer(scripted: ScriptedBackend, prompt: str) -> tuple[str, int]:
    """The address the backend was asked from with ``prompt`` (the proxy's connection)."""
    record = scripted.record
    for (_, _, body, _), peer in zip(
        reversed(record.requests), reversed(record.peers), strict=False
    ):
        if json.dumps(prompt) in json.dumps(body["messages"]):
            return peer
    raise AssertionError(f"the backend never saw {prompt!r}")


def _connected(local: int, remote: int) -> bool:
    """Whether a loopback TCP connection from port ``local`` to port ``remote`` is open
    (read from Linux's /proc/net/tcp)."""
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        mine, theirs, state = fields[1], fields[2], fields[3]
        if int(mine.split(":")[1], 16) == local and int(theirs.split(":")[1], 16) == remote:
            return state == "01"  # ESTABLISHED
    return False


def _ask(url: str, prompt: str) -> str:
    """A complete answer through the anthropic SDK (translated for the backend)."""
    with anthropic.Anthropic(base_url=url, api_key="unused", max_retries=0) as client:
        message = client.messages.create(
            model="m", max_tokens=50, messages=[{"role": "user", "content": prompt}]
        )
    block = message.content[0]
    assert block.type == "text"
    return block.text


def _reload(url: str, **headers: str) -> httpx.Response:
    return httpx.post(url + "/admin/reload", headers=headers, timeout=10)


# -- the exposition format ----------------------------------------------------------------

_SAMPLE = re.compile(r'^([a-z_]+)(?:\{((?:[a-z_]+="(?:[^"\\]|\\.)*",?)*)\})? (\S+)$')


def parse_exposition(text: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    """Prometheus' text format, read strictly: every line a comment, a sample, or empty;
    each sample's family announced by ``# TYPE`` first."""
    samples: dict[tuple[str, frozenset[tuple[str, str]]], float] = {}
    typed: set[str] = set()
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ")
            assert kind in ("counter", "gauge", "histogram"), line
            typed.add(name)
            continue
        if line.startswith("# HELP ") or not line:
            continue
        match = _SAMPLE.match(line)
        assert match, f"not a sample: {line!r}"
        name, labels, value = match.groups()
        family = re.sub(r"_(bucket|sum|count)$", "", name)
        assert name in typed or family in typed, f"{name} before its # TYPE"
        pairs = re.findall(r'([a-z_]+)="((?:[^"\\]|\\.)*)"', labels or "")
        samples[(name, frozenset(pairs))] = float(value)
    assert text.endswith("\n")
    return samples


def total(
    samples: dict[tuple[str, frozenset[tuple[str, str]]], float], name: str, **labels: str
) -> float:
    wanted = set(labels.items())
    return sum(v for (n, pairs), v in samples.items() if n == name and wanted <= pairs)


def test_the_metrics_count_what_each_exchange_says(json_backend: str) -> None:
    metrics = Metrics()
    for status, retries in ((200, 0), (200, 2), (429, 1)):
        exchange = Exchange("anthropic")
        exchange.client_name, exchange.backend, exchange.backend_model = 'a"b\\c', "local", "qwen"
        exchange.status, exchange.retries, exchange.fallbacks = status, retries, 1
        exchange.first_byte = exchange.started + 0.2
        exchange.usage(None)
        exchange.input_tokens, exchange.output_tokens, exchange.cache_read_tokens = 10, 5, 4
        metrics.open_streams += 1
        metrics.record(exchange, exchange.started + 3.0)
    samples = parse_exposition(metrics.exposition())
    assert total(samples, "laminate_requests_total", status="200", api="anthropic") == 2
    assert total(samples, "laminate_requests_total", client='a\\"b\\\\c', model="qwen") == 3
    assert total(samples, "laminate_input_tokens_total") == 30
    assert total(samples, "laminate_cache_read_tokens_total") == 12
    assert total(samples, "laminate_cache_write_tokens_total") == 0
    assert total(samples, "laminate_retries_total", backend="local") == 3
    assert total(samples, "laminate_fallbacks_total") == 3
    assert total(samples, "laminate_open_streams") == 3
    ttfb = "laminate_time_to_first_byte_seconds"
    assert total(samples, ttfb + "_bucket", le="0.1") == 0
    assert total(samples, ttfb + "_bucket", le="0.25") == 3
    assert total(samples, ttfb + "_bucket", le="+Inf") == 3
    assert total(samples, ttfb + "_count") == 3
    assert total(samples, ttfb + "_sum") == pytest.approx(0.6)
    duration = "laminate_request_duration_seconds"
    assert total(samples, duration + "_bucket", le="2.5") == 0
    assert total(samples, duration + "_bucket", le="5.0") == 3


def test_the_metrics_sum_every_workers_file(tmp_path: Path, json_backend: str) -> None:
    mine, other = Metrics(str(tmp_path)), Metrics(str(tmp_path))
    for metrics, n in ((mine, 2), (other, 3)):
        for _ in range(n):
            exchange = Exchange("openai")
            exchange.status = 200
            metrics.record(exchange, exchange.started + 0.01)
    other.open_streams = 4
    other.flush()
    # The other worker's file, under a pid that is alive (this process's parent) and one
    # that is not: counters from both, the open streams from the live one only.
    data = json.loads((tmp_path / f"{os.getpid()}.json").read_text())
    (tmp_path / f"{os.getpid()}.json").unlink()
    for pid in (os.getppid(), 2**22 + 1):
        (tmp_path / f"{pid}.json").write_text(json.dumps({**data, "pid": pid}))
    samples = parse_exposition(mine.exposition())
    assert total(samples, "laminate_requests_total") == 2 + 3 + 3
    assert total(samples, "laminate_request_duration_seconds_count") == 8
    assert total(samples, "laminate_open_streams") == 4


# -- the log line ---------------------------------------------------------------------------


def test_the_log_line_names_the_request_and_the_backends_error(
    backend: tuple[str, ScriptedBackend], json_backend: str
) -> None:
    once(json_backend)
    lines: list[str] = []
    config = ProxyConfig(
        backends=(
            Backend("openai", backend[0] + "/v1", models={"m": "to-openai", "busy": "fail-429"}),
        ),
        timeouts=Timeouts(connect=10, read=60, idle=60),
        log=lines.append,
    )
    with proxy_server(config) as url:
        assert _ask(url, "a prompt that stays out of the log") == (
            "echo: a prompt that stays out of the log"
        )
        client = openai.OpenAI(base_url=url + "/v1", api_key="unused", max_retries=0)
        with pytest.raises(openai.RateLimitError):
            client.chat.completions.create(
                model="busy", messages=[{"role": "user", "content": "another prompt"}]
            )
        client.close()
    good, busy = (json.loads(line) for line in lines[-2:])
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", good["time"])
    assert (good["method"], good["path"], good["api"]) == ("POST", "/v1/messages", "anthropic")
    assert (good["client_model"], good["backend"], good["backend_model"]) == (
        "m",
        "openai",
        "to-openai",
    )
    assert good["client_name"] is None
    assert (good["status"], good["error"], good["retries"], good["fallbacks"]) == (200, None, 0, 0)
    assert (good["input_tokens"], good["output_tokens"]) == (11, 7)
    assert {"cache_read_tokens", "cache_write_tokens"} <= set(good)
    assert 0 < good["ttfb_ms"] <= good["duration_ms"]
    assert (busy["status"], busy["path"], busy["backend_model"]) == (
        429,
        "/v1/chat/completions",
        "fail-429",
    )
    assert busy["error"] == "HTTP 429: scripted 429"
    assert "prompt" not in "".join(lines)


# -- health, readiness, metrics and reload in the app ---------------------------------------


@pytest.mark.anyio
async def test_ready_says_draining_once_the_server_drains(json_backend: str) -> None:
    config = ProxyConfig(backends=(Backend("openai", "http://127.0.0.1:9/v1"),))
    asgi = app(config)
    transport = httpx.ASGITransport(app=asgi)
    async with httpx.AsyncClient(transport=transport, base_url="http://proxy") as client:
        assert (await client.get("/health")).json() == {"status": "ok"}
        assert (await client.get("/ready")).status_code == 200
        assert (await client.get("/metrics")).headers["content-type"].startswith("text/plain")
        # Without admin_key_env, reload over HTTP is off.
        assert (await client.post("/admin/reload")).status_code == 403
        ready = next(r for r in asgi.routes if isinstance(r, Route) and r.path == "/ready")
        cast(Any, ready.endpoint).__self__.drain()  # what the server's SIGTERM handler calls
        answer = await client.get("/ready")
        assert (answer.status_code, answer.json()) == (503, {"status": "draining"})
        assert (await client.get("/health")).status_code == 200


# -- configuration --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "wrong", "right"),
    [
        ('admin_keyenv = "X"\n', "admin_keyenv", "admin_key_env"),
        ("[timeouts]\nreed = 5\n", "reed", "read"),
        ("[timeout]\nread = 5\n", "timeout", "timeouts"),
        ('[[backend]]\napi = "openai"\nbase_ur = "http://h/v1"\n', "base_ur", "base_url"),
        (
            '[[backend]]\napi = "openai"\nbase_url = "http://h/v1"\nmodel_s = {}\n',
            "model_s",
            "models",
        ),
    ],
)
def test_an_unknown_key_is_named_with_the_closest_known_one(
    tmp_path: Path, text: str, wrong: str, right: str, json_backend: str
) -> None:
    path = tmp_path / "proxy.toml"
    backend = '\n[[backend]]\napi = "openai"\nbase_url = "http://h/v1"\n'
    path.write_text(text + ("" if "[[backend]]" in text else backend), encoding="utf-8")
    with pytest.raises(ConfigError, match=f"unknown key '{wrong}'.*did you mean '{right}'"):
        config_from_toml(path, {"X": "x"})


def test_drain_and_the_admin_key_come_from_the_file(tmp_path: Path, json_backend: str) -> None:
    path = _config(tmp_path / "p.toml", "http://h", "x", admin_key_env="ADMIN_KEY", drain=30)
    config = config_from_toml(path, {"ADMIN_KEY": ADMIN})
    assert (config.admin_key, config.drain) == (ADMIN, 30)
    assert ADMIN not in repr(config)
    assert config_from_toml(_config(path, "http://h", "x"), {}).drain == 600
    with pytest.raises(ConfigError, match="drain"):
        config_from_toml(_config(path, "http://h", "x", drain="long"), {})


@pytest.mark.slow
def test_the_command_line_says_which_key_is_misspelled(tmp_path: Path, json_backend: str) -> None:
    path = tmp_path / "proxy.toml"
    path.write_text('[[backend]]\napi = "openai"\nbase_url = "http://h/v1"\nkey_evn = "K"\n')
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run(
        [sys.executable, "-m", "laminate", "proxy", "--config", str(path)],
        env=env,
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0
    assert "unknown key 'key_evn'" in done.stderr
    assert "did you mean 'key_env'" in done.stderr


# -- real processes ---------------------------------------------------------------------------


def _refused(port: int, timeout: float = 3) -> bool:
    """Whether a new connection to ``port`` is refused within ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                pass
        except ConnectionRefusedError:
            return True
        except OSError:
            pass
        time.sleep(0.02)
    return False


def _get(sock: socket.socket, path: str) -> bytes:
    """One GET on a kept-alive connection: the whole answer (b"" when it was closed)."""
    sock.sendall(f"GET {path} HTTP/1.1\r\nhost: proxy\r\n\r\n".encode())
    received = b""
    while b"\r\n\r\n" not in received:
        piece = sock.recv(4096)
        if not piece:
            return received
        received += piece
    head, _, body = received.partition(b"\r\n\r\n")
    length = int(re.search(rb"content-length: (\d+)", head, re.IGNORECASE)[1])  # type: ignore[index]
    while len(body) < length:
        piece = sock.recv(4096)
        if not piece:
            break
        body += piece
    return head + b"\r\n\r\n" + body


def _drains(running: Running, kept: socket.socket, workers: int = 1) -> None:
    """SIGTERM with a stream in flight: new connections are refused while it runs, it
    ends whole, and the process exits."""
    stream = Stream(running.url).started()
    assert _get(kept, "/health").startswith(b"HTTP/1.1 200")
    running.process.send_signal(signal.SIGTERM)
    running.wait_for("draining: ", count=workers)
    # A request that still reaches a draining worker is told so: /ready is never 200.
    try:
        answer = _get(kept, "/ready")
    except OSError:  # closed as idle
        answer = b""
    assert answer == b"" or answer.startswith(b"HTTP/1.1 503"), answer
    assert _refused(running.port)
    assert stream.is_alive(), "the stream ended before new connections were refused"
    stream.finished()
    assert running.process.wait(timeout=15) == 0, running.errors


@pytest.mark.slow
def test_one_worker_reloads_and_drains_with_a_stream_in_flight(
    tmp_path: Path, backend: tuple[str, ScriptedBackend], json_backend: str
) -> None:
    once(json_backend)
    url, scripted = backend
    path = _config(tmp_path / "p.toml", url, "old-model", admin_key_env="ADMIN_KEY")
    with running_proxy(path) as running:
        assert httpx.get(running.url + "/ready").status_code == 200
        assert httpx.get(running.url + "/metrics").status_code == 401
        assert _reload(running.url).status_code == 401
        assert _reload(running.url, authorization="Bearer wrong").status_code == 401
        # POST /admin/reload while a stream runs: it ends on the old configuration.
        stream = Stream(running.url).started()
        assert _ask(running.url, "before") == "echo: before"  # an idle connection after
        assert _asked(scripted, "before") == "old-model"
        _config(path, url, "new-model", admin_key_env="ADMIN_KEY")
        answer = _reload(running.url, authorization=f"Bearer {ADMIN}")
        assert answer.json() == {"status": "reloaded"}
        assert _ask(running.url, "after") == "echo: after"
        assert _asked(scripted, "after") == "new-model"
        assert stream.is_alive()
        stream.finished()
        assert _asked(scripted, LONG) == "old-model"
        # The new configuration has its own connection pool, kept from one request on;
        # the old one's is closed once its last stream ended.
        _ask(running.url, "after again")
        assert _peer(scripted, "after") == _peer(scripted, "after again")
        assert _peer(scripted, "after") != _peer(scripted, "before")
        if Path("/proc/net/tcp").exists():
            backend_port = int(url.rsplit(":", 1)[1])
            _eventually(lambda: not _connected(_peer(scripted, "before")[1], backend_port))
            assert _connected(_peer(scripted, "after")[1], backend_port)

        # An invalid file is refused, and the configuration kept.
        path.write_text(path.read_text().replace("base_url", "base_uri"))
        answer = _reload(running.url, **{"x-api-key": ADMIN})
        assert answer.status_code == 400
        assert "did you mean 'base_url'" in answer.json()["error"]["message"]
        assert _ask(running.url, "kept") == "echo: kept"
        assert _asked(scripted, "kept") == "new-model"

        # SIGHUP while a stream runs.
        stream = Stream(running.url).started()
        _config(path, url, "third-model", admin_key_env="ADMIN_KEY")
        running.process.send_signal(signal.SIGHUP)
        running.wait_for("reloaded the configuration", count=2)
        assert _ask(running.url, "hup") == "echo: hup"
        assert _asked(scripted, "hup") == "third-model"
        stream.finished()

        path.write_text("[[backend]]\n")
        running.process.send_signal(signal.SIGHUP)
        running.wait_for("reload refused")
        assert _ask(running.url, "still") == "echo: still"
        assert _asked(scripted, "still") == "third-model"

        samples = parse_exposition(
            httpx.get(running.url + "/metrics", headers={"x-api-key": ADMIN}).text
        )
        assert total(samples, "laminate_requests_total", status="200") == 8
        with socket.create_connection(("127.0.0.1", running.port)) as kept:
            _drains(running, kept)


@pytest.mark.slow
def test_two_workers_count_together_reload_and_drain(
    tmp_path: Path, backend: tuple[str, ScriptedBackend], json_backend: str
) -> None:
    once(json_backend)
    url, scripted = backend
    path = _config(tmp_path / "p.toml", url, "old-model", drain=30)
    with running_proxy(path, workers=2) as running:
        n = 12
        for k in range(n):  # each on a new connection: both workers answer some
            assert _ask(running.url, f"count {k}") == f"echo: count {k}"

        def counted() -> float:
            samples = parse_exposition(httpx.get(running.url + "/metrics").text)
            return total(samples, "laminate_requests_total", api="anthropic", status="200")

        # Whichever worker answers: the other's counts reach it within half a second.
        _eventually(lambda: all(counted() == n for _ in range(6)))

        stream = Stream(running.url).started()
        _config(path, url, "new-model", drain=30)
        running.process.send_signal(signal.SIGHUP)
        running.wait_for("reloaded the configuration", count=2)  # one line per worker
        for k in range(6):
            _ask(running.url, f"after {k}")
            assert _asked(scripted, f"after {k}") == "new-model"
        stream.finished()
        assert _asked(scripted, LONG) == "old-model"

        # A worker started in place of one that died serves the reloaded configuration:
        # asked until it answered one (its metrics file, named by its pid, shows it).
        if Path(f"/proc/{running.process.pid}").exists():
            first = _workers(running.process.pid)
            os.kill(first[0], signal.SIGKILL)
            _eventually(lambda: len(set(_workers(running.process.pid)) - set(first)) == 1)
            (new,) = set(_workers(running.process.pid)) - set(first)
            environ = Path(f"/proc/{new}/environ").read_bytes().decode().split("\0")
            directory = dict(item.split("=", 1) for item in environ if "=" in item)
            answered = Path(directory["LAMINATE_PROXY_METRICS"], f"{new}.json")
            k = 0
            while not answered.exists():
                assert k < 100, "the new worker answered nothing"
                _ask(running.url, f"again {k}")
                assert _asked(scripted, f"again {k}") == "new-model"
                k += 1
                time.sleep(0.05)

        # POST /admin/reload reaches one worker, which has every worker reload.
        _config(path, url, "third-model", drain=30, admin_key_env="ADMIN_KEY")
        assert _reload(running.url).status_code == 403  # no admin key in the running file
        running.process.send_signal(signal.SIGHUP)
        running.wait_for("reloaded the configuration", count=4)
        path.write_text(path.read_text().replace("drain", "drian"))
        answer = _reload(running.url, authorization=f"Bearer {ADMIN}")
        assert "did you mean 'drain'" in answer.json()["error"]["message"]
        _config(path, url, "fourth-model", drain=30, admin_key_env="ADMIN_KEY")
        assert _reload(running.url, authorization=f"Bearer {ADMIN}").status_code == 200
        running.wait_for("reloaded the configuration", count=6)
        for k in range(6):
            _ask(running.url, f"fourth {k}")
            assert _asked(scripted, f"fourth {k}") == "fourth-model"

        with socket.create_connection(("127.0.0.1", running.port)) as kept:
            _drains(running, kept, workers=2)


def _workers(parent: int) -> list[int]:
    """The worker processes of the proxy process ``parent`` (Linux)."""
    children = Path(f"/proc/{parent}/task/{parent}/children").read_text().split()
    found = []
    for child in map(int, children):
        with contextlib.suppress(OSError):
            if b"spawn_main" in Path(f"/proc/{child}/cmdline").read_bytes():
                found.append(child)
    return found


def _eventually(check: Callable[[], bool], timeout: float = 5) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "not in time"
        time.sleep(0.1)


# -- the image --------------------------------------------------------------------------------


def test_the_dockerfile_runs_the_proxy_as_a_user_with_its_extra(json_backend: str) -> None:
    text = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    instructions = [
        line.split(None, 1)
        for line in text.replace("\\\n", " ").splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    by_name: dict[str, list[str]] = {}
    for name, *rest in instructions:
        by_name.setdefault(name.upper(), []).append(rest[0].strip() if rest else "")
    assert re.fullmatch(r"python:[\w.-]*slim[\w.-]*", by_name["FROM"][0])
    users = by_name["USER"]
    assert users[-1].split(":")[0] not in ("root", "0")
    # The package is installed with its extras, named in the RUN or in the ARG it reads.
    arguments = dict(a.split("=", 1) for a in by_name.get("ARG", []) if "=" in a)
    installs = [
        re.sub(r"\$\{(\w+)\}", lambda m: arguments.get(m[1], ""), run) for run in by_name["RUN"]
    ]
    assert any(re.search(r"pip install \S*\[[^\]]*\bproxy\b", run) for run in installs)
    assert json.loads(by_name["ENTRYPOINT"][-1]) == ["laminate", "proxy"]
    command = json.loads(by_name["CMD"][-1])
    assert command[command.index("--host") + 1] == "0.0.0.0"
    assert "--config" in command
    assert by_name["EXPOSE"] == ["8082"]
    assert "/health" in by_name["HEALTHCHECK"][-1]
    assert "curl" not in by_name["HEALTHCHECK"][-1]
    assert by_name["STOPSIGNAL"] == ["SIGTERM"]


def test_a_worker_gets_every_field_of_the_configuration(json_backend: str) -> None:
    from laminate._proxy.serve import _dump, _load
    from laminate.proxy import Backend, Client, ProxyConfig, Retry, Timeouts

    once(json_backend)
    config = ProxyConfig(
        backends=(
            Backend(
                "openai",
                "http://a/v1",
                keys=("k1", "k2"),
                models={"claude-*": "qwen"},
                fallbacks=("cloud",),
                retries=2,
                max_tokens=4096,
                drop=("temperature",),
            ),
            Backend("anthropic", "http://b", key="kb", name="cloud", model="claude-x"),
        ),
        api_key="shared",
        admin_key="admin",
        max_request_bytes=1234,
        timeouts=Timeouts(connect=1, read=2, idle=3),
        retry=Retry(base=0.5, max=4),
        keepalive=7,
        drain=9,
        clients=(Client("alice", "alice-key", models=("claude-*",), requests_per_minute=5),),
        state="sqlite:/tmp/limits.sqlite",
        state_failure="closed",
    )
    again = _load(_dump(config))
    assert again == config
    assert again.route("claude-3") == config.route("claude-3")
