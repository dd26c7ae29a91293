"""The real coding agents through ``laminate proxy``: Claude Code and Codex each run their
own tool loop against a scripted model that speaks another API.

The scripted model (tests/agent_backend.py) calls the agent's file tool (Claude Code's
``Write``, Codex's shell tool ``exec_command``); the agent runs it; the model then answers
a marker with the start of the tool's result. A test passes when the file is on disk with
the model's content, the agent printed the marker, and the model saw the tool result under
the id it gave its call; every translated request the model gets must be one its API's
official SDK types accept (tests/request_validators.py), as a real provider would. Each
agent is first run against the scripted model directly, in its own API, so a failure
through the proxy is the proxy's. Every pinned version of each agent (tests/agents.txt)
runs every test.

A translated request the backend's servers would refuse fails the test with their words;
where the library writes one today, the case is marked to fail (strictly) with the
defect, until the writer is fixed (``REFUSED``).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final

import pytest

from laminate._core import jsonlib

from .agent_backend import AgentModel, Check, Script, agent_model
from .agents import CLAUDE, CODEX, Agent, Run, needs, pinned, run_claude, run_codex, versions
from .request_validators import validate

CONTENT: Final = "written by the scripted model"
FILE: Final = "note.txt"
TASK: Final = f"Write the file {FILE}."
BACKEND_MODEL: Final = "scripted-model"
# Where a call's id comes back with its result: the APIs whose tool calls carry ids.
IDS: Final = frozenset({"anthropic", "openai", "openai-responses", "bedrock", "cohere"})

CLAUDE_BACKENDS: Final = ("openai", "openai-responses", "gemini", "ollama", "bedrock", "cohere")
CODEX_BACKENDS: Final = ("anthropic", "gemini", "openai", "ollama")

# What the library writes today that the backend's servers refuse: (agent command,
# version or None for every version, backend) -> the defect. None today; a defect the
# strict backends find is marked here until it is fixed.
REFUSED: Final[dict[tuple[str, str | None, str], str]] = {}


def _cases(command: str, backends: Sequence[str]) -> list[Any]:
    """``(agent, backend)`` for every pinned version of ``command`` and every backend,
    each skipped where the agent cannot run and marked where a defect refuses it."""
    cases = []
    for agent in pinned(command):
        for backend in backends:
            why = REFUSED.get((command, agent.version, backend)) or REFUSED.get(
                (command, None, backend)
            )
            marks = [needs(agent)]
            if why is not None:
                marks.append(pytest.mark.xfail(reason=why, strict=True))
            cases.append(pytest.param(agent, backend, id=f"{agent.id}-{backend}", marks=marks))
    return cases


@pytest.fixture(autouse=True, scope="module")
def json_backend() -> str:
    """One JSON backend (the one installed first): the agents take seconds a run, and the
    proxy's own tests run every backend already."""
    return jsonlib.BACKEND


def _write_arguments(request: str) -> dict[str, Any]:
    # Claude Code's Write takes an absolute path; the working directory is said only in
    # its prompt (a system message), which every backend API carries somewhere.
    found = re.search(r"Primary working directory: ([^\s\"\\]+)", request)
    folder = found.group(1) if found else "/nonexistent-working-directory"
    return {"file_path": f"{folder}/{FILE}", "content": CONTENT}


def _shell_arguments(request: str) -> dict[str, Any]:
    # Codex runs the command in its working directory.
    return {"cmd": f"printf '%s' '{CONTENT}' > {FILE}"}


def _script(agent: str, backend: str) -> Script:
    marker = f"DONE-{agent}-{backend}-7f3a"
    if agent == CLAUDE:
        return Script("Write", _write_arguments, marker)
    return Script("exec_command", _shell_arguments, marker)


@contextmanager
def _proxy_for(backend: str, url: str) -> Iterator[str]:
    """The proxy on a free loopback port, every model routed to the scripted model."""
    proxy = pytest.importorskip("laminate.proxy", reason="the proxy extra is not installed")
    # The base URL as the API's official SDK takes it: OpenAI's end in /v1.
    base = f"{url}/v1" if backend in ("openai", "openai-responses") else url
    config = proxy.ProxyConfig(backends=(proxy.Backend(backend, base, model=BACKEND_MODEL),))
    with proxy.proxy_server(config) as proxy_url:
        yield proxy_url


def _usage(agent: str, run: Run) -> tuple[int, int] | None:
    """The tokens the agent counted over its turns: ``(input, output)``."""
    try:
        if agent == CLAUDE:
            usage = json.loads(run.stdout)["usage"]
            return usage["input_tokens"], usage["output_tokens"]
        for line in run.stdout.splitlines():
            event = json.loads(line) if line.startswith("{") else {}
            if event.get("type") == "turn.completed":
                return event["usage"]["input_tokens"], event["usage"]["output_tokens"]
    except (ValueError, KeyError, TypeError):
        pass
    return None


def _printed(agent: str, run: Run) -> str:
    """The agent's final answer, from its JSON output."""
    if agent == CLAUDE:
        try:
            return str(json.loads(run.stdout).get("result"))
        except ValueError:
            return run.stdout
    texts = []
    for line in run.stdout.splitlines():
        event = json.loads(line) if line.startswith("{") else {}
        item = event.get("item") or {}
        if event.get("type") == "item.completed" and item.get("type") == "agent_message":
            texts.append(item.get("text", ""))
    return "\n".join(texts)


