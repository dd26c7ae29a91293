"""The proxy's routing by model pattern, its per-backend limits (an output cap, fields
dropped), the prompt cache key it derives, and the keep-alive it writes while a backend
is silent.

Real loopback servers: the scripted backend (``tests/scripted_backend.py``), which
refuses what each API's servers refuse, and the proxy in a thread; the official SDKs are
the clients where the test is about what a client reads.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from laminate import read_request, write_request
from laminate._apis.registry import APIS
from laminate._cli.proxy import add_parser, build_config
from laminate._proxy.calls import limited, session_key
from laminate.proxy import Backend, ConfigError, ProxyConfig, Timeouts, app, config_from_toml
from laminate.proxy import proxy_server as serve_proxy

from .scripted_backend import ScriptedBackend, scripted_backend
from .sdk_clients import KEY, result_for, tool_loop

CLIENTS = tuple(name for name, record in APIS.items() if record.http is not None)
PAUSE = 0.3
KEEPALIVE = 0.05


def once(json_backend: str) -> None:
    if json_backend != "stdlib":
        pytest.skip("the proxy does not depend on the JSON backend; run once")


def base_for(api: str, url: str) -> str:
    return url + APIS[api].http.base_path  # type: ignore[union-attr]


def http(api: str) -> Any:
    return APIS[api].http


@pytest.fixture(scope="module")
def aws_env() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
        patch.setenv("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")
        patch.setenv("AWS_REGION", "us-east-1")
        yield


@pytest.fixture(scope="module")
def backend(aws_env: None) -> Iterator[tuple[str, ScriptedBackend]]:
    with scripted_backend() as found:
        yield found


@pytest.fixture(autouse=True)
def nothing_refused(backend: tuple[str, ScriptedBackend]) -> Iterator[None]:
    """Every request that reached the scripted backend is one its API's servers take."""
    record = backend[1].record
    before = len(record.refused)
    yield
    refused = record.refused[before:]
    assert not refused, "the backend's API refuses a request:\n" + "\n".join(refused)


def every_backend(url: str, **options: Any) -> tuple[Backend, ...]:
    return tuple(
        Backend(
            api,
            base_for(api, url),
            models={
                f"to-{api}": f"to-{api}",
                f"pause-{api}": f"pause-{PAUSE}",
                f"late-{api}": "late-429",
            },
            **options,
        )
        for api in CLIENTS
    )


@pytest.fixture(scope="module")
def lines() -> list[str]:
    return []


@pytest.fixture(scope="module")
def proxy(backend: tuple[str, ScriptedBackend], lines: list[str]) -> Iterator[str]:
    config = ProxyConfig(
        backends=every_backend(backend[0]),
        timeouts=Timeouts(connect=10, read=60, idle=60),
        keepalive=KEEPALIVE,
        log=lines.append,
    )
    with serve_proxy(config) as url:
        yield url


def last_request(scripted: ScriptedBackend) -> tuple[str, str, dict[str, Any], dict[str, str]]:
    return scripted.record.requests[-1]


# -- routing by pattern -----------------------------------------------------------------


def test_the_most_specific_entry_of_every_backend_wins() -> None:
    first = Backend(
        "openai",
        "http://first/v1",
        models={
            "*": "anything",
            "claude-*": "claude",
            "claude-opus-*": "opus",
            "claude-?onnet-4": "sonnet-4",
            "claude-[hs]*-4-5": "hs-4-5",
            "exact-[": "bracket",
        },
        model="default",
    )
    second = Backend(
        "anthropic",
        "http://second",
        models={"claude-opus-4-1": "opus-4-1", "claude-opus-4*": "opus-4", "x*?": "a"},
    )
    third = Backend("ollama", "http://third", models={"x?": "b", "claude-opus-4-1": "never"})
    config = ProxyConfig((first, second, third))

    def to(model: str) -> tuple[str, str]:
        found, name = config.route(model)
        return found.base_url, name

    # An exact name beats every pattern, whichever backend lists it first.
    assert to("claude-opus-4-1") == ("http://second", "opus-4-1")
    # More literal characters win, across backends.
    assert to("claude-opus-4-5") == ("http://second", "opus-4")
    assert to("claude-opus-3") == ("http://first/v1", "opus")
    assert to("claude-sonnet-4") == ("http://first/v1", "sonnet-4")
    assert to("claude-haiku") == ("http://first/v1", "claude")
    # A set is one wildcard; a `[` without its `]` is a literal.
    assert to("claude-haiku-4-5") == ("http://first/v1", "hs-4-5")
    assert to("exact-[") == ("http://first/v1", "bracket")
    # As many literals (one each): the fewer wildcards win ("x?" has one, "x*?" two).
    assert to("xy") == ("http://third", "b")
    assert to("xzy") == ("http://second", "a")
    # Case-sensitive, and `*` matches a `/` too.
    assert to("Claude-opus-3") == ("http://first/v1", "anything")
    assert to("claude-x/y") == ("http://first/v1", "claude")
    assert config.models() == ["exact-[", "claude-opus-4-1", "default"]


