"""The command line, end to end: ``python -m laminate ...`` in a subprocess, plus the
replay matrix in-process (every fixture under every splitting) to keep the suite quick."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from laminate._cli import replay as _cli
from laminate._cli.main import main, split_bytes

from .support import FIXTURES, ROOT, Fixture, stream_fixtures, subset_mismatch

DEMO = ROOT / "src" / "laminate" / "_cli" / "demo_streams"
TOOL_CALLS = {
    "openai": FIXTURES / "openai" / "tool-call.sse",
    "openai-responses": FIXTURES / "openai-responses" / "function-call.sse",
    "anthropic": FIXTURES / "anthropic" / "tool-call.sse",
    "ollama": FIXTURES / "ollama" / "tool-call.ndjson",
}


def laminate(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONIOENCODING": "utf-8", "COLUMNS": "100"}
    return subprocess.run(
        [sys.executable, "-m", "laminate", *args],
        cwd=ROOT,
        input=stdin.decode() if stdin is not None else None,
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=env,
        timeout=60,
        check=False,
    )


def one_error_line(result: subprocess.CompletedProcess[str]) -> str:
    """The run failed with exactly one ``laminate: ...`` line on standard error."""
    assert result.returncode != 0
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("laminate: ")
    return lines[0]


def jsonl(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines()]


def run_main(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(list(args))
    out, err = capsys.readouterr()
    return status, out, err


# -- --help ---------------------------------------------------------------------------------


def test_help_in_a_subprocess() -> None:
    result = laminate("--help")
    assert result.returncode == 0
    for command in ("replay", "record", "serve", "demo"):
        assert command in result.stdout


@pytest.mark.parametrize("command", ["replay", "record", "serve", "demo"])
def test_help_for_every_command(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main([command, "--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: laminate {command}")


# -- replay ---------------------------------------------------------------------------------


def check_replay(provider: str, out: str) -> None:
    """JSON lines of every event, the last being ``response_done``, then the final
    response, which matches the fixture's expected file."""
    path = TOOL_CALLS[provider]
    lines = jsonl(out)
    assert lines[0]["event"] == "response_start"
    assert lines[0]["provider"] == provider
    assert lines[-2]["event"] == "response_done"
    final = lines[-1]["final"]
    assert final == lines[-2]["response"]
    expected = json.loads(path.with_name(path.stem + ".expected.json").read_text("utf-8"))
    wanted = {k: v for k, v in expected.items() if k not in ("description", "error")}
    assert subset_mismatch(wanted, final) is None
    assert any(line["event"] == "tool_input_delta" for line in lines)


@pytest.mark.parametrize("provider", ["openai-responses", "ollama"])
def test_replay_prints_events_then_the_final_response(provider: str) -> None:
    result = laminate("replay", str(TOOL_CALLS[provider].relative_to(ROOT)))
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    check_replay(provider, result.stdout)


