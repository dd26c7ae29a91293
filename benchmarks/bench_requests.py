"""Time translating a ~50 KB coding-agent request to every API against a JSON floor.

Usage: ``python benchmarks/bench_requests.py [--repeat N] [--size KB]``

The request is built here, shaped like what a coding agent sends to Anthropic's Messages
API mid-task: two system blocks with cache breakpoints, a dozen tools with real-sized
schemas, and a conversation of ~15 messages of text, tool calls and tool results (file
contents, command output). It is grown to ``--size`` KB of JSON.

For each target API that laminate writes requests for, it reports the time of
``translate_request(body, "anthropic", target)`` (the body as a parsed ``dict``, the
written body a ``dict``) against the floor measured in the same run: ``json.loads`` of the
body's text plus ``json.dumps`` of the result, the least any proxy does with a request.
The goal is at most twice the floor. Times are CPU time (``time.process_time``), the best
of ``--repeat`` rounds; floor and translation alternate, and the ratio is the median of
the rounds' ratios. Exit status 1 when a target is over the goal.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

import laminate
from laminate._apis.registry import APIS

GOAL = 2.0
WORDS = (
    "the file module import return value error test function class self data path line config "
    "request response stream token model tool call result build check update"
)

WORDS_LIST = tuple(WORDS.split(" "))


def words(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS_LIST) for _ in range(n))


def tool_schema(rng: random.Random, name: str) -> dict[str, Any]:
    properties = {
        f"{name}_{i}": {
            "type": rng.choice(["string", "integer", "boolean"]),
            "description": words(rng, 12),
        }
        for i in range(rng.randint(2, 6))
    }
    return {
        "type": "object",
        "properties": properties,
        "required": sorted(properties)[:2],
        "additionalProperties": False,
        "$schema": "http://json-schema.org/draft-07/schema#",
    }


def agent_request(size_kb: int, seed: int = 7) -> dict[str, Any]:
    """A coding agent's request of about ``size_kb`` KB of JSON."""
    rng = random.Random(seed)
    tools = [
        {"name": name, "description": words(rng, 60), "input_schema": tool_schema(rng, name)}
        for name in (
            "Bash",
            "Read",
            "Edit",
            "Write",
            "Glob",
            "Grep",
            "LS",
            "TodoWrite",
            "WebFetch",
            "NotebookEdit",
            "Task",
            "mcp__ide__getDiagnostics",
        )
    ]
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": [{"type": "text", "text": words(rng, 80)}]}
    ]
    turn = 0
    while len(json.dumps(messages)) < size_kb * 1024 - 16_000:
        turn += 1
        call_id = f"toolu_01{rng.getrandbits(64):016x}"
        tool = rng.choice(tools)
        messages.append(
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": words(rng, 30)},
                    {
                        "type": "tool_use",
                        "id": call_id,
                        "name": tool["name"],
                        "input": {"command": words(rng, 8), "path": f"/src/app/m{turn}.py"},
                    },
                ],
            }
        )
        output = "\n".join(f"{n:5}\t{words(rng, 9)}" for n in range(rng.randint(20, 60)))
        messages.append(
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": call_id, "content": output}],
            }
        )
    messages[-1]["content"].append(
        {"type": "text", "text": words(rng, 20), "cache_control": {"type": "ephemeral"}}
    )
    return {
        "model": "claude-sonnet-4-5",
        "max_tokens": 32000,
        "system": [
            {
                "type": "text",
                "text": "You are a coding agent.",
                "cache_control": {"type": "ephemeral"},
            },
            {"type": "text", "text": words(rng, 600), "cache_control": {"type": "ephemeral"}},
        ],
        "messages": messages,
        "tools": tools,
        "metadata": {"user_id": "user_0123_account_4567_session_89ab"},
        "temperature": 1,
        "stream": True,
    }


def timed(fn: Callable[[], object]) -> float:
    start = time.process_time()
    fn()
    return time.process_time() - start


def compare(
    floor: Callable[[], object], work: Callable[[], object], repeat: int
) -> tuple[float, float, float]:
    """The best times of ``floor`` and ``work``, run in turns, and the median of the
    rounds' ratios (so a noisy moment on a shared machine hits both sides of a ratio)."""
    floors, works, ratios = [], [], []
    for _ in range(repeat):
        a = timed(floor)
        b = timed(work)
        floors.append(a)
        works.append(b)
        ratios.append(b / a if a else float("inf"))
    return min(floors), min(works), statistics.median(ratios)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=51)
    parser.add_argument("--size", type=int, default=50, metavar="KB")
    args = parser.parse_args()
    body = agent_request(args.size)
    text = json.dumps(body)
    print(f"request: {len(text) / 1024:.1f} KB of JSON, {len(body['messages'])} messages")
    targets = [name for name, record in APIS.items() if record.write_request is not None]
    failed = False
    for target in targets:
        floor, spent, ratio = compare(
            lambda: json.dumps(json.loads(text)),
            lambda t=target: laminate.translate_request(body, "anthropic", t),  # type: ignore[misc]
            args.repeat,
        )
        verdict = "ok" if ratio <= GOAL else f"OVER {GOAL:g}x"
        failed |= ratio > GOAL
        print(
            f"{target:>17}: {spent * 1000:7.2f} ms, floor {floor * 1000:6.2f} ms, "
            f"{ratio:4.2f}x the floor  {verdict}"
        )
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