def test_patterns_of_equal_rank_go_to_the_first_listed() -> None:
    one = Backend("openai", "http://one/v1", models={"a*": "first", "*b": "second"}, name="one")
    two = Backend("anthropic", "http://two", models={"?b": "third"}, name="two")
    config = ProxyConfig((one, two))
    assert config.route("ab") == (one, "first")  # one literal, one wildcard each
    assert config.route("cb") == (one, "second")
    assert ProxyConfig((two, one)).route("ab") == (two, "third")


def test_a_model_no_entry_matches_goes_to_the_first_backend() -> None:
    one = Backend("openai", "http://one/v1", models={"claude-*": "qwen"}, name="one")
    assert ProxyConfig((one,)).route("gpt-5") == (one, "gpt-5")
    default = Backend(
        "openai", "http://one/v1", models={"claude-*": "qwen"}, model="llama", name="one"
    )
    assert ProxyConfig((default,)).route("gpt-5") == (default, "llama")


def test_routes_are_kept_per_name_and_the_table_stays_bounded() -> None:
    one = Backend("openai", "http://one/v1", models={"m-*": "pattern"}, name="one")
    config = ProxyConfig((one,))
    found = config.route("m-1")
    assert config.route("m-1") is found  # the second ask is the table's
    for n in range(5000):
        assert config.route(f"m-{n}") == (one, "pattern")
        assert config.route(f"other-{n}") == (one, f"other-{n}")
    kept = config._routing._seen
    assert 0 < len(kept) <= 1024


def test_the_model_list_shows_exact_names_only(backend: tuple[str, ScriptedBackend]) -> None:
    config = ProxyConfig(
        (Backend("openai", "http://one/v1", models={"claude-*": "q", "gpt-5": "q"}),),
        log=lambda _: None,
    )
    with serve_proxy(config) as url:
        answer = httpx.get(url + "/v1/models", timeout=10)
    assert [m["id"] for m in answer.json()["data"]] == ["gpt-5"]


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_a_pattern_routes_an_sdk_and_the_log_names_both_models(
    backend: tuple[str, ScriptedBackend], stream: bool, json_backend: str
) -> None:
    once(json_backend)
    url, scripted = backend
    seen: list[str] = []
    config = ProxyConfig(
        (
            Backend("openai", base_for("openai", url), models={"claude-*": "to-openai"}),
            Backend("anthropic", url, models={"claude-opus-*": "to-anthropic"}),
        ),
        log=seen.append,
    )
    with serve_proxy(config) as proxy:
        args, text = tool_loop("anthropic", proxy, "claude-sonnet-4-5", "Oslo", stream)
        assert (args, text) == ({"city": "Oslo"}, f"The tool said: {result_for('Oslo')}")
        assert last_request(scripted)[0] == "openai"
        assert last_request(scripted)[2]["model"] == "to-openai"
        tool_loop("anthropic", proxy, "claude-opus-4-1", "Rome", stream)
        assert last_request(scripted)[0] == "anthropic"
        assert last_request(scripted)[2]["model"] == "to-anthropic"
    logged = [json.loads(line) for line in seen]
    assert [(e["client_model"], e["backend_model"], e["backend"]) for e in logged] == [
        ("claude-sonnet-4-5", "to-openai", "openai"),
        ("claude-sonnet-4-5", "to-openai", "openai"),
        ("claude-opus-4-1", "to-anthropic", "anthropic"),
        ("claude-opus-4-1", "to-anthropic", "anthropic"),
    ]
    assert all(e["max_tokens_capped"] is None for e in logged)