@pytest.mark.parametrize("provider", sorted(TOOL_CALLS))
def test_replay_each_format(provider: str, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run_main(capsys, "replay", str(TOOL_CALLS[provider]))
    assert (status, err) == (0, "")
    check_replay(provider, out)


def test_replay_splits_give_the_same_output_in_a_subprocess() -> None:
    path = str(TOOL_CALLS["anthropic"].relative_to(ROOT))
    whole = laminate("replay", path)
    by_byte = laminate("replay", path, "--split", "bytes")
    assert whole.returncode == by_byte.returncode == 0
    assert whole.stdout == by_byte.stdout


@pytest.mark.parametrize("fixture", stream_fixtures(), ids=lambda f: f.id)
def test_replay_output_does_not_depend_on_the_split(
    fixture: Fixture, capsys: pytest.CaptureFixture[str]
) -> None:
    outputs = set()
    for split in ("whole", "bytes", "random:3"):
        status, out, err = run_main(capsys, "replay", str(fixture.path), "--split", split)
        outputs.add((status, out, err))
    assert len(outputs) == 1, outputs
    status, out, err = outputs.pop()
    assert (status == 0) == (fixture.expected.get("error") is None)
    if status:
        assert len(err.splitlines()) == 1


def test_replay_random_without_a_seed_says_which_seed(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(TOOL_CALLS["openai"])
    status, out, err = run_main(capsys, "replay", path, "--split", "random")
    assert status == 0
    seed = err.strip().rsplit("random:", 1)[1]
    assert run_main(capsys, "replay", path, "--split", f"random:{seed}")[1] == out


def test_replay_pretty_shows_text_reasoning_tool_calls_and_a_summary() -> None:
    result = laminate("replay", "--format", "pretty", str(DEMO / "anthropic" / "1-tool-calls.sse"))
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "\x1b[" not in out
    assert "thinking: The user wants a slug helper" in out
    assert "I'll write `slugify.py`" in out
    assert "→ write_file" in out
    assert "    path: slugify.py ✓" in out
    assert '          >>> slugify("Crème brûlée: 10 recipes!")' in out
    assert "    command: python -m doctest -v slugify.py ✓" in out
    assert "stop reason   tool_use" in out
    assert "tool calls    write_file, run_command" in out


def test_replay_final_prints_only_the_response() -> None:
    result = laminate("replay", "--format", "final", str(TOOL_CALLS["ollama"].relative_to(ROOT)))
    assert result.returncode == 0, result.stderr
    final = json.loads(result.stdout)
    assert final["provider"] == "ollama"
    assert final["content"][0]["name"] == "get_weather"
    assert final["stop_reason"]["kind"] == "tool_use"


def test_replay_reads_standard_input(capsys: pytest.CaptureFixture[str]) -> None:
    data = TOOL_CALLS["openai"].read_bytes()
    from_stdin = laminate("replay", "-", stdin=data)
    assert from_stdin.returncode == 0
    assert from_stdin.stdout == run_main(capsys, "replay", str(TOOL_CALLS["openai"]))[1]


def test_replay_forced_provider(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run_main(capsys, "replay", str(TOOL_CALLS["ollama"]), "--provider", "ollama")
    assert status == 0
    assert jsonl(out)[0]["provider"] == "ollama"


def test_replay_of_an_error_prints_the_events_before_it_then_one_line() -> None:
    result = laminate("replay", "fixtures/anthropic/error.sse")
    assert result.returncode == 1
    events = jsonl(result.stdout)
    assert [e["event"] for e in events[:3]] == ["response_start", "block_start", "text_delta"]
    assert not any("final" in e for e in events)
    line = one_error_line(result)
    assert "Overloaded" in line
    assert "overloaded_error" in line


def test_replay_of_a_truncated_stream(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run_main(capsys, "replay", "fixtures/openai/truncated.sse")
    assert status == 1
    assert out
    assert err.startswith("laminate: IncompleteStreamError")


def test_replay_a_missing_file() -> None:
    line = one_error_line(laminate("replay", "no/such/file.sse"))
    assert line == "laminate: no such file: no/such/file.sse"


def test_replay_an_undetectable_stream(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_bytes(b"hello there\n\nnothing to see\n")
    line = one_error_line(laminate("replay", str(path)))
    assert "could not detect the provider" in line
    assert "hello there" in line
    assert "--provider" in line


def test_replay_an_undetectable_json_stream(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "weird.ndjson"
    path.write_bytes(b'{"hello": 1}\n' * 10)
    status, _, err = run_main(capsys, "replay", str(path))
    assert status == 1
    assert len(err.splitlines()) == 1
    assert err.startswith("laminate: could not detect the provider")
    assert '{"hello": 1}' in err


def test_replay_an_empty_file_or_a_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "empty.sse"
    empty.write_bytes(b"")
    status, _, err = run_main(capsys, "replay", str(empty))
    assert (status, err) == (1, f"laminate: {empty} is empty\n")
    status, _, err = run_main(capsys, "replay", str(tmp_path))
    assert status == 1
    assert "is a directory" in err


@pytest.mark.parametrize(
    "args",
    [
        ["replay"],
        ["replay", "x.sse", "--split", "halves"],
        ["replay", "x.sse", "--split", "random:abc"],
        ["replay", "x.sse", "--format", "xml"],
        ["replay", "x.sse", "--provider", "gopher"],
        ["serve", "--port", "99999"],
        ["demo", "--pace", "fast"],
        ["nonsense"],
    ],
)
def test_bad_arguments_give_one_line_and_status_2(
    args: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    status, _, err = run_main(capsys, *args)
    assert status == 2
    assert len(err.splitlines()) == 1
    assert err.startswith("laminate: ")
    assert "--help" in err


def test_bad_arguments_in_a_subprocess() -> None:
    result = laminate("replay", "x.sse", "--split", "halves")
    assert result.returncode == 2
    assert "invalid split 'halves'" in one_error_line(result)


# -- --check --------------------------------------------------------------------------------


def test_check_on_a_good_fixture() -> None:
    result = laminate("replay", "--check", str(DEMO / "openai" / "1-tool-calls.sse"))
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("identical under 53 splittings: ")
    assert result.stdout.splitlines()[0].endswith(" events, ending in response_done")


def test_check_on_a_stream_that_ends_in_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run_main(capsys, "replay", "--check", "fixtures/ollama/truncated.ndjson")
    assert status == 0
    assert out.splitlines()[0].endswith(" events, then IncompleteStreamError")


def test_check_reports_the_first_difference(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    real = _cli._trace

    def trace(data: bytes, mode: str, provider: str | None, progress: Any = None) -> list[Any]:
        items = real(data, mode, provider, progress)
        if mode == "bytes":  # pretend splitting byte by byte lost a text delta
            del items[3]
        return items

    monkeypatch.setattr(_cli, "_trace", trace)
    status, out, err = run_main(capsys, "replay", "--check", str(TOOL_CALLS["openai"]))
    assert status == 1
    assert out.startswith("different: split 'bytes' differs from 'whole' at item 3")
    assert "  whole: " in out
    assert "  bytes: " in out
    assert err == "laminate: the events depend on the splitting (first seen with bytes)\n"


# -- split_bytes ----------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["whole", "lines", "bytes", "random:0", "random:42"])
def test_split_bytes_pieces_join_back(mode: str) -> None:
    data = (FIXTURES / "openai" / "text.sse").read_bytes() + b"\r\ntail"
    pieces = list(split_bytes(data, mode))
    assert b"".join(pieces) == data
    assert all(pieces)


def test_split_bytes_modes() -> None:
    assert list(split_bytes(b"a\r\nb\nc", "lines")) == [b"a\r\n", b"b\n", b"c"]
    assert list(split_bytes(b"abc", "bytes")) == [b"a", b"b", b"c"]
    data = bytes(range(256)) * 8
    assert list(split_bytes(data, "random:5")) == list(split_bytes(data, "random:5"))
    assert list(split_bytes(data, "random:5")) != list(split_bytes(data, "random:6"))


# -- record against serve -------------------------------------------------------------------


@pytest.fixture(scope="module")
def served() -> Iterator[str]:
    """``laminate serve fixtures --port 0`` in a subprocess; yields its base URL."""
    with subprocess.Popen(
        [sys.executable, "-m", "laminate", "serve", "fixtures", "--port", "0"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        encoding="utf-8",
    ) as process:
        try:
            assert process.stdout is not None
            banner = process.stdout.readline()
            assert banner.startswith("serving fixtures on http://127.0.0.1:"), banner
            yield banner.split(" on ", 1)[1].split()[0]
        finally:
            process.terminate()
            process.wait(timeout=10)


def request_file(tmp_path: Path, body: dict[str, Any]) -> str:
    path = tmp_path / "request.json"
    path.write_text(json.dumps(body), "utf-8")
    return str(path)


def test_record_saves_the_served_bytes_exactly(served: str, tmp_path: Path) -> None:
    recording = FIXTURES / "anthropic" / "thinking.sse"
    body = request_file(tmp_path, {"model": "thinking", "stream": True, "messages": []})
    output = tmp_path / "saved.sse"
    result = laminate(
        "record", served + "/v1/messages", "--body", body, "-o", str(output), "--format", "jsonl"
    )
    assert result.returncode == 0, result.stderr
    assert output.read_bytes() == recording.read_bytes()
    events = jsonl(result.stdout)
    assert [e["event"] for e in events[:2]] == ["response_start", "block_start"]
    assert events[-2]["event"] == "response_done"
    size = len(recording.read_bytes())
    assert result.stderr == f"laminate: saved {size} bytes to {output} (HTTP 200)\n"


@pytest.mark.parametrize(
    ("endpoint", "recording"),
    [
        ("/v1/chat/completions", FIXTURES / "openai" / "parallel-tool-calls.sse"),
        ("/v1/responses", FIXTURES / "openai-responses" / "parallel-function-calls.sse"),
        ("/api/chat", FIXTURES / "ollama" / "tool-call.ndjson"),
    ],
)
def test_record_each_provider(
    served: str,
    tmp_path: Path,
    endpoint: str,
    recording: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    body = request_file(tmp_path, {"model": recording.stem, "stream": True, "messages": []})
    output = tmp_path / "saved"
    status, out, err = run_main(
        capsys, "record", served + endpoint, "--body", body, "-o", str(output)
    )
    assert status == 0, err
    assert output.read_bytes() == recording.read_bytes()
    assert "stop reason   tool_use" in out  # the pretty rendering, the default for record
    assert err.startswith("laminate: saved ")


def test_record_with_a_header_and_a_stream_error(
    served: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body = request_file(tmp_path, {"stream": True, "messages": []})
    output = tmp_path / "saved.sse"
    status, out, err = run_main(
        capsys,
        "record",
        served + "/v1/messages",
        "--body",
        body,
        "--header",
        "X-Laminate-Fixture: error",
        "-o",
        str(output),
    )
    assert status == 1
    assert output.read_bytes() == (FIXTURES / "anthropic" / "error.sse").read_bytes()
    assert "Step one is to preheat" in out
    saved, error = err.splitlines()
    assert saved.startswith("laminate: saved ")
    assert error.startswith("laminate: the provider sent an error: Overloaded")


def test_record_keeps_every_byte_of_an_unreadable_stream(
    served: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    recording = FIXTURES / "openai" / "truncated.sse"
    body = request_file(tmp_path, {"stream": True})
    output = tmp_path / "saved.sse"
    status, _, err = run_main(
        capsys,
        "record",
        served + "/v1/chat/completions",
        "--body",
        body,
        "--header",
        "x-laminate-fixture:truncated",
        "-o",
        str(output),
        "--format",
        "final",
    )
    assert status == 1
    assert output.read_bytes() == recording.read_bytes()
    assert err.splitlines()[1] == "laminate: IncompleteStreamError: the stream ended inside a frame"


def test_record_saves_and_reports_a_non_2xx_answer(
    served: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body = request_file(tmp_path, {"stream": True})
    output = tmp_path / "saved.json"
    status, _, err = run_main(
        capsys,
        "record",
        served + "/v1/chat/completions",
        "--body",
        body,
        "--header",
        "x-laminate-fixture:missing",
        "-o",
        str(output),
    )
    assert status == 1
    assert len(err.splitlines()) == 1
    assert err.startswith(f"laminate: HTTP 404 from {served}/v1/chat/completions")
    assert "no recording named 'missing'" in err
    assert json.loads(output.read_bytes())["error"]["type"] == "not_found_error"


def test_record_connection_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as sock:  # a port that was free a moment ago, and now is closed
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    output = tmp_path / "never.sse"
    url = f"http://127.0.0.1:{port}/v1/messages"
    status, _, err = run_main(
        capsys, "record", url, "--body", request_file(tmp_path, {}), "-o", str(output)
    )
    assert status == 1
    assert len(err.splitlines()) == 1
    assert err.startswith(f"laminate: cannot connect to {url}: ")
    assert "refused" in err.lower()
    assert not output.exists()


def test_record_bad_header_and_missing_body(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body = request_file(tmp_path, {})
    status, _, err = run_main(
        capsys, "record", "http://127.0.0.1:9/x", "--body", body, "--header", "oops", "-o", "o"
    )
    assert (status, err) == (2, "laminate: invalid --header 'oops': use NAME:VALUE\n")
    status, _, err = run_main(
        capsys, "record", "http://127.0.0.1:9/x", "--body", "nope.json", "-o", "o"
    )
    assert (status, err) == (1, "laminate: no such file: nope.json\n")


# -- serve's own errors ---------------------------------------------------------------------


def test_serve_a_missing_or_empty_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, _, err = run_main(capsys, "serve", str(tmp_path / "absent"))
    assert status == 1
    assert err == f"laminate: no such directory: {tmp_path / 'absent'}\n"
    status, _, err = run_main(capsys, "serve", str(tmp_path))
    assert status == 1
    assert err.startswith(f"laminate: no recordings in {tmp_path} (expected openai/*.sse")


def test_serve_on_a_busy_port(served: str, capsys: pytest.CaptureFixture[str]) -> None:
    port = served.rsplit(":", 1)[1]
    status, _, err = run_main(capsys, "serve", "fixtures", "--port", port)
    assert status == 1
    assert err == f"laminate: cannot listen on 127.0.0.1:{port}: Address already in use\n"


def test_serve_without_uvicorn(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "uvicorn", None)  # makes `import uvicorn` fail
    status, _, err = run_main(capsys, "serve", "fixtures")
    assert status == 1
    assert err == (
        'laminate: the mock provider needs the "demo" extra (uvicorn is not installed): '
        'install it with python -m pip install -e ".[demo]" in a clone of laminate\n'
    )


def test_record_to_an_unwritable_place(
    served: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    output = tmp_path / "no" / "such" / "dir.sse"
    body = request_file(tmp_path, {"stream": True})
    status, _, err = run_main(
        capsys, "record", served + "/v1/messages", "--body", body, "-o", str(output)
    )
    assert (status, err) == (1, f"laminate: No such file or directory: {output}\n")


def test_a_closed_pipe_stops_quietly() -> None:
    command = [sys.executable, "-m", "laminate", "replay", "--split", "bytes"]
    with subprocess.Popen(
        [*command, str(DEMO / "openai-responses" / "1-tool-calls.sse")],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as process:
        assert process.stdout is not None
        assert process.stderr is not None
        process.stdout.readline()
        process.stdout.close()  # like `| head -1`
        error = process.stderr.read()
        status = process.wait(timeout=30)
    assert status == 1
    assert error == b""
