"""The command line and the package with no extra installed.

The suite itself runs with every extra, so each check here runs in a fresh interpreter
whose import system refuses every module an extra brings (Starlette, uvicorn, rich,
orjson, httptools, uvloop, isal), as a bare ``pip install`` would have it. The commands
that need none (``--help``, ``--version``, ``replay``, ``translate``) must work; the ones
that do (``proxy``, ``demo``, ``serve``) must fail in one line that names the extra.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Final

import pytest

from laminate._core import jsonlib
from laminate._core.extras import MissingExtraError, install_command, missing_extra
from laminate._core.version import DISTRIBUTION, VERSION, installed_version

from .support import FIXTURES, ROOT

EXTRAS_MODULES: Final = ("starlette", "uvicorn", "rich", "orjson", "httptools", "uvloop", "isal")

# Installs a finder ahead of every other that refuses the extras' modules, checks that
# none was imported before it, then runs the given statement.
_PRELUDE: Final = """\
import sys
BLOCKED = frozenset(sys.argv[1].split(","))
already = sorted(name for name in sys.modules if name.partition(".")[0] in BLOCKED)
if already:
    sys.exit(f"imported before the blocker: {already}")

class Refuse:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, Refuse())
del sys.argv[1]
"""

_RUN_CLI: Final = _PRELUDE + "from laminate._cli.main import main\nsys.exit(main(sys.argv[1:]))\n"

BODY: Final = {
    "model": "claude-sonnet-4-5",
    "max_tokens": 100,
    "messages": [{"role": "user", "content": "hi"}],
}


@pytest.fixture(autouse=True, scope="module")
def json_backend() -> str:
    """Once, not once per JSON backend: each check runs in its own interpreter, which
    has no orjson."""
    return jsonlib.BACKEND


def bare(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    """``code`` run in a fresh interpreter without the extras, with ``args`` as its
    ``sys.argv[1:]``; this tree's ``src`` comes first on its path."""
    path = os.pathsep.join(filter(None, [str(ROOT / "src"), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": path, "PYTHONIOENCODING": "utf-8", "COLUMNS": "100"}
    return subprocess.run(
        [sys.executable, "-c", code, ",".join(EXTRAS_MODULES), *args],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=env,
        timeout=60,
        check=False,
    )


def laminate_bare(*args: str) -> subprocess.CompletedProcess[str]:
    """``laminate ARGS`` without the extras."""
    return bare(_RUN_CLI, *args)


def test_the_blocker_refuses_the_extras() -> None:
    """The check is real: with the blocker, importing an extra's module fails."""
    result = bare(_PRELUDE + "import starlette\n")
    assert result.returncode == 1
    assert "ModuleNotFoundError: No module named 'starlette'" in result.stderr


# -- what needs no extra --------------------------------------------------------------------


def test_help_lists_every_command() -> None:
    result = laminate_bare("--help")
    assert (result.returncode, result.stderr) == (0, "")
    for command in ("replay", "record", "serve", "demo", "translate", "proxy", "--version"):
        assert command in result.stdout


@pytest.mark.parametrize("command", ["replay", "record", "serve", "demo", "translate", "proxy"])
def test_help_of_every_command(command: str) -> None:
    result = laminate_bare(command, "--help")
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout.startswith(f"usage: laminate {command}")


def test_version() -> None:
    result = laminate_bare("--version")
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout == f"laminate {installed_version()}\n"


def test_replay_a_fixture() -> None:
    fixture = FIXTURES / "openai" / "tool-call.sse"
    result = laminate_bare("replay", str(fixture), "--format", "final")
    assert (result.returncode, result.stderr) == (0, "")
    final = json.loads(result.stdout)
    assert final["stop_reason"]["kind"] == "tool_use"
    assert [block["name"] for block in final["content"]] == ["get_weather"]


def test_replay_pretty_without_rich() -> None:
    fixture = FIXTURES / "openai" / "tool-call.sse"
    result = laminate_bare("replay", str(fixture), "--format", "pretty")
    assert (result.returncode, result.stderr) == (0, "")
    assert "tool calls    get_weather" in result.stdout


def test_translate_a_request(tmp_path: Path) -> None:
    request = tmp_path / "request.json"
    request.write_text(json.dumps(BODY), encoding="utf-8")
    result = laminate_bare("translate", "--from", "anthropic", "--to", "openai", str(request))
    assert (result.returncode, result.stderr) == (0, "")
    shown = json.loads(result.stdout)
    assert shown["path"] == "/v1/chat/completions"
    assert shown["body"]["messages"] == [{"role": "user", "content": "hi"}]


def test_importing_laminate_needs_no_extra() -> None:
    code = _PRELUDE + (
        "import laminate, laminate.testing\n"
        "from laminate._proxy import config\n"
        "try:\n"
        "    import laminate.proxy\n"
        "except ImportError as exc:\n"
        "    print(type(exc).__name__, exc.name, exc)\n"
    )
    result = bare(code)
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout == (
        'MissingExtraError starlette the proxy needs the "proxy" extra (starlette is not '
        f"installed): install it with {install_command('proxy')} in a clone of laminate\n"
    )


# -- what needs an extra --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "feature", "extra", "module"),
    [
        (["proxy", "--backend", "openai:http://127.0.0.1:9/v1"], "the proxy", "proxy", "starlette"),
        (["proxy"], "the proxy", "proxy", "starlette"),
        (["demo"], "the demo", "demo", "uvicorn"),
        (["demo", "--web", "--no-open"], "the demo", "demo", "uvicorn"),
        (["serve", "fixtures"], "the mock provider", "demo", "uvicorn"),
    ],
    ids=["proxy", "proxy-no-backend", "demo", "demo-web", "serve"],
)
def test_a_missing_extra_is_one_line(
    argv: list[str], feature: str, extra: str, module: str
) -> None:
    result = laminate_bare(*argv)
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == (
        f'laminate: {feature} needs the "{extra}" extra ({module} is not installed): '
        f'install it with python -m pip install -e ".[{extra}]" in a clone of laminate\n'
    )


# -- the pieces -----------------------------------------------------------------------------


def test_missing_extra_names_the_top_level_module() -> None:
    error = missing_extra("the proxy", "proxy", ModuleNotFoundError("no", name="starlette.types"))
    assert isinstance(error, ImportError)
    assert (error.name, error.extra, error.feature) == ("starlette", "proxy", "the proxy")
    assert missing_extra("another", "demo", error) is error
    assert "(" not in str(MissingExtraError("the demo", "demo", None))


def test_the_source_version_is_the_project_version() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert (project["name"], project["version"]) == (DISTRIBUTION, VERSION)
    import laminate

    assert laminate.__version__ == VERSION
