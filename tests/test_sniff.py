"""Choosing the framing from the first bytes (``_framing/sniff.py``)."""

from __future__ import annotations

import pytest

from laminate import (
    StreamNormalizer,
    UnknownProviderError,
)
from laminate._framing import (
    choose_framing,
    encode_message,
)

ELEMENTS: list[dict[str, object]] = [
    {"text": 'a } ] " { [ , \\ \u2028 \U0001f600'},
    {"nested": {"list": [1, 2, {"deep": [[], {}]}], "empty": ""}},
    {"n": -1.5e3, "t": True, "f": False, "z": None},
]


# -- choosing the framing ---------------------------------------------------------------------


def test_framing_is_told_from_the_first_bytes() -> None:
    prelude = encode_message({":event-type": "messageStart"}, b"{}")[:12]
    assert choose_framing(prelude, None, "") == "eventstream"
    assert choose_framing(b"\x00\x00\x00\x00" * 3, None, "") == "sse"  # no valid prelude
    assert choose_framing(b"[", None, "") == "json-array"
    assert choose_framing(b"{", "sse", "") == "document"
    assert choose_framing(b"{", None, "") == "ndjson"
    assert choose_framing(b"{", None, "application/x-ndjson") == "ndjson"
    assert choose_framing(b"d", None, "") == "sse"
    assert choose_framing(b"{", "eventstream", "") == "document"
    assert choose_framing(b"d", None, "application/vnd.amazon.eventstream") == "eventstream"


def test_a_binary_prelude_split_before_its_twelfth_byte_is_still_binary() -> None:
    message = encode_message({":message-type": "event", ":event-type": "x"}, b"{}")
    normalizer = StreamNormalizer()
    for byte in message:
        assert normalizer.feed(bytes([byte])) == []
    # One event frame of no known provider: nothing to detect a provider from.
    with pytest.raises(UnknownProviderError):
        normalizer.close()