# -- the command line and the TOML file -----------------------------------------------------


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_parser(parser.add_subparsers())
    return parser.parse_args(["proxy", *argv])


def test_the_command_line_takes_patterns_a_cap_fields_to_drop_and_a_keepalive() -> None:
    args = _args(
        "--backend", "openai:http://127.0.0.1:11434/v1",
        "--model", "claude-*=qwen3-coder",
        "--model", "claude-haiku-*=qwen3:8b",
        "--model", "llama",
        "--max-tokens", "32000",
        "--drop", "temperature", "--drop", "top_p",
        "--keepalive", "2.5",
    )  # fmt: skip
    config = build_config(args, {})
    (only,) = config.backends
    assert only.max_tokens == 32000
    assert only.drop == ("temperature", "top_p")
    assert config.keepalive == 2.5
    assert config.route("claude-haiku-4-5")[1] == "qwen3:8b"
    assert config.route("claude-opus-4-1")[1] == "qwen3-coder"
    assert config.route("gpt-5")[1] == "llama"
    default = build_config(_args("--backend", "openai:http://127.0.0.1:11434/v1"), {})
    assert default.keepalive == 15
    assert (
        build_config(_args("--backend", "openai:http://h/v1", "--keepalive", "0"), {}).keepalive
        == 0
    )


@pytest.mark.parametrize(
    "argv",
    [
        ("--model", "claude-*"),  # a pattern needs its backend model
        ("--max-tokens", "0"),
        ("--keepalive", "-1"),
        ("--keepalive", "soon"),
    ],
)
def test_the_command_line_refuses_what_makes_no_sense(argv: tuple[str, ...]) -> None:
    with pytest.raises((ConfigError, SystemExit)):
        build_config(_args("--backend", "openai:http://h/v1", *argv), {})


def test_the_toml_file_takes_patterns_a_cap_fields_to_drop_and_a_keepalive(
    tmp_path: Path,
) -> None:
    path = tmp_path / "proxy.toml"
    path.write_text(
        """
keepalive = 20
[[backend]]
api = "openai"
base_url = "http://127.0.0.1:11434/v1"
models = { "claude-*" = "qwen3-coder", "claude-haiku-4-5" = "qwen3:8b" }
max_tokens = 32000
drop = ["temperature"]
[[backend]]
api = "anthropic"
base_url = "https://api.anthropic.com"
""",
        encoding="utf-8",
    )
    config = config_from_toml(path, {})
    assert config.keepalive == 20
    first, second = config.backends
    assert (first.max_tokens, first.drop) == (32000, ("temperature",))
    assert (second.max_tokens, second.drop) == (None, ())
    assert config.route("claude-haiku-4-5") == (first, "qwen3:8b")
    assert config.route("claude-opus-4-1") == (first, "qwen3-coder")
    assert config.models() == ["claude-haiku-4-5"]
    defaults = tmp_path / "defaults.toml"
    defaults.write_text('[[backend]]\napi = "openai"\nbase_url = "http://h/v1"\n')
    assert config_from_toml(defaults, {}).keepalive == 15


@pytest.mark.parametrize(
    "line",
    ["max_tokens = 0", 'max_tokens = "a lot"', 'drop = "temperature"', "drop = [1]"],
)
def test_the_toml_file_refuses_a_bad_cap_or_drop(tmp_path: Path, line: str) -> None:
    path = tmp_path / "proxy.toml"
    path.write_text(f'[[backend]]\napi = "openai"\nbase_url = "http://h/v1"\n{line}\n')
    with pytest.raises(ConfigError):
        config_from_toml(path, {})


def test_a_negative_keepalive_is_refused() -> None:
    with pytest.raises(ConfigError):
        ProxyConfig((Backend("openai", "http://h/v1"),), keepalive=-1)


# -- the output cap and the fields dropped --------------------------------------------------

# A body of each API with its output limit (and its own other spellings) at 1000.
LIMITED: dict[str, tuple[dict[str, Any], list[tuple[str, ...]]]] = {
    "openai": ({"max_tokens": 1000, "max_completion_tokens": 900}, [("max_tokens",)]),
    "openai-responses": ({"max_output_tokens": 1000}, [("max_output_tokens",)]),
    "anthropic": ({"max_tokens": 1000}, [("max_tokens",)]),
    "gemini": (
        {"generationConfig": {"maxOutputTokens": 1000, "temperature": 0.5}},
        [("generationConfig", "maxOutputTokens")],
    ),
    "bedrock": ({"inferenceConfig": {"maxTokens": 1000}}, [("inferenceConfig", "maxTokens")]),
    "ollama": ({"options": {"num_predict": 1000}}, [("options", "num_predict")]),
    "cohere": ({"max_tokens": 1000}, [("max_tokens",)]),
}


