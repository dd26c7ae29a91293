"""Framing: bytes in, frames out, with no knowledge of what the frames carry."""

from .lines import Frame, NDJSONDecoder, SSEDecoder

__all__ = ["Frame", "NDJSONDecoder", "SSEDecoder"]
