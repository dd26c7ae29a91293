"""Every stream cut short says so: truncating each fixture and each recording at every line
end (and at a few random offsets) gives, with the provider left to detection, either a
complete answer (the cut fell after the provider signalled completion) or an
:class:`IncompleteStreamError`, never "unknown provider" or "malformed" for bytes that
are a valid beginning."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from laminate import (
    IncompleteStreamError,
    LaminateError,
    MalformedStreamError,
    ProviderError,
    UnknownProviderError,
)

from .support import FIXTURES, REAL_STREAMS, REAL_STREAMS_2, STREAM_SUFFIXES, run_chunks

# Formats whose recordings laminate reads (the Interactions API and Cohere v1 are not).
_FOLDERS = (
    "openai-chat",
    "openai-compat",
    "anthropic-messages",
    "openai-responses",
    "ollama-native",
    "gemini-native",
    "bedrock-converse",
    "cohere",
)


def _streams() -> list[Path]:
    found = [p for p in sorted(FIXTURES.rglob("*")) if p.name.endswith(STREAM_SUFFIXES)]
    for root in (REAL_STREAMS, REAL_STREAMS_2):
        for folder in _FOLDERS:
            if (root / folder).is_dir():
                found += [
                    p
                    for p in sorted((root / folder).iterdir())
                    if p.suffix in (".sse", ".ndjson", ".eventstream")
                ]
    return found


STREAMS = _streams()


def _cuts(data: bytes, seed: int) -> list[int]:
    ends = {i + 1 for i, byte in enumerate(data) if byte in b"\r\n"}
    rng = random.Random(seed)
    ends |= {rng.randrange(1, len(data)) for _ in range(5)} if len(data) > 1 else set()
    return sorted(cut for cut in ends if 0 < cut < len(data))


@pytest.mark.parametrize("path", STREAMS, ids=[str(p.relative_to(p.parents[1])) for p in STREAMS])
def test_a_cut_stream_is_complete_or_incomplete(path: Path, json_backend: str) -> None:
    if json_backend != "stdlib":
        pytest.skip("the cuts do not depend on the JSON backend; run once")
    data = path.read_bytes()
    whole = run_chunks([data]).error
    if isinstance(whole, MalformedStreamError | UnknownProviderError):
        pytest.skip(f"the whole stream is not readable as it is ({type(whole).__name__})")
    wrong: list[str] = []
    for cut in _cuts(data, seed=len(data)):
        error: LaminateError | None = run_chunks([data[:cut]]).error
        if error is None or isinstance(error, IncompleteStreamError | ProviderError):
            continue
        wrong.append(f"at byte {cut}: {type(error).__name__}: {error}")
    assert not wrong, "\n".join(wrong[:5])