@pytest.mark.parametrize("api", CLIENTS)
def test_each_apis_output_limit_is_lowered_to_the_cap(api: str) -> None:
    body, paths = LIMITED[api]
    original = json.loads(json.dumps(body))
    capped, asked = limited(body, Backend(api, "http://h/v1", max_tokens=100))
    assert asked == 1000
    for path in paths:
        value: Any = capped
        for key in path:
            value = value[key]
        assert value == 100
    assert body == original  # the client's body is not changed in place
    same, nothing = limited(body, Backend(api, "http://h/v1", max_tokens=5000))
    assert (same, nothing) == (body, None)
    assert same is body


def test_gemini_snake_case_and_the_other_settings_are_kept() -> None:
    body = {"generation_config": {"max_output_tokens": 1000, "top_k": 3}, "x": 1}
    capped, asked = limited(body, Backend("gemini", "http://h", max_tokens=10))
    assert capped == {"generation_config": {"max_output_tokens": 10, "top_k": 3}, "x": 1}
    assert asked == 1000


def test_fields_are_dropped_and_a_field_absent_is_fine() -> None:
    backend = Backend("openai", "http://h/v1", drop=("temperature", "no_such_field"))
    body = {"model": "m", "temperature": 0.2, "max_tokens": 10}
    dropped, asked = limited(body, backend)
    assert dropped == {"model": "m", "max_tokens": 10}
    assert asked is None
    untouched = {"model": "m"}
    assert limited(untouched, backend)[0] is untouched


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_a_same_api_request_is_capped_and_dropped_and_the_log_says_so(
    backend: tuple[str, ScriptedBackend], stream: bool, json_backend: str
) -> None:
    once(json_backend)
    import anthropic

    url, scripted = backend
    seen: list[str] = []
    config = ProxyConfig(
        (Backend("anthropic", url, max_tokens=64, drop=("temperature", "top_k")),),
        log=seen.append,
    )
    with serve_proxy(config) as proxy:
        client = anthropic.Anthropic(base_url=proxy, api_key=KEY, max_retries=0)
        asked: Any = {
            "model": "to-anthropic",
            "max_tokens": 20000,
            "messages": [{"role": "user", "content": "hi"}],
            "extra_body": {"temperature": 0.3},
        }
        if stream:
            with client.messages.stream(**asked) as events:
                message = events.get_final_message()
        else:
            message = client.messages.create(**asked)
        client.close()
    assert message.content[0].type == "text"
    sent = last_request(scripted)[2]
    assert sent["max_tokens"] == 64
    assert "temperature" not in sent
    assert sent["messages"] == asked["messages"]
    logged = json.loads(seen[-1])
    assert logged["max_tokens_capped"] == 20000
    assert logged["status"] == 200


@pytest.mark.parametrize("target", CLIENTS)
def test_a_translated_request_is_capped_in_the_backends_own_field(
    backend: tuple[str, ScriptedBackend], target: str, json_backend: str
) -> None:
    once(json_backend)
    url, scripted = backend
    seen: list[str] = []
    config = ProxyConfig(
        (
            Backend(
                target,
                base_for(target, url),
                max_tokens=64,
                drop=("temperature",),
                models={"m": f"to-{target}"},
            ),
        ),
        log=seen.append,
    )
    body = {
        "model": "m",
        "max_tokens": 50000,
        "temperature": 0.3,
        "messages": [{"role": "user", "content": "hi"}],
    }
    with serve_proxy(config) as proxy:
        answer = httpx.post(proxy + "/v1/messages", json=body, timeout=10)
    assert answer.status_code == 200, answer.text
    sent = last_request(scripted)[2]
    limits = []
    for path in http(target).output_limits:
        value: Any = sent
        for key in path:
            value = value.get(key) if isinstance(value, dict) else None
        limits.append(value)
    assert 64 in limits
    assert not any(isinstance(v, int) and v > 64 for v in limits)
    assert "temperature" not in sent  # Gemini, Bedrock, Ollama nest theirs: not top-level
    assert json.loads(seen[-1])["max_tokens_capped"] == 50000


