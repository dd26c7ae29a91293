"""The code base stays typed and linted (mypy --strict and ruff run with the tests), and
each name of a class or a type means one thing."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from collections import defaultdict

import pytest

from .support import ROOT

pytestmark = pytest.mark.static


def _run(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)


@pytest.mark.skipif(shutil.which("ruff") is None, reason="ruff is not installed")
def test_ruff_lint() -> None:
    result = _run("ruff", "check", "--output-format", "concise", ".")
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.skipif(shutil.which("ruff") is None, reason="ruff is not installed")
def test_ruff_format() -> None:
    result = _run("ruff", "format", "--check", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_strict() -> None:
    result = _run(sys.executable, "-m", "mypy")
    assert result.returncode == 0, result.stdout + result.stderr


def _types_defined(source: str) -> list[str]:
    """The classes and type aliases a module defines at its top (``Name = ...`` with a
    capitalized name that is not a constant's), private ones left out."""
    names = []
    for node in ast.parse(source).body:
        if isinstance(node, ast.ClassDef):
            names.append(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names += [
                t.id
                for t in targets
                if isinstance(t, ast.Name) and t.id[:1].isupper() and not t.id.isupper()
            ]
    return [name for name in names if not name.startswith("_")]


def test_each_type_name_means_one_thing() -> None:
    """No two modules of ``src`` define a class or type alias of the same name: a reader
    who meets ``Document`` or ``Writer`` knows which one it is."""
    where: defaultdict[str, list[str]] = defaultdict(list)
    src = ROOT / "src" / "laminate"
    for path in sorted(src.rglob("*.py")):
        for name in _types_defined(path.read_text(encoding="utf-8")):
            where[name].append(path.relative_to(src).as_posix())
    twice = {name: paths for name, paths in where.items() if len(paths) > 1}
    assert twice == {}, twice
    sample = "class Aa: ...\nBb = int\nCc: TypeAlias = str\nMAX = 2\n_Dd = str\n"
    assert _types_defined(sample) == ["Aa", "Bb", "Cc"]
