"""Every Python example in the README and the documentation site runs as written.

The collector reads ``README.md`` and ``docs/**/*.md``, takes every fenced ```` ```python ````
block (indented ones inside list items too) and runs it in a fresh interpreter, with the
repository root as the working directory, as a reader who pastes it into a file would.
Examples are complete programs: they import what they use, read the bundled fixtures by a
path relative to the root, and reach a provider through ``laminate.testing.mock_server``
on loopback. So an example that drifts from the code (a renamed argument, an answer that
no longer matches a fixture, an undefined name) fails here.

A block that cannot run offline (it needs real keys or a real server) is preceded by a
line ``<!-- not-run: why -->``; it is reported as skipped with that reason, and nothing
else is ever skipped. Warnings are errors in the examples, as in the test suite.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from .support import ROOT

FENCE_OPEN = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})\s*(?P<info>[^`\s]*)")
NOT_RUN = re.compile(r"^\s*<!--\s*not-run:\s*(?P<reason>.*?)\s*-->\s*$")
PYTHON_INFO = frozenset({"python", "py", "python3"})
TIMEOUT = 120


@dataclass(frozen=True)
class Example:
    """One fenced Python block: where it is, its code, and why it is not run (if so)."""

    path: Path
    line: int  # 1-based line of the first line of code
    code: str
    not_run: str | None

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(ROOT).as_posix()}:{self.line}"


def doc_files() -> list[Path]:
    """The README and every page of the site, in a stable order."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def examples_in(path: Path) -> list[Example]:
    """The fenced Python blocks of one Markdown file.

    A fence closes at a line holding only a fence of the same character, at least as long
    (CommonMark); the indentation of the opening fence is removed from the block's lines.
    """
    lines = path.read_text(encoding="utf-8").splitlines()
    found: list[Example] = []
    previous = ""  # the last non-blank line before the current one
    i = 0
    while i < len(lines):
        opening = FENCE_OPEN.match(lines[i])
        if opening is None:
            if lines[i].strip():
                previous = lines[i]
            i += 1
            continue
        fence, indent = opening["fence"], len(opening["indent"])
        closing = re.compile(rf"^\s*{re.escape(fence[0])}{{{len(fence)},}}\s*$")
        end = i + 1
        while end < len(lines) and not closing.match(lines[end]):
            end += 1
        if opening["info"].lower() in PYTHON_INFO:
            marker = NOT_RUN.match(previous)
            code = "\n".join(line[indent:] for line in lines[i + 1 : end])
            found.append(Example(path, i + 2, code, marker["reason"] if marker else None))
        previous = lines[end] if end < len(lines) else ""
        i = end + 1
    return found


def all_examples() -> list[Example]:
    return [example for path in doc_files() for example in examples_in(path)]


# Collected once, so that the examples run are exactly the ones the tests are named after.
EXAMPLES = all_examples()


def _param(example: Example) -> object:
    marks = [pytest.mark.skip(reason=f"not run: {example.not_run}")] if example.not_run else []
    return pytest.param(example, id=example.where, marks=marks)


def run_example(example: Example, directory: Path, json_backend: str) -> Outcome:
    """Run one example as a script in a fresh interpreter, from the repository root."""
    # The example runs with the suite's JSON backend (orjson is laminate's default when
    # installed; LAMINATE_JSON=stdlib forces the standard library).
    env = {key: value for key, value in os.environ.items() if key != "LAMINATE_JSON"}
    if json_backend == "stdlib":
        env["LAMINATE_JSON"] = "stdlib"
    # Blank lines first, so that a traceback's line numbers are the document's.
    script = directory / f"{example.path.stem}_{example.line}.py"
    script.write_text("\n" * (example.line - 1) + example.code + "\n", encoding="utf-8")
    command = [
        sys.executable,
        "-W",
        "error",
        # httpx nests async generators without aclosing() (as in pyproject's filters).
        "-W",
        "ignore:Async generator:ResourceWarning",
        str(script),
    ]
    try:
        result = subprocess.run(
            command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=TIMEOUT, check=False
        )
    except subprocess.TimeoutExpired:
        return Outcome(False, f"no answer within {TIMEOUT} s")
    return Outcome(result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:])


