"""The real coding agents for the tests: Claude Code and Codex, run offline against a
local base URL.

``tests/agents.txt`` pins the npm packages the tests run, one ``package@version`` a line
(Claude Code at two versions: a change in what a newer one sends must not hide what an
older one, still in use, sends). `.ci/run` installs each into a folder of its own,
``<name>-<version>``, in a cache folder outside the repository (``$LAMINATE_AGENTS_DIR``,
else ``${XDG_CACHE_HOME:-~/.cache}/laminate-agents``); a test that needs one is skipped,
with the reason, when node or that version is not there.

Each run gets a fresh temporary home and working directory, stdin closed, and an
environment of its own (nothing of the user's configuration is read): Claude Code talks
Anthropic Messages to ``ANTHROPIC_BASE_URL``; Codex talks the Responses API to the
``base_url`` of a model provider written into its ``config.toml``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import pytest

CLAUDE: Final = "claude"
CODEX: Final = "codex"
PACKAGES: Final = {CLAUDE: "@anthropic-ai/claude-code", CODEX: "@openai/codex"}
PINNED: Final = Path(__file__).with_name("agents.txt")


def agents_dir() -> Path:
    """Where `.ci/run` installs the agents."""
    chosen = os.environ.get("LAMINATE_AGENTS_DIR")
    if chosen:
        return Path(chosen)
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "laminate-agents"


@dataclass(frozen=True)
class Agent:
    """One pinned version of an agent's npm package."""

    command: str
    """``CLAUDE`` or ``CODEX``: the command the package installs."""
    version: str

    @property
    def package(self) -> str:
        return PACKAGES[self.command]

    @property
    def id(self) -> str:
        """How a test's id names it (``claude-2.1.332``)."""
        return f"{self.command}-{self.version}"

    def prefix(self) -> Path:
        """The npm prefix `.ci/run` installs it into (``claude-code-2.1.332``)."""
        return agents_dir() / f"{self.package.rsplit('/', 1)[-1]}-{self.version}"

    def executable(self) -> Path:
        return self.prefix() / "node_modules" / ".bin" / self.command

    def missing(self) -> str | None:
        """Why it cannot run here, or ``None`` when it can."""
        if shutil.which("node") is None:
            return "node is not installed: the real agents (npm packages) cannot run"
        if not os.access(self.executable(), os.X_OK):
            return (
                f"{self.package}@{self.version} is not installed in {self.prefix()} "
                "(.ci/run installs it with npm; LAMINATE_AGENTS_DIR chooses the folder)"
            )
        return None


def pinned(command: str) -> tuple[Agent, ...]:
    """The versions of ``command``'s package that ``tests/agents.txt`` pins, newest
    first (as listed)."""
    found = []
    for line in PINNED.read_text(encoding="utf-8").splitlines():
        package, _, version = line.strip().rpartition("@")
        if package == PACKAGES[command]:
            found.append(Agent(command, version))
    return tuple(found)


def needs(agent: Agent) -> pytest.MarkDecorator:
    """Skip a test, saying why, when ``agent`` cannot run here."""
    reason = agent.missing()
    return pytest.mark.skipif(reason is not None, reason=reason or "")


def versions(command: str) -> list[object]:
    """``pytest.param`` for each pinned version of ``command``, skipped (saying why) where
    it cannot run."""
    return [pytest.param(agent, id=agent.id, marks=needs(agent)) for agent in pinned(command)]


@dataclass(frozen=True)
class Run:
    """A finished agent run."""

    returncode: int
    stdout: str
    stderr: str
    workdir: Path

    def describe(self) -> str:
        return (
            f"exit {self.returncode}\n--- stdout\n{self.stdout[-3000:]}\n"
            f"--- stderr\n{self.stderr[-3000:]}"
        )


def _base_env(home: Path) -> dict[str, str]:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "NO_COLOR": "1",
    }
    # Loopback only: a proxy of the machine must not see these requests.
    env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
    return env


