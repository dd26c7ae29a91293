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

from .support import (
    FIXTURES,
    REAL_STREAMS,
    REAL_STREAMS_2,
    REAL_STREAMS_3,
    STREAM_SUFFIXES,
    run_chunks,
)

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
    for root in (REAL_STREAMS, REAL_STREAMS_2, REAL_STREAMS_3):
        for folder in _FOLDERS:
            if (root / folder).is_dir():
                found += [
                    p
                    for p in sorted((root / folder).iterdir())
                    if p.suffix in (".sse", ".ndjson", ".eventstream")
                ]
    return found


STREAMS = _streams()


def _bodies() -> list[Path]:
    found = sorted(FIXTURES.rglob("*.body.json"))
    for root in (REAL_STREAMS, REAL_STREAMS_2, REAL_STREAMS_3):
        for folder in _FOLDERS:
            if (root / folder).is_dir():
                found += sorted((root / folder).glob("*.json"))
    return found


BODIES = _bodies()


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


@pytest.mark.parametrize("path", BODIES, ids=[str(p.relative_to(p.parents[1])) for p in BODIES])
def test_a_cut_body_is_incomplete_wherever_the_cut_falls(path: Path, json_backend: str) -> None:
    """A complete JSON body cut anywhere (inside a string, an escape, a number, a literal,
    a character's UTF-8 bytes, the white space before it) is cut short, never malformed."""
    if json_backend != "stdlib":
        pytest.skip("the cuts do not depend on the JSON backend; run once")
    data = path.read_bytes()
    whole = run_chunks([data]).error
    if whole is not None:
        pytest.skip(f"the whole body is not an answer ({type(whole).__name__})")
    step = max(1, len(data) // 400)  # every byte of a small body, 400 cuts of a large one
    wrong: list[str] = []
    for cut in range(1, len(data), step):
        error = run_chunks([data[:cut]]).error
        if error is None or isinstance(error, IncompleteStreamError):
            continue
        wrong.append(f"at byte {cut} ({data[cut - 10 : cut]!r}): {type(error).__name__}: {error}")
    assert not wrong, "\n".join(wrong[:5])


_ESCAPED = (
    b'{\n  "candidates": [{"content": {"parts": [{"text": "caf\\u00e9 \\ud83d\\ude00 \xc3\xa9"}],'
    b'\n  "role": "model"}, "finishReason": "STOP"}],\n  "usageMetadata": {"promptTokenCount": 3,'
    b' "candidatesTokenCount": 2, "cachedContentTokenCount": null, "thoughts": false}\n}\n'
)


@pytest.mark.parametrize("provider", [None, "gemini"])
def test_a_body_cut_inside_an_escape_a_literal_or_a_character_is_incomplete(
    provider: str | None,
) -> None:
    assert run_chunks([_ESCAPED], provider).error is None
    for cut in range(1, len(_ESCAPED.rstrip())):
        error = run_chunks([_ESCAPED[:cut]], provider).error
        assert isinstance(error, IncompleteStreamError), (cut, _ESCAPED[:cut][-12:], error)


def test_a_body_of_white_space_only_is_incomplete() -> None:
    """OpenRouter sends blank keep-alive lines before a complete body: cut there, nothing
    of the body came yet."""
    for body in (b"\n", b"\n         \n\n", b"  \r\n"):
        assert isinstance(run_chunks([body]).error, IncompleteStreamError)