@dataclass(frozen=True)
class Outcome:
    ok: bool
    output: str


@pytest.fixture(scope="session")
def example_outcomes(
    json_backend: str, tmp_path_factory: pytest.TempPathFactory
) -> dict[Example, Outcome]:
    """Every runnable example's outcome, run a few at a time: most of an example's time is
    an interpreter starting and a loopback server answering, not this machine's cores."""
    directory = tmp_path_factory.mktemp(f"examples-{json_backend}")
    runnable = [example for example in EXAMPLES if example.not_run is None]
    with ThreadPoolExecutor(max_workers=2 * (os.cpu_count() or 1)) as pool:
        outcomes = pool.map(lambda e: run_example(e, directory, json_backend), runnable)
        return dict(zip(runnable, outcomes, strict=True))


@pytest.mark.parametrize("example", [_param(e) for e in EXAMPLES])
def test_example_runs(example: Example, example_outcomes: dict[Example, Outcome]) -> None:
    outcome = example_outcomes[example]
    assert outcome.ok, f"the example at {example.where} failed:\n{outcome.output}"


def test_the_collector_finds_the_examples() -> None:
    examples = all_examples()
    assert len(examples) >= 40
    readme = [e for e in examples if e.path.name == "README.md"]
    assert readme, "the README shows one example that runs"
    assert all(e.not_run is None for e in readme)


def test_every_not_run_marker_gives_a_reason_and_precedes_a_python_block() -> None:
    marked = {(e.path, e.line) for e in all_examples() if e.not_run is not None}
    for path in doc_files():
        lines = path.read_text(encoding="utf-8").splitlines()
        for number, line in enumerate(lines, start=1):
            match = NOT_RUN.match(line)
            if match is None:
                continue
            assert match["reason"], f"{path.name}:{number}: say why the block is not run"
            following = next((n for n in range(number, len(lines)) if lines[n].strip()), None)
            assert following is not None, f"{path.name}:{number}: a marker with no block"
            assert (path, following + 2) in marked, (
                f"{path.name}:{number}: a not-run marker must directly precede a python block"
            )


def test_collector_reads_fences_as_commonmark(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "text\n"
        "```python\nprint(1)\n```\n"
        "<!-- not-run: needs a key -->\n\n"
        "```python\nimport secret\n```\n"
        "- a list item:\n\n"
        "  ```python\n  if True:\n      print(2)\n  ```\n"
        "````markdown\n```python\nnot code\n```\n````\n"
        "```console\n$ laminate demo\n```\n",
        encoding="utf-8",
    )
    found = examples_in(page)
    assert [(e.line, e.code, e.not_run) for e in found] == [
        (3, "print(1)", None),
        (8, "import secret", "needs a key"),
        (13, "if True:\n    print(2)", None),
    ]


def test_ci_runs_the_readme_commands() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    setup = readme.split("\n## Set-up\n", 1)[1].split("\n## ", 1)[0]
    commands = re.findall(r"^python -m pip install .*$", setup, flags=re.MULTILINE)
    assert len(commands) == 2, "the README's set-up shows two commands"
    demo, tests = commands
    assert demo == 'python -m pip install -e ".[demo]" && laminate demo'
    assert tests.endswith("&& python -m pytest")
    assert tests in ci.splitlines(), ".ci/run runs exactly the README's test command"
    lines = [line.strip() for line in ci.splitlines()]
    assert demo in lines, ".ci/run runs the README's first command as written"


def test_every_public_name_is_in_the_api_reference() -> None:
    import laminate

    reference = (ROOT / "docs" / "reference.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"^::: laminate\.(\w+)\s*$", reference, flags=re.MULTILINE))
    missing = sorted(set(laminate.__all__) - listed)
    assert not missing, f"add these public names to docs/reference.md: {missing}"
    assert listed <= {*laminate.__all__, "testing"}, "docs/reference.md names a private object"
