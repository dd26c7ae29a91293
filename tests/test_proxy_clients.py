"""The proxy's clients (``[[client]]``): their own keys, the models each may use, and
their limits per minute, counted in the process, in a SQLite file shared by processes,
or in a real Redis shared by two proxies (``redis-server``, started here on a free port).

The clients are the official SDKs (max_retries=0) against the scripted backend
(``tests/scripted_backend.py``), which answers every request with usage: 11 input and 7
output tokens for a one-word conversation.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from laminate._apis.registry import APIS
from laminate._proxy import limits as limits_module
from laminate._proxy.limits import MemoryLimits, Over, RedisLimits, SqliteLimits, open_limits
from laminate.proxy import (
    Backend,
    Client,
    ConfigError,
    ProxyConfig,
    config_from_toml,
    proxy_server,
)

from .scripted_backend import ScriptedBackend, scripted_backend
from .sdk_clients import KEY, tool_loop

ROOT = Path(__file__).resolve().parent.parent
APIS_TRIED = ("openai", "openai-responses", "anthropic", "gemini", "ollama", "cohere")
REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"
WORD: Any = {"max_tokens": 9, "messages": [{"role": "user", "content": "hi"}]}
TOKENS = 18  # what the scripted backend reports for WORD: 11 in, 7 out


@pytest.fixture(autouse=True)
def _once(json_backend: str) -> None:
    if json_backend != "stdlib":
        pytest.skip("the proxy's clients do not depend on the JSON backend; run once")


@pytest.fixture(scope="module")
def backend() -> Iterator[tuple[str, ScriptedBackend]]:
    with scripted_backend(pace=0.0) as found:
        yield found


def _backend(url: str, api: str) -> Backend:
    http = APIS[api].http
    assert http is not None
    return Backend(api, url + http.base_path, models={f"to-{api}": f"to-{api}"})


def _backends(url: str) -> tuple[Backend, ...]:
    return tuple(_backend(url, api) for api in APIS_TRIED)


def _config(url: str, *clients: Client, **options: Any) -> ProxyConfig:
    return ProxyConfig(backends=_backends(url), clients=clients, **options)


def _ask(base: str, key: str | None, model: str = "to-anthropic") -> httpx.Response:
    headers = {} if key is None else {"x-api-key": key}
    return httpx.post(
        base + "/v1/messages", json={"model": model, **WORD}, headers=headers, timeout=60
    )


# -- keys, models --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def lines() -> list[str]:
    return []


@pytest.fixture(scope="module")
def team(backend: tuple[str, ScriptedBackend], lines: list[str]) -> Iterator[str]:
    config = _config(
        backend[0],
        Client("alice", KEY),
        Client("bob", "bob-key", models=("to-open*", "to-gem?ni")),
        api_key="shared-key",
        log=lines.append,
    )
    with proxy_server(config) as url:
        yield url


@pytest.mark.parametrize("api", APIS_TRIED)
def test_a_clients_key_works_in_its_apis_header_with_the_official_sdk(
    team: str, lines: list[str], api: str
) -> None:
    before = len(lines)
    args, text = tool_loop(api, team, f"to-{api}", "Oslo", False)
    assert args == {"city": "Oslo"}
    assert text == "The tool said: sunny in Oslo"
    names = [json.loads(line)["client_name"] for line in lines[before:]]
    assert names == ["alice", "alice"]


def test_an_unknown_key_is_a_401_for_each_sdk(team: str) -> None:
    import anthropic
    import openai
    from google import genai
    from google.genai import errors, types

    with pytest.raises(anthropic.AuthenticationError):
        anthropic.Anthropic(base_url=team, api_key="nobody", max_retries=0).messages.create(
            model="to-anthropic", **WORD
        )
    with pytest.raises(openai.AuthenticationError):
        openai.OpenAI(
            base_url=team + "/v1", api_key="nobody", max_retries=0
        ).chat.completions.create(model="to-openai", messages=[{"role": "user", "content": "hi"}])
    client = genai.Client(api_key="nobody", http_options=types.HttpOptions(base_url=team))
    with pytest.raises(errors.ClientError) as caught:
        client.models.generate_content(model="to-gemini", contents="hi")
    assert caught.value.code == 401


def test_the_single_api_key_still_works_beside_the_clients(team: str, lines: list[str]) -> None:
    before = len(lines)
    assert _ask(team, "shared-key").status_code == 200
    assert json.loads(lines[before])["client_name"] is None
    assert _ask(team, None).status_code == 401


def test_a_model_outside_a_clients_patterns_is_a_403_in_each_sdks_shape(
    team: str, lines: list[str]
) -> None:
    import anthropic
    import openai
    from google import genai
    from google.genai import errors, types

    anthropic_client = anthropic.Anthropic(base_url=team, api_key="bob-key", max_retries=0)
    with pytest.raises(anthropic.PermissionDeniedError) as refused:
        anthropic_client.messages.create(model="to-anthropic", **WORD)
    assert refused.value.body["error"]["type"] == "permission_error"  # type: ignore[index]
    assert "bob" in refused.value.message
    assert "to-anthropic" in refused.value.message
    chat = openai.OpenAI(base_url=team + "/v1", api_key="bob-key", max_retries=0)
    answer = chat.chat.completions.create(
        model="to-openai", messages=[{"role": "user", "content": "hi"}]
    )
    assert answer.choices[0].message.content == "echo: hi"
    with pytest.raises(openai.PermissionDeniedError):
        chat.chat.completions.create(
            model="to-anthropic", messages=[{"role": "user", "content": "hi"}]
        )
    gemini = genai.Client(api_key="bob-key", http_options=types.HttpOptions(base_url=team))
    assert gemini.models.generate_content(model="to-gemini", contents="hi").text == "echo: hi"
    with pytest.raises(errors.ClientError) as caught:
        gemini.models.generate_content(model="to-gemini-2", contents="hi")
    assert caught.value.code == 403
    assert caught.value.status == "PERMISSION_DENIED"
    assert json.loads(lines[-1])["status"] == 403


def test_count_tokens_checks_the_clients_key_and_models(team: str) -> None:
    body = {"model": "to-anthropic", "messages": WORD["messages"]}
    url = team + "/v1/messages/count_tokens"
    assert httpx.post(url, json=body, headers={"x-api-key": KEY}, timeout=60).status_code == 200
    assert httpx.post(url, json=body, headers={"x-api-key": "x"}, timeout=60).status_code == 401
    refused = httpx.post(url, json=body, headers={"x-api-key": "bob-key"}, timeout=60)
    assert refused.status_code == 403
    assert refused.json()["error"]["type"] == "permission_error"


# -- limits --------------------------------------------------------------------------------


def _retry_after(answer: Any) -> int:
    return int(answer.headers["retry-after"])


def test_over_requests_per_minute_is_a_429_with_retry_after(
    backend: tuple[str, ScriptedBackend],
) -> None:
    import anthropic
    import openai

    config = _config(backend[0], Client("carol", KEY, requests_per_minute=2))
    with proxy_server(config) as url:
        client = anthropic.Anthropic(base_url=url, api_key=KEY, max_retries=0)
        for _ in range(2):
            client.messages.create(model="to-anthropic", **WORD)
        with pytest.raises(anthropic.RateLimitError) as refused:
            client.messages.create(model="to-anthropic", **WORD)
        assert refused.value.body["error"]["type"] == "rate_limit_error"  # type: ignore[index]
        assert "2 requests a minute" in refused.value.message
        assert 1 <= _retry_after(refused.value.response) <= 30
        chat = openai.OpenAI(base_url=url + "/v1", api_key=KEY, max_retries=0)
        with pytest.raises(openai.RateLimitError) as again:
            chat.chat.completions.create(
                model="to-openai", messages=[{"role": "user", "content": "hi"}]
            )
        assert 1 <= _retry_after(again.value.response) <= 30


def test_over_tokens_per_minute_is_a_429_once_the_answers_tokens_are_counted(
    backend: tuple[str, ScriptedBackend],
) -> None:
    import anthropic

    # 30 tokens a minute: the first answer's 18 leave room, the second's take it past.
    config = _config(backend[0], Client("dave", KEY, tokens_per_minute=30))
    with proxy_server(config) as url:
        client = anthropic.Anthropic(base_url=url, api_key=KEY, max_retries=0)
        client.messages.create(model="to-anthropic", **WORD)
        with client.messages.stream(model="to-anthropic", **WORD) as events:
            assert events.get_final_message().usage.output_tokens == 7
        with pytest.raises(anthropic.RateLimitError) as refused:
            client.messages.create(model="to-anthropic", **WORD)
        assert "30 tokens a minute" in refused.value.message
        # 36 tokens counted, 30 a minute: room again in about 12 seconds.
        assert 1 <= _retry_after(refused.value.response) <= 13


def test_a_clients_limit_is_not_anothers(backend: tuple[str, ScriptedBackend]) -> None:
    config = _config(
        backend[0], Client("erin", "erin-key", requests_per_minute=1), Client("frank", "frank-key")
    )
    with proxy_server(config) as url:
        assert _ask(url, "erin-key").status_code == 200
        assert _ask(url, "erin-key").status_code == 429
        assert [_ask(url, "frank-key").status_code for _ in range(3)] == [200, 200, 200]


def _seen(over: Over | None) -> Any:
    return None if over is None else (over.limit, over.seconds)


class _Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def time(self) -> float:
        return self.now


@pytest.mark.anyio
@pytest.mark.parametrize("store", ["memory", "sqlite", "sqlite-before-3.35"])
async def test_a_bucket_lets_a_burst_through_then_one_request_per_share_of_the_minute(
    store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = _Clock()
    monkeypatch.setattr(limits_module, "time", clock)
    if store == "sqlite-before-3.35":  # no RETURNING: a transaction instead
        monkeypatch.setattr(limits_module, "_RETURNING", False)
    limits = open_limits(None if store == "memory" else f"sqlite:{tmp_path}/l.db")
    await limits.start()
    try:
        assert [await limits.admit("a", 4, None) for _ in range(4)] == [None] * 4
        assert _seen(await limits.admit("a", 4, None)) == ("requests", pytest.approx(15.0))
        clock.now += 14.9
        assert _seen(await limits.admit("a", 4, None)) == ("requests", pytest.approx(0.1))
        clock.now += 0.1
        assert await limits.admit("a", 4, None) is None
        # Tokens: counted after the answer; a request waits while a minute's worth is.
        assert await limits.admit("b", None, 100) is None
        await limits.charge("b", 100, 250)
        assert _seen(await limits.admit("b", None, 100)) == ("tokens", pytest.approx(90.0))
        assert _seen(await limits.admit("b", 5, 100)) == ("tokens", pytest.approx(90.0))
        clock.now += 90.5
        assert await limits.admit("b", 5, 100) is None
    finally:
        await limits.aclose()


def test_store_kinds_are_named_by_state(tmp_path: Path) -> None:
    assert isinstance(open_limits(None), MemoryLimits)
    assert isinstance(open_limits("memory"), MemoryLimits)
    sqlite = open_limits(f"sqlite://{tmp_path}/x.db")  # sqlite:///tmp/...: an absolute path
    assert isinstance(sqlite, SqliteLimits)
    assert sqlite.path == f"{tmp_path}/x.db"
    relative = open_limits("sqlite:limits.db")
    assert isinstance(relative, SqliteLimits)
    assert relative.path == "limits.db"
    assert isinstance(open_limits("redis://127.0.0.1:1/0"), RedisLimits)
    with pytest.raises(ConfigError, match="state"):
        open_limits("postgres://x")


# -- shared by processes: SQLite -----------------------------------------------------------


def test_two_apps_share_a_limit_through_a_sqlite_file(
    backend: tuple[str, ScriptedBackend], tmp_path: Path
) -> None:
    config = _config(
        backend[0],
        Client("gina", KEY, requests_per_minute=3),
        state=f"sqlite:{tmp_path}/limits.sqlite",
    )
    with proxy_server(config) as one, proxy_server(config) as two:
        statuses = [_ask(url, KEY).status_code for url in (one, two, one, two, one)]
    assert statuses == [200, 200, 200, 429, 429]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _toml(url: str, path: Path, extra: str = "", client: str = "") -> Path:
    path.write_text(
        extra
        + f'[[backend]]\napi = "anthropic"\nbase_url = "{url}"\n'
        + '[[client]]\nname = "hana"\nkey_env = "HANA_KEY"\n'
        + client,
        encoding="utf-8",
    )
    return path


def _command(*args: str) -> list[str]:
    return [sys.executable, "-m", "laminate", "proxy", *args]


def _environment() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT / "src"), "HANA_KEY": KEY}


def test_workers_share_their_limits_through_a_sqlite_file_by_default(
    backend: tuple[str, ScriptedBackend], tmp_path: Path
) -> None:
    port = _free_port()
    config = _toml(backend[0], tmp_path / "p.toml", client="requests_per_minute = 2\n")
    process = subprocess.Popen(
        _command("--config", str(config), "--port", str(port), "--workers", "2"),
        env=_environment(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(url + "/v1/models", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert process.poll() is None, "the proxy did not start"
            assert time.monotonic() < deadline, "the proxy did not start in time"
            time.sleep(0.1)
        # A new connection each time: the two workers share the requests.
        statuses = [_ask(url, KEY).status_code for _ in range(6)]
    finally:
        process.terminate()
        _, errors = process.communicate(timeout=20)
    assert statuses == [200, 200, 429, 429, 429, 429], errors.decode()[-2000:]


# -- shared by machines: Redis -------------------------------------------------------------


class RedisServer:
    """A ``redis-server`` of its own on a free loopback port, keeping nothing on disk."""

    def __init__(self) -> None:
        if not os.path.exists(REDIS_SERVER):
            pytest.skip("redis-server is not installed (Debian's redis-server package)")
        self.port = _free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen[bytes] | None = None
        self.start()

    def start(self) -> None:
        self.process = subprocess.Popen(
            [REDIS_SERVER, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + 20
        while True:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as sock:
                    sock.sendall(b"PING\r\n")
                    if sock.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                pass
            assert self.process.poll() is None, "redis-server did not start"
            assert time.monotonic() < deadline, "redis-server did not start in time"
            time.sleep(0.05)

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=10)
            self.process = None


@pytest.fixture
def redis_server() -> Iterator[RedisServer]:
    server = RedisServer()
    try:
        yield server
    finally:
        server.stop()


def test_two_proxies_share_their_limits_through_redis(
    backend: tuple[str, ScriptedBackend], redis_server: RedisServer
) -> None:
    config = _config(
        backend[0],
        Client("ines", KEY, requests_per_minute=3),
        Client("jack", "jack-key", tokens_per_minute=30),
        state=redis_server.url,
    )
    with proxy_server(config) as one, proxy_server(config) as two:
        statuses = [_ask(url, KEY).status_code for url in (one, two, one, two, one)]
        assert statuses == [200, 200, 200, 429, 429]
        tokens = [_ask(url, "jack-key").status_code for url in (one, two, one)]
        assert tokens == [200, 200, 429]
        refused = _ask(two, "jack-key")
        assert refused.status_code == 429
        assert 1 <= _retry_after(refused) <= 13
        assert refused.json()["error"]["type"] == "rate_limit_error"


@pytest.mark.parametrize("failure", ["open", "closed"])
def test_a_redis_that_stops_fails_open_or_closed_as_configured_without_hanging(
    backend: tuple[str, ScriptedBackend],
    redis_server: RedisServer,
    failure: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    config = _config(
        backend[0],
        Client("kate", KEY, requests_per_minute=100),
        state=redis_server.url,
        state_failure=failure,
    )
    with proxy_server(config) as url:
        assert _ask(url, KEY).status_code == 200
        redis_server.stop()
        started = time.monotonic()
        with caplog.at_level("WARNING", logger="laminate.proxy"):
            answers = [_ask(url, KEY) for _ in range(3)]
        assert time.monotonic() - started < 10
        if failure == "open":
            assert [a.status_code for a in answers] == [200, 200, 200]
        else:
            assert [a.status_code for a in answers] == [503, 503, 503]
            assert answers[0].json()["type"] == "error"
            assert answers[0].headers["retry-after"] == "1"
        reports = [r for r in caplog.records if "limits' store" in r.getMessage()]
        assert len(reports) == 1  # once a minute at most
        assert f"127.0.0.1:{redis_server.port}" in reports[0].getMessage()
        redis_server.start()
        time.sleep(1.1)  # a failed store is left alone for a second
        assert _ask(url, KEY).status_code == 200


def test_a_redis_that_cannot_be_reached_at_start_is_refused_naming_its_url(
    backend: tuple[str, ScriptedBackend], tmp_path: Path
) -> None:
    port = _free_port()
    config = _toml(
        backend[0],
        tmp_path / "p.toml",
        extra=f'state = "redis://:secret@127.0.0.1:{port}/0"\n',
        client="requests_per_minute = 2\n",
    )
    done = subprocess.run(
        _command("--config", str(config), "--port", str(_free_port())),
        env=_environment(),
        capture_output=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 1
    message = done.stderr.decode()
    assert f"redis://:***@127.0.0.1:{port}/0" in message
    assert "secret" not in message


@pytest.mark.anyio
async def test_the_redis_store_counts_as_the_others(
    redis_server: RedisServer, anyio_backend: str
) -> None:
    if anyio_backend != "asyncio":
        pytest.skip("redis-py's client runs on asyncio")
    limits = open_limits(redis_server.url)
    await limits.start()
    try:
        assert [await limits.admit("a", 3, None) for _ in range(3)] == [None] * 3
        over = await limits.admit("a", 3, None)
        assert over is not None
        assert over.limit == "requests"
        assert 19.0 < over.seconds <= 20.0
        await limits.charge("b", 60, 120)  # two minutes' worth
        over = await limits.admit("b", 5, 60)
        assert over is not None
        assert over.limit == "tokens"
        assert 59.0 < over.seconds <= 60.0
        assert await limits.admit("c", 5, 60) is None
    finally:
        await limits.aclose()


# -- configuration -------------------------------------------------------------------------


def test_a_toml_file_names_clients_and_their_store(tmp_path: Path) -> None:
    path = tmp_path / "p.toml"
    path.write_text(
        'api_key_env = "SHARED"\nstate = "redis://127.0.0.1:6379/2"\nstate_failure = "closed"\n'
        '[[backend]]\napi = "openai"\nbase_url = "http://127.0.0.1:1/v1"\n'
        '[[client]]\nname = "lena"\nkey_env = "LENA"\nmodels = ["claude-*"]\n'
        "requests_per_minute = 60\ntokens_per_minute = 100000\n"
        '[[client]]\nname = "max"\nkey_env = "MAX"\n',
        encoding="utf-8",
    )
    config = config_from_toml(path, {"SHARED": "s", "LENA": "l-key", "MAX": "m-key"})
    assert config.state == "redis://127.0.0.1:6379/2"
    assert config.state_failure == "closed"
    lena, max_ = config.clients
    assert (lena.name, lena.key, lena.models) == ("lena", "l-key", ("claude-*",))
    assert (lena.requests_per_minute, lena.tokens_per_minute) == (60, 100000)
    assert max_.models is None
    assert not max_.limited
    assert "l-key" not in repr(config)


@pytest.mark.parametrize(
    ("client", "environ", "wanted"),
    [
        (
            'name = "a"\nkey_env = "A"\nsecret = 1\n',
            {"A": "k"},
            r"unknown key 'secret' in \[\[client\]\] 0",
        ),
        ('name = "a"\n', {}, "key_env is required"),
        ('name = "a"\nkey_env = "A"\n', {}, "A is not set"),
        ('name = "a"\nkey_env = "A"\nrequests_per_minute = 0\n', {"A": "k"}, "positive"),
        ('name = "a"\nkey_env = "A"\nmodels = "x*"\n', {"A": "k"}, "list of patterns"),
        (
            'name = "a"\nkey_env = "A"\n[[client]]\nname = "a"\nkey_env = "B"\n',
            {"A": "k", "B": "j"},
            "same name",
        ),
        (
            'name = "a"\nkey_env = "A"\n[[client]]\nname = "b"\nkey_env = "B"\n',
            {"A": "k", "B": "k"},
            "same key",
        ),
    ],
)
def test_a_wrong_client_table_is_refused(
    tmp_path: Path, client: str, environ: dict[str, str], wanted: str
) -> None:
    path = tmp_path / "p.toml"
    path.write_text(
        '[[backend]]\napi = "openai"\nbase_url = "http://127.0.0.1:1/v1"\n[[client]]\n' + client,
        encoding="utf-8",
    )
    with pytest.raises(ConfigError, match=wanted):
        config_from_toml(path, environ)


def test_a_wrong_state_is_refused() -> None:
    backend = Backend("openai", "http://127.0.0.1:1/v1")
    with pytest.raises(ConfigError, match="state"):
        ProxyConfig(backends=(backend,), state="mysql://x")
    with pytest.raises(ConfigError, match="state_failure"):
        ProxyConfig(backends=(backend,), state_failure="maybe")  # type: ignore[arg-type]


def test_the_command_line_keeps_the_clients_and_listens_beyond_loopback_with_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from laminate._cli.main import main
    from laminate._proxy import serve

    served: list[ProxyConfig] = []
    monkeypatch.setattr(serve, "serve", lambda config, **_: served.append(config))
    monkeypatch.setenv("HANA_KEY", "h-key")
    config = _toml("http://127.0.0.1:1", tmp_path / "p.toml", extra='state = "memory"\n')
    assert main(["proxy", "--config", str(config), "--host", "0.0.0.0", "--read-timeout", "9"]) == 0
    (seen,) = served
    assert [(c.name, c.key) for c in seen.clients] == [("hana", "h-key")]
    assert (seen.state, seen.timeouts.read) == ("memory", 9)
    bare = tmp_path / "bare.toml"
    bare.write_text('[[backend]]\napi = "anthropic"\nbase_url = "http://127.0.0.1:1"\n')
    assert main(["proxy", "--config", str(bare), "--host", "0.0.0.0"]) == 1
    assert "[[client]]" in capsys.readouterr().err


def test_redis_without_its_extra_says_which_extra_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from laminate._core.extras import MissingExtraError

    for name in [m for m in sys.modules if m == "redis" or m.startswith("redis.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "redis", None)
    with pytest.raises(MissingExtraError, match=r'"redis" extra') as caught:
        open_limits("redis://127.0.0.1:1/0")
    assert caught.value.extra == "redis"


def test_a_reload_changes_the_clients_and_keeps_their_counts(
    backend: tuple[str, ScriptedBackend], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from laminate.proxy import ConfigFile

    path = tmp_path / "team.toml"

    def write(*clients: str) -> None:
        table = [
            'admin_key_env = "ADMIN"',
            "[[backend]]",
            'api = "anthropic"',
            f'base_url = "{backend[0]}"',
            'models = { "to-anthropic" = "to-anthropic" }',
        ]
        for name in clients:
            table += [
                "[[client]]",
                f'name = "{name}"',
                f'key_env = "{name.upper()}_KEY"',
                "requests_per_minute = 2",
            ]
        path.write_text("\n".join(table) + "\n", encoding="utf-8")

    environ = {"ADMIN": "admin-key", "CAROL_KEY": "carol-key", "DAN_KEY": "dan-key"}
    write("carol")
    source = ConfigFile(str(path))
    with proxy_server(source.load(environ), source=source) as url:
        assert [_ask(url, "carol-key").status_code for _ in range(2)] == [200, 200]
        assert _ask(url, "dan-key").status_code == 401
        write("carol", "dan")
        for name, value in environ.items():  # a reload reads the keys from the environment
            monkeypatch.setenv(name, value)
        reloaded = httpx.post(url + "/admin/reload", headers={"authorization": "Bearer admin-key"})
        assert reloaded.status_code == 200, reloaded.text
        assert _ask(url, "dan-key").status_code == 200  # a client of the new file
        assert _ask(url, "carol-key").status_code == 429  # counted before the reload too