def test_a_request_within_the_cap_or_without_a_limit_is_left_alone(
    backend: tuple[str, ScriptedBackend], json_backend: str
) -> None:
    once(json_backend)
    url, scripted = backend
    seen: list[str] = []
    config = ProxyConfig(
        (Backend("openai", base_for("openai", url), max_tokens=64),), log=seen.append
    )
    with serve_proxy(config) as proxy:
        body: dict[str, Any] = {
            "model": "to-openai",
            "messages": [{"role": "user", "content": "hi"}],
        }
        raw = json.dumps(body, separators=(",", ":")).encode()
        answer = httpx.post(
            proxy + "/v1/chat/completions",
            content=raw,
            headers={"content-type": "application/json"},
            timeout=10,
        )
        assert answer.status_code == 200
        assert last_request(scripted)[2] == body  # no limit given: none added
        body["max_tokens"] = 10
        answer = httpx.post(proxy + "/v1/chat/completions", json=body, timeout=10)
        assert answer.status_code == 200
        assert last_request(scripted)[2]["max_tokens"] == 10
    assert [json.loads(line)["max_tokens_capped"] for line in seen] == [None, None]


# -- the prompt cache ------------------------------------------------------------------------


def test_the_writers_take_a_cache_key_where_the_api_has_one() -> None:
    request = read_request(
        {"model": "m", "max_tokens": 9, "messages": [{"role": "user", "content": "hi"}]},
        "anthropic",
    )
    for api in ("openai", "openai-responses"):
        assert write_request(request, api, cache_key="k1").body["prompt_cache_key"] == "k1"
        assert "prompt_cache_key" not in write_request(request, api).body
    for api in ("anthropic", "gemini", "bedrock", "ollama", "cohere"):
        assert "prompt_cache_key" not in json.dumps(write_request(request, api, cache_key="k").body)
    own = read_request(
        {"model": "m", "prompt_cache_key": "mine", "messages": [{"role": "user", "content": "hi"}]},
        "openai",
    )
    assert write_request(own, "openai", cache_key="k1").body["prompt_cache_key"] == "mine"
    with pytest.raises(TypeError):
        write_request(request, "openai", cache_key=1)  # type: ignore[arg-type]


def test_the_session_key_is_the_users_else_the_first_system_prompts() -> None:
    def read(body: dict[str, Any]) -> Any:
        base = {"model": "m", "max_tokens": 9, "messages": [{"role": "user", "content": "hi"}]}
        return read_request({**base, **body}, "anthropic")

    user = "user_abc_account_1_session_2"
    by_user = session_key(read({"metadata": {"user_id": user}, "system": "S"}))
    assert by_user == hashlib.sha256(f"user\0{user}".encode()).hexdigest()[:16]
    by_system = session_key(
        read({"system": [{"type": "text", "text": "S"}, {"type": "text", "text": "T"}]})
    )
    assert by_system == hashlib.sha256(b"system\0S").hexdigest()[:16]
    assert by_system == session_key(read({"system": "S"}))
    assert by_system != session_key(read({"system": "other"}))
    assert session_key(read({})) is None
    own = read_request(
        {"model": "m", "prompt_cache_key": "mine", "messages": [{"role": "user", "content": "hi"}]},
        "openai",
    )
    assert session_key(own) == "mine"


@pytest.mark.parametrize("target", ["openai", "openai-responses"])
def test_an_openai_backend_gets_a_stable_prompt_cache_key_per_session(
    proxy: str, backend: tuple[str, ScriptedBackend], target: str, json_backend: str
) -> None:
    once(json_backend)
    import anthropic

    scripted = backend[1]
    client = anthropic.Anthropic(base_url=proxy, api_key=KEY, max_retries=0)
    keys = []
    for user, system in (("session-1", "S"), ("session-1", "T"), ("session-2", "S")):
        client.messages.create(
            model=f"to-{target}",
            max_tokens=9,
            system=system,
            metadata={"user_id": user},
            messages=[{"role": "user", "content": "hi"}],
        )
        keys.append(last_request(scripted)[2]["prompt_cache_key"])
    for system in ("S", "S", "T"):
        client.messages.create(
            model=f"to-{target}",
            max_tokens=9,
            system=system,
            messages=[{"role": "user", "content": "hi"}],
        )
        keys.append(last_request(scripted)[2]["prompt_cache_key"])
    client.close()
    assert keys[0] == keys[1] != keys[2]
    assert keys[3] == keys[4] != keys[5]
    assert all(len(key) == 16 for key in keys)