def _check(agent: str, backend: str, run: Run, model: AgentModel, script: Script) -> None:
    seen = f"{run.describe()}\n--- the scripted model saw\n{model.seen.summary()}"
    assert not model.seen.refused, f"the backend's API refuses a request\n{seen}"
    assert model.seen.of("call"), f"the model was never asked with the agent's tool\n{seen}"
    written = run.workdir / FILE
    assert written.is_file(), f"the agent did not write {FILE}\n{seen}"
    assert written.read_text() == CONTENT, seen
    finals = model.seen.of("final")
    assert finals, f"the tool's result never reached the model\n{seen}"
    assert all(t.api == backend for t in model.seen.turns), seen
    if backend in IDS:
        assert finals[-1].result_id == script.call_id, seen
    assert run.returncode == 0, seen
    assert script.marker in _printed(agent, run), seen
    # The model's usage on each answer reached the agent: two turns of 21 in, 9 out.
    assert _usage(agent, run) == (2 * 21, 2 * 9), seen


def _own(agent: str) -> str:
    return "anthropic" if agent == CLAUDE else "openai-responses"


def _judge(agent: str, backend: str) -> Check:
    """How the scripted model judges a request: by the backend API's types and what its
    servers refuse beyond them; the agents' own requests (passed through) use fields newer
    than the installed SDKs' types, so those only by what the servers refuse."""
    if backend == _own(agent):
        return functools.partial(validate, schema=False)
    return validate


def _run(agent: Agent, url: str, tmp: Path, way: str = "anthropic") -> Run:
    if agent.command == CLAUDE:
        return run_claude(agent, url, TASK, tmp, way=way)
    return run_codex(agent, url, TASK, tmp)


# -- the agents on their own API, without the proxy: the script and the harness hold ----


@pytest.mark.parametrize("agent", versions(CLAUDE) + versions(CODEX))
def test_each_agent_on_the_scripted_model_directly(agent: Agent, tmp_path: Path) -> None:
    own = _own(agent.command)
    script = _script(agent.command, own)
    with agent_model(script, _judge(agent.command, own)) as (url, model):
        run = _run(agent, url, tmp_path)
    _check(agent.command, own, run, model, script)


# -- through the proxy ---------------------------------------------------------------------


def _through_proxy(
    agent: Agent,
    backend: str,
    tmp: Path,
    thinking: str | None = None,
    way: str = "anthropic",
) -> Run:
    script = dataclasses.replace(_script(agent.command, backend), thinking=thinking)
    check = _judge(agent.command, backend)
    with agent_model(script, check) as (url, model), _proxy_for(backend, url) as proxy_url:
        run = _run(agent, proxy_url, tmp, way)
    _check(agent.command, backend, run, model, script)
    return run


@pytest.fixture
def aws_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Credentials for the proxy to sign Bedrock requests with (the scripted model does
    not check them)."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDLAMINATETEST")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "laminate-test-secret")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_CONFIG_FILE"):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize("agent", versions(CLAUDE) + versions(CODEX))
def test_each_agent_through_the_proxy_on_its_own_api(agent: Agent, tmp_path: Path) -> None:
    _through_proxy(agent, _own(agent.command), tmp_path)


@pytest.mark.parametrize(("agent", "backend"), _cases(CLAUDE, CLAUDE_BACKENDS))
def test_claude_code_on_another_api(
    agent: Agent, backend: str, tmp_path: Path, aws_env: None
) -> None:
    _through_proxy(agent, backend, tmp_path)


@pytest.mark.parametrize(("agent", "backend"), _cases(CODEX, CODEX_BACKENDS))
def test_codex_on_another_api(agent: Agent, backend: str, tmp_path: Path, aws_env: None) -> None:
    _through_proxy(agent, backend, tmp_path)


# Claude Code's other ways in: Bedrock's InvokeModel (its stream in AWS's event stream)
# and Vertex's rawPredict, with the clouds' own authentication skipped.
CLOUD_WAYS: Final = (("bedrock", "anthropic"), ("bedrock", "openai"), ("vertex", "gemini"))


@pytest.mark.parametrize(
    ("agent", "way", "backend"),
    [
        pytest.param(case.values[0], way, backend, id=f"{case.id}-{way}", marks=case.marks)
        for way, backend in CLOUD_WAYS
        for case in _cases(CLAUDE, [backend])
    ],
)
def test_claude_code_through_a_clouds_endpoints(
    agent: Agent, way: str, backend: str, tmp_path: Path
) -> None:
    _through_proxy(agent, backend, tmp_path, way=way)


THOUGHT: Final = "First a look at what the file should hold."


@pytest.mark.parametrize(("agent", "backend"), _cases(CLAUDE, ["openai"]))
def test_claude_code_with_a_reasoning_model(agent: Agent, backend: str, tmp_path: Path) -> None:
    # A Chat Completions model that streams its reasoning (reasoning_content) before each
    # answer: Claude Code's loop goes on through the thinking it is shown.
    _through_proxy(agent, backend, tmp_path, thinking=THOUGHT)


@pytest.mark.parametrize(("agent", "backend"), _cases(CODEX, ["anthropic"]))
def test_codex_with_a_reasoning_model(agent: Agent, backend: str, tmp_path: Path) -> None:
    # Claude's thinking reaches Codex as a reasoning item (it prints its text).
    run = _through_proxy(agent, backend, tmp_path, thinking=THOUGHT)
    assert THOUGHT in run.stdout, run.describe()


@pytest.mark.parametrize(("agent", "backend"), _cases(CODEX, ["openai", "anthropic"]))
def test_codex_with_a_model_it_knows(
    agent: Agent, backend: str, tmp_path: Path, aws_env: None
) -> None:
    # A model name Codex knows changes its request: verbosity, reasoning effort, and the
    # free-form apply_patch tool beside exec_command.
    script = _script(CODEX, backend)
    with agent_model(script, validate) as (url, model), _proxy_for(backend, url) as proxy_url:
        run = run_codex(agent, proxy_url, TASK, tmp_path, model="gpt-5.5")
    _check(CODEX, backend, run, model, script)
