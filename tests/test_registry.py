"""One home per API: no code outside an API's package names it.

Adding an API is one package under ``_apis`` and one line in ``_apis/registry.py``; the
layers around the APIs (framing, normalizer, SDK adapters, tool loop, mock server, demo)
ask the records and never name one. This is checked mechanically: in every module under
``src/laminate``, the string constants and identifiers outside documentation (docstrings,
bare strings, ``*_DOC`` texts) may name an API (its provider name or its package's name)
only in that API's own package, in the registry, and in the files whose mentions are the
public names (``parse_<name>_response``). Comments are not code and are not read.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
from collections.abc import Iterator
from dataclasses import fields, is_dataclass, replace
from pathlib import Path
from typing import Final, get_args

import pytest

from laminate._apis.registry import APIS, ItemsTurn, MessageTurn
from laminate._apis.spec import Api, Endpoint, Mock, common_error_body

pytestmark = pytest.mark.static

SRC: Final = Path(__file__).resolve().parent.parent / "src" / "laminate"
APIS_DIR: Final = SRC / "_apis"

# Files that may name every API: the registry, and the public names built on the APIs.
EVERY_API: Final = frozenset({"_apis/registry.py", "__init__.py", "_io/complete.py"})
# An API that carries another's frames names it, and only where it does (file, name).
CARRIED: Final = frozenset(
    {
        # InvokeModelWithResponseStream: Anthropic Messages events inside Bedrock's
        # event stream (their chunks are read as Anthropic's; the demo's model id).
        ("_apis/bedrock/sdk.py", "anthropic"),
        ("_apis/bedrock/__init__.py", "anthropic"),
        ("_apis/bedrock/read.py", "anthropic"),
        # ... and Bedrock's invocation metrics on the last Anthropic event.
        ("_apis/anthropic/read.py", "bedrock"),
    }
)


def packages() -> dict[str, Api]:
    """Each API package under ``_apis`` and the record it builds."""
    found: dict[str, Api] = {}
    for init in sorted(APIS_DIR.glob("*/__init__.py")):
        module = importlib.import_module(f"laminate._apis.{init.parent.name}")
        found[init.parent.name] = module.API
    return found


def names_of(package: str, record: Api) -> set[str]:
    """The ways code could name an API: its provider name and its package's name."""
    return {record.name, record.name.replace("-", "_"), package, package.replace("_", "-")}


def mentioned(text: str, name: str) -> bool:
    # A name as a word of its own: `bedrock_frame` and `"openai-responses"` count (`_`,
    # `-`, `.` separate words), `cohereant` would not.
    return (
        re.search(rf"(?<![a-z0-9]){re.escape(name)}(?![a-z0-9])", text, re.IGNORECASE) is not None
    )


def _documentation(tree: ast.AST) -> set[int]:
    """The string nodes that are documentation: bare strings (docstrings, attribute
    docstrings) and texts assigned to ``*_DOC`` names."""
    ids: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            ids.add(id(node.value))
        if isinstance(node, ast.Assign | ast.AnnAssign) and isinstance(node.value, ast.Constant):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id.endswith("_DOC") for t in targets):
                ids.add(id(node.value))
    return ids


def code_words(source: str) -> Iterator[tuple[int, str]]:
    """``(line, text)`` for every string constant and identifier outside documentation."""
    tree = ast.parse(source)
    documentation = _documentation(tree)
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        match node:
            case ast.Constant(value=str(text)) if id(node) not in documentation:
                yield line, text
            case ast.Name(id=text) | ast.Attribute(attr=text) | ast.arg(arg=text):
                yield line, text
            case ast.FunctionDef(name=text) | ast.AsyncFunctionDef(name=text):
                yield line, text
            case ast.ClassDef(name=text):
                yield line, text
            case ast.alias(name=text, asname=alias):
                yield line, f"{text} {alias or ''}"
            case ast.ImportFrom(module=str(text)):
                yield line, text
            case ast.keyword(arg=str(text)):
                yield line, text


def allowed(path: str, name: str, owners: dict[str, set[str]]) -> bool:
    if path in EVERY_API or (path, name) in CARRIED:
        return True
    parts = path.split("/")
    package = parts[1] if len(parts) > 2 and parts[0] == "_apis" else None
    # A name is also allowed where a longer name contains it (`openai` in the package of
    # `openai-responses`, whose SDK is `openai`'s).
    return package is not None and any(mentioned(own, name) for own in owners[package])


def test_every_registered_api_has_a_package() -> None:
    assert sorted(r.name for r in packages().values()) == sorted(APIS)


def test_no_code_outside_an_api_package_names_the_api() -> None:
    owners = {package: names_of(package, record) for package, record in packages().items()}
    every_name = sorted(set().union(*owners.values()))
    found = [
        f"src/laminate/{path}:{line}: {name!r} in {text[:60]!r}"
        for file in sorted(SRC.rglob("*.py"))
        for path in [file.relative_to(SRC).as_posix()]
        for line, text in code_words(file.read_text(encoding="utf-8"))
        for name in every_name
        if mentioned(text, name) and not allowed(path, name, owners)
    ]
    assert not found, "API names outside their package:\n" + "\n".join(found)