def test_a_clients_own_prompt_cache_key_is_kept(
    proxy: str, backend: tuple[str, ScriptedBackend], json_backend: str
) -> None:
    once(json_backend)
    import openai

    client = openai.OpenAI(base_url=proxy + "/v1", api_key=KEY, max_retries=0)
    client.chat.completions.create(
        model="to-openai-responses",
        prompt_cache_key="mine",
        messages=[{"role": "system", "content": "S"}, {"role": "user", "content": "hi"}],
    )
    client.close()
    assert last_request(backend[1])[2]["prompt_cache_key"] == "mine"


def test_cache_marks_cross_between_anthropic_and_bedrock_both_ways(
    proxy: str, backend: tuple[str, ScriptedBackend], json_backend: str
) -> None:
    once(json_backend)
    scripted = backend[1]
    mark = {"type": "ephemeral"}
    anthropic_body = {
        "model": "to-bedrock",
        "max_tokens": 9,
        "system": [{"type": "text", "text": "Long rules.", "cache_control": mark}],
        "messages": [
            {
                "role": "user",
                "content": [{"type": "text", "text": "A long file.", "cache_control": mark}],
            }
        ],
    }
    answer = httpx.post(proxy + "/v1/messages", json=anthropic_body, timeout=10)
    assert answer.status_code == 200, answer.text
    sent = last_request(scripted)[2]
    point = {"cachePoint": {"type": "default"}}
    assert sent["system"] == [{"text": "Long rules."}, point]
    assert sent["messages"][0]["content"] == [{"text": "A long file."}, point]
    bedrock_body = {"system": sent["system"], "messages": sent["messages"]}
    answer = httpx.post(proxy + "/model/to-anthropic/converse", json=bedrock_body, timeout=10)
    assert answer.status_code == 200, answer.text
    back = last_request(scripted)[2]
    assert back["system"] == anthropic_body["system"]
    assert back["messages"] == anthropic_body["messages"]


# -- keep-alive while the backend is silent -------------------------------------------------

REQUESTS: dict[str, tuple[str, dict[str, Any]]] = {
    "openai": ("/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}]}),
    "openai-responses": ("/v1/responses", {"input": "hi"}),
    "anthropic": (
        "/v1/messages",
        {"max_tokens": 9, "messages": [{"role": "user", "content": "hi"}]},
    ),
    "ollama": ("/api/chat", {"messages": [{"role": "user", "content": "hi"}]}),
    "gemini": (
        "/v1beta/models/{model}:streamGenerateContent?alt=sse",
        {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]},
    ),
    "cohere": ("/v2/chat", {"messages": [{"role": "user", "content": "hi"}]}),
    "bedrock": (
        "/model/{model}/converse-stream",
        {"messages": [{"role": "user", "content": [{"text": "hi"}]}]},
    ),
}


def _request(api: str, model: str) -> tuple[str, bytes]:
    path, body = REQUESTS[api]
    if "{model}" in path:
        return path.format(model=model), json.dumps(body).encode()
    return path, json.dumps({"model": model, **body, "stream": True}).encode()


@pytest.mark.parametrize("target", ["same", "openai", "anthropic"])
@pytest.mark.parametrize("client", CLIENTS)
def test_a_silent_backend_streams_the_clients_keepalive(
    proxy: str, backend: tuple[str, ScriptedBackend], client: str, target: str, json_backend: str
) -> None:
    once(json_backend)
    target = client if target == "same" else target
    path, body = _request(client, f"pause-{target}")
    headers = {"content-type": "application/json"}
    with httpx.stream("POST", proxy + path, content=body, headers=headers, timeout=10) as answer:
        assert answer.status_code == 200
        chunks = list(answer.iter_raw())
    whole = b"".join(chunks)
    ping = http(client).keepalive
    if ping is None:  # Gemini, Ollama, Bedrock: nothing their clients would skip
        return
    # Two pauses of 0.3 s, a keep-alive every 0.05 s: several, and each between events.
    assert whole.count(ping) >= 4
    assert whole.startswith(ping)  # before the first event: the backend thinks
    without = whole.replace(ping, b"")
    if target == client:  # passing through: the backend's bytes, keep-alives aside
        direct_path, direct_body = _request(client, f"pause-{PAUSE}")
        url = base_for(client, backend[0])
        direct = httpx.post(
            url + direct_path.removeprefix(http(client).base_path),
            content=direct_body,
            headers=headers,
            timeout=10,
        )
        assert without == direct.content
    for frame in without.replace(b"\r\n", b"\n").split(b"\n\n"):
        assert not frame.startswith(b":")