def _run(command: list[str], env: dict[str, str], workdir: Path, timeout: float) -> Run:
    try:
        done = subprocess.run(
            command,
            cwd=workdir,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else exc.stdout or ""
        err = exc.stderr.decode() if isinstance(exc.stderr, bytes) else exc.stderr or ""
        return Run(-1, out, err + f"\n(timed out after {timeout} s)", workdir)
    return Run(done.returncode, done.stdout, done.stderr, workdir)


def _dirs(tmp: Path) -> tuple[Path, Path]:
    home, work = tmp / "home", tmp / "work"
    home.mkdir()
    work.mkdir()
    return home, work


def claude_way(way: str, base_url: str) -> dict[str, str]:
    """The environment that points Claude Code at ``base_url`` one ``way``: the Anthropic
    API (``"anthropic"``), or a cloud's endpoints of it without the cloud's own
    authentication (``"bedrock"``: InvokeModel; ``"vertex"``: rawPredict, whose base URL
    ends in ``/v1`` as the SDK's does)."""
    if way == "bedrock":
        return {
            "CLAUDE_CODE_USE_BEDROCK": "1",
            "ANTHROPIC_BEDROCK_BASE_URL": base_url,
            "CLAUDE_CODE_SKIP_BEDROCK_AUTH": "1",
            "AWS_REGION": "us-east-1",
        }
    if way == "vertex":
        return {
            "CLAUDE_CODE_USE_VERTEX": "1",
            "ANTHROPIC_VERTEX_BASE_URL": f"{base_url}/v1",
            "CLAUDE_CODE_SKIP_VERTEX_AUTH": "1",
            "ANTHROPIC_VERTEX_PROJECT_ID": "laminate-test",
            "CLOUD_ML_REGION": "us-east5",
        }
    return {"ANTHROPIC_BASE_URL": base_url, "ANTHROPIC_API_KEY": "sk-laminate-test"}


def run_claude(
    agent: Agent,
    base_url: str,
    task: str,
    tmp: Path,
    *,
    timeout: float = 60,
    way: str = "anthropic",
) -> Run:
    """``claude -p TASK`` (that version of Claude Code) in a fresh working directory under
    ``tmp``, its model at ``base_url`` (reached ``way``: see :func:`claude_way`), allowed
    to use its ``Write`` tool; the answer printed as JSON."""
    home, work = _dirs(tmp)
    env = _base_env(home) | claude_way(way, base_url)
    env |= {
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        # A failure is the test's answer: no retries with back-off.
        "CLAUDE_CODE_MAX_RETRIES": "0",
    }
    command = [str(agent.executable()), "-p", task, "--allowedTools", "Write"]
    return _run([*command, "--output-format", "json"], env, work, timeout)


def codex_config(base_url: str, model: str) -> str:
    """Codex's ``config.toml`` for a model served at ``base_url`` (the proxy's root)."""
    return (
        'model_provider = "proxy"\n'
        f'model = "{model}"\n'
        "\n"
        "[model_providers.proxy]\n"
        'name = "laminate proxy"\n'
        f'base_url = "{base_url}/v1"\n'
        'env_key = "OPENAI_API_KEY"\n'
        'wire_api = "responses"\n'
        # A failure is the test's answer: no retries with back-off.
        "request_max_retries = 0\n"
        "stream_max_retries = 0\n"
    )


def run_codex(
    agent: Agent,
    base_url: str,
    task: str,
    tmp: Path,
    *,
    model: str = "local-model",
    timeout: float = 60,
) -> Run:
    """``codex exec TASK`` (that version of Codex) in a fresh working directory under
    ``tmp``, its model at ``base_url``, free to run commands; its events printed as JSON
    lines."""
    home, work = _dirs(tmp)
    codex_home = tmp / ".codex"
    codex_home.mkdir()
    (codex_home / "config.toml").write_text(codex_config(base_url, model))
    env = _base_env(home) | {"CODEX_HOME": str(codex_home), "OPENAI_API_KEY": "sk-laminate-test"}
    command = [str(agent.executable()), "exec", "--skip-git-repo-check"]
    command += ["--dangerously-bypass-approvals-and-sandbox", "--json", task]
    return _run(command, env, work, timeout)