def test_the_check_sees_code_and_not_documentation() -> None:
    source = '''
"""The openai module docstring."""
_INTRO_DOC = """openai, in a text for docstrings"""
def f(ollama_client):
    """gemini in a docstring."""
    x = "cohere"  # bedrock in a comment
    "anthropic as a bare string"
    return read_bedrock(x)
'''
    words = {text for _, text in code_words(source)}
    assert {"ollama_client", "cohere", "read_bedrock"} <= words
    candidates = ("openai", "ollama", "gemini", "cohere", "bedrock", "anthropic")
    named = [n for n in candidates if any(mentioned(w, n) for w in words)]
    assert named == ["ollama", "cohere", "bedrock"]
    assert not mentioned("cohereant", "cohere")
    assert mentioned("openai.types.responses", "openai")


def test_every_carried_mention_is_still_there() -> None:
    for path, name in sorted(CARRIED):
        words = code_words((SRC / path).read_text(encoding="utf-8"))
        assert any(mentioned(text, name) for _, text in words), (path, name)


def test_every_api_has_one_assistant_turn_shape() -> None:
    """``assistant_message``'s typing lists every API once: a message, or a list of items."""
    message, items = set(get_args(MessageTurn)), set(get_args(ItemsTurn))
    assert not message & items
    assert message | items == set(APIS)


def test_every_handler_and_body_reader_is_registered_as_it_is() -> None:
    """One signature for every API, ``(assembler, options)``: no wrapper in between."""
    for package, record in packages().items():
        name = record.name
        read = importlib.import_module(f"laminate._apis.{package}.read")
        assert record.handler.__module__ == read.__name__, name
        assert record.read_body is read.parse_body, name
        handler = list(inspect.signature(record.handler).parameters)
        assert handler == ["assembler", "options"], name
        parameters = list(inspect.signature(record.read_body).parameters)
        assert parameters == ["assembler", "body", "options"], name


def test_every_api_with_a_writer_is_reached_over_http() -> None:
    """A record that writes the API's answers or requests has an ``Http`` record: without
    one the translating proxy would neither serve the API's clients nor call it as a
    backend, and nothing else would say so."""
    unreached = [
        name
        for name, record in APIS.items()
        if (record.encoder is not None or record.write_request is not None) and record.http is None
    ]
    assert unreached == [], f"records with a writer and no http=Http(...): {unreached}"


def test_a_mock_answers_as_its_http_record_says_unless_it_states_otherwise() -> None:
    record = APIS["anthropic"]
    assert record.http is not None
    assert record.mock is not None
    for built in APIS.values():
        if built.mock is not None and built.http is not None:
            assert built.mock.endpoints == built.http.endpoints, built.name
            assert built.mock.error_body is built.http.error_body, built.name
    demo = Mock(demo_model="m", demo_path="/p", demo_request=record.mock.demo_request)
    own = (Endpoint("/mock/chat", streams=True),)
    stated = replace(record, mock=replace(demo, endpoints=own, error_body=common_error_body))
    assert stated.mock is not None
    assert stated.mock.endpoints == own
    assert stated.mock.error_body is common_error_body
    defaulted = replace(record, mock=demo)
    assert defaulted.mock is not None
    assert defaulted.mock.endpoints == record.http.endpoints
    assert defaulted.mock.error_body is record.http.error_body
    assert record.http.error_body is not common_error_body
    with pytest.raises(TypeError, match="Http"):
        replace(record, http=None, mock=demo)
    assert replace(record, http=None, mock=stated.mock).mock == stated.mock


def test_adding_an_api_names_every_part_of_the_record() -> None:
    """``docs/architecture.md``'s walk-through of adding an API names every record an
    ``Api`` is built from, so that one who follows it fills in each."""
    doc = (SRC.parent.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = doc.split("## Adding an API", 1)[1].split("\n## ", 1)[0]
    parts = {
        type(value).__name__
        for record in APIS.values()
        for part in fields(Api)
        for value in [getattr(record, part.name)]
        if is_dataclass(value)
    }
    assert {"Hints", "Sdk", "Http", "Mock"} <= parts
    missing = [f"{name.lower()}={name}(...)" for name in sorted(parts)]
    missing = [text for text in missing if text not in section]
    assert missing == [], f"the walk-through in docs/architecture.md leaves out {missing}"


def test_every_file_of_an_api_folder_is_in_the_documented_table() -> None:
    """``docs/architecture.md``'s table of one API's folder names each file the folders
    hold (named by direction: ``read.py``, ``write_stream.py``, ``write_body.py``,
    ``request.py``), and every API has the four."""
    doc = (SRC.parent.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = doc.split("## Inside one API's folder", 1)[1].split("\n## ", 1)[0]
    rows = set(re.findall(r"^\| `([a-z_]+\.py)` \|", section, re.MULTILINE))
    assert {"read.py", "write_stream.py", "write_body.py", "request.py"} <= rows
    for package in packages():
        files = {path.name for path in (APIS_DIR / package).glob("*.py")}
        assert files <= rows, f"_apis/{package}: {sorted(files - rows)} not in the table"
        assert {"read.py", "write_stream.py", "write_body.py", "request.py"} <= files, package