@pytest.mark.parametrize("target", ["same", "openai", "anthropic"])
@pytest.mark.parametrize("client", CLIENTS)
def test_every_sdk_reads_an_answer_with_keepalives_in_it(
    proxy: str, client: str, target: str, json_backend: str
) -> None:
    once(json_backend)
    target = client if target == "same" else target
    prompt = f"Lima {client}>{target}"
    args, text = tool_loop(client, proxy, f"pause-{target}", prompt, True)
    assert args == {"city": prompt}
    assert text == f"The tool said: {result_for(prompt)}"


def test_nothing_is_written_before_the_backends_status_arrives(
    proxy: str, lines: list[str], json_backend: str
) -> None:
    once(json_backend)
    import anthropic

    # The backend sends nothing for 0.3 s, then a 429: the client still gets the 429.
    client = anthropic.Anthropic(base_url=proxy, api_key=KEY, max_retries=0)
    with (
        pytest.raises(anthropic.RateLimitError),
        client.messages.stream(
            model="late-openai", max_tokens=9, messages=[{"role": "user", "content": "hi"}]
        ) as events,
    ):
        events.get_final_message()
    client.close()
    assert json.loads(lines[-1])["status"] == 429


def test_no_keepalive_when_it_is_off(
    backend: tuple[str, ScriptedBackend], json_backend: str
) -> None:
    once(json_backend)
    config = ProxyConfig(every_backend(backend[0]), keepalive=0, log=lambda _: None)
    path, body = _request("anthropic", "pause-openai")
    with serve_proxy(config) as proxy:
        answer = httpx.post(proxy + path, content=body, timeout=10)
    assert answer.status_code == 200
    assert b"ping" not in answer.content


@pytest.mark.anyio
async def test_keepalives_are_written_on_every_event_loop(
    backend: tuple[str, ScriptedBackend], anyio_backend: str, json_backend: str
) -> None:
    once(json_backend)
    # On asyncio the keep-alive is a bare task beside the reads; on trio, a task group.
    asgi = app(ProxyConfig(every_backend(backend[0]), keepalive=KEEPALIVE, log=lambda _: None))
    transport = httpx.ASGITransport(app=asgi)
    async with (
        asgi.router.lifespan_context(asgi),
        httpx.AsyncClient(transport=transport, base_url="http://proxy", timeout=10) as client,
    ):
        for target in ("anthropic", "openai"):
            path, body = _request("anthropic", f"pause-{target}")
            answer = await client.post(path, content=body)
            assert answer.status_code == 200
            assert answer.content.count(b"event: ping\n") >= 4
            assert answer.text.rstrip().endswith('data: {"type":"message_stop"}')


def test_a_fallback_asks_for_the_model_by_its_own_patterns() -> None:
    first = Backend("openai", "http://one/v1", models={"claude-*": "qwen"}, fallbacks=("cloud",))
    cloud = Backend(
        "anthropic",
        "http://two",
        models={"claude-haiku-*": "claude-haiku-4-5", "claude-*": "claude-sonnet-4-5"},
        model="claude-opus-4-1",
        name="cloud",
    )
    config = ProxyConfig((first, cloud))
    assert config.route("claude-x")[1] == "qwen"  # as specific: the first listed
    assert config.model_at(cloud, "claude-haiku-9") == "claude-haiku-4-5"  # most specific
    assert config.model_at(cloud, "claude-x") == "claude-sonnet-4-5"
    assert config.model_at(cloud, "gpt-5") == "claude-opus-4-1"  # its model
    assert config.model_at(first, "gpt-5") == "gpt-5"  # unchanged
