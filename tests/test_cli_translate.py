"""``laminate translate``: a request of one API written for another."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from laminate._cli.main import main

BODY = {
    "model": "claude-sonnet-4-5",
    "max_tokens": 100,
    "system": "Be brief.",
    "messages": [{"role": "user", "content": "hi"}],
    "top_k": 3,
}


@pytest.fixture
def request_file(tmp_path: Path) -> Path:
    path = tmp_path / "request.json"
    path.write_text(json.dumps(BODY), encoding="utf-8")
    return path


def test_it_prints_the_path_the_body_and_the_losses(
    request_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["translate", "--from", "anthropic", "--to", "openai", str(request_file)]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["path"] == "/v1/chat/completions"
    assert shown["body"]["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "hi"},
    ]
    assert shown["losses"] == [{"path": "top_k", "reason": "unsupported"}]


def test_body_prints_the_body_alone(request_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["translate", "--from", "anthropic", "--to", "openai-responses", "--body"]
    assert main([*argv, str(request_file)]) == 0
    body = json.loads(capsys.readouterr().out)
    assert body["instructions"] == "Be brief."


def test_strict_fails_in_one_line_when_something_would_be_lost(
    request_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["translate", "--from", "anthropic", "--to", "openai", "--strict", str(request_file)]
    assert main(argv) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("laminate: TranslationError:")
    assert "top_k (unsupported)" in captured.err
    assert captured.err.count("\n") == 1


def test_an_invalid_body_and_a_missing_file_are_one_line_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"model": 3, "messages": []}', encoding="utf-8")
    assert main(["translate", "--from", "anthropic", "--to", "openai", str(bad)]) == 1
    assert "at model" in capsys.readouterr().err
    assert main(["translate", "--from", "anthropic", "--to", "openai", str(tmp_path / "no")]) == 1
    assert "No such file" in capsys.readouterr().err


def test_an_unknown_api_is_a_usage_error(
    request_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["translate", "--from", "nope", "--to", "openai", str(request_file)]) == 2
    assert "invalid choice" in capsys.readouterr().err
