"""The examples run as a user would run them."""

from __future__ import annotations

import subprocess
import sys

from .support import ROOT


def test_agent_loop_example_runs_a_two_turn_loop_for_every_provider() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "agent_loop.py")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    providers = ("openai", "openai-responses", "anthropic", "ollama", "gemini", "cohere", "bedrock")
    for provider in providers:
        assert f"  {provider}: write_file(path, content)" in result.stdout
        assert f"  {provider}: run_command(command)" in result.stdout
        assert f"{provider} answered (end_turn): Done:" in result.stdout
