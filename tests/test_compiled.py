"""A compiled-only install: laminate imports and reads streams from ``.pyc`` files alone
(a zipapp, a frozen application, an image that strips sources), so nothing it runs may
need its own source at import or at run time."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import laminate
from laminate import LaminateError, NormalizedResponse
from laminate._core.serialize import response_to_dict

from .support import FIXTURES, stream_fixtures

# One process reads every fixture of the stream APIs, with the provider forced, and
# prints what it got: the error's type, if any, and the (partial) answer.
_READ = """
import json
import sys
from pathlib import Path

import laminate
from laminate._core.serialize import response_to_dict

here = Path(laminate.__file__)
assert here.suffix == ".pyc" and not list(here.parent.rglob("*.py")), here
results = {}
for path, provider in json.loads(sys.stdin.read()):
    try:
        response = laminate.collect_sync([Path(path).read_bytes()], provider=provider)
        error = None
    except laminate.LaminateError as exc:
        response, error = exc.partial, type(exc).__name__
    results[path] = [error, None if response is None else response_to_dict(response)]
print(json.dumps(results))
"""

# The folders of the seven stream APIs' own fixtures (Bedrock's binary event stream
# among them).
_APIS = ("anthropic", "bedrock", "cohere", "gemini", "ollama", "openai", "openai-responses")


def _read_here(path: Path, provider: str) -> list[object]:
    response: NormalizedResponse | None
    try:
        response = laminate.collect_sync([path.read_bytes()], provider=provider)
        error = None
    except LaminateError as exc:
        response, error = exc.partial, type(exc).__name__
    return [error, None if response is None else response_to_dict(response)]


def test_a_compiled_only_install_imports_and_reads_every_api(tmp_path: Path) -> None:
    source = Path(laminate.__file__).parent
    package = tmp_path / "laminate"
    shutil.copytree(source, package, ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", "-b", str(package)],
        check=True,
        capture_output=True,
    )
    for module in package.rglob("*.py"):
        module.unlink()
    assert list(package.rglob("*.pyc"))
    fixtures = [f for f in stream_fixtures() if f.path.parent.name in _APIS]
    assert {f.path.parent.name for f in fixtures} == set(_APIS)
    wanted = [[str(f.path), f.provider] for f in fixtures]
    done = subprocess.run(
        [sys.executable, "-c", _READ],
        input=json.dumps(wanted),
        env={**os.environ, "PYTHONPATH": str(tmp_path)},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads(done.stdout)
    for fixture in fixtures:
        got = results[str(fixture.path)]
        assert got == _read_here(fixture.path, fixture.provider), fixture.path.relative_to(FIXTURES)
        assert got[1] is not None
