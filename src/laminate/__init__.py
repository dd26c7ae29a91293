"""laminate: one event stream for every LLM provider's streamed answer."""

from ._apis.wire import append_turn, assistant_message, tool_results
from ._core.coerce import Change
from ._core.errors import (
    EnvelopeError,
    ExtractError,
    IncompleteStreamError,
    LaminateError,
    MalformedStreamError,
    ProviderError,
    StreamReadError,
    StreamTimeoutError,
    UnknownProviderError,
)
from ._core.events import (
    BlockEnd,
    BlockStart,
    Event,
    ReasoningDelta,
    ResponseDone,
    ResponseStart,
    StringDelta,
    TextDelta,
    ToolInputDelta,
)
from ._core.flex import FlexValue
from ._core.response import (
    ContentBlock,
    InvalidToolUse,
    NormalizedResponse,
    Reasoning,
    StopReason,
    Text,
    ToolUse,
    Unknown,
    Usage,
)
from ._core.serialize import event_from_dict
from ._encode.encoder import (
    StreamEncoder,
    encode_response,
    encode_stream,
    encode_stream_sync,
    media_type,
)
from ._io.adapters import (
    NormalizedStream,
    NormalizedStreamSync,
    collect,
    collect_sync,
    normalize_stream,
    normalize_stream_sync,
)
from ._io.complete import (
    normalize,
    parse_anthropic_response,
    parse_bedrock_response,
    parse_cohere_response,
    parse_gemini_response,
    parse_ollama_response,
    parse_openai_response,
    parse_responses_response,
)
from ._normalizer import StreamNormalizer
from ._tools.envelope import CallLedger, FinalAnswer, ToolCallRequest, parse_envelope, to_envelopes
from ._tools.registry import Tool, ToolRegistry, ToolResult

__version__ = "0.1.0"

__all__ = [
    "BlockEnd",
    "BlockStart",
    "CallLedger",
    "Change",
    "ContentBlock",
    "EnvelopeError",
    "Event",
    "ExtractError",
    "FinalAnswer",
    "FlexValue",
    "IncompleteStreamError",
    "InvalidToolUse",
    "LaminateError",
    "MalformedStreamError",
    "NormalizedResponse",
    "NormalizedStream",
    "NormalizedStreamSync",
    "ProviderError",
    "Reasoning",
    "ReasoningDelta",
    "ResponseDone",
    "ResponseStart",
    "StopReason",
    "StreamEncoder",
    "StreamNormalizer",
    "StreamReadError",
    "StreamTimeoutError",
    "StringDelta",
    "Text",
    "TextDelta",
    "Tool",
    "ToolCallRequest",
    "ToolInputDelta",
    "ToolRegistry",
    "ToolResult",
    "ToolUse",
    "Unknown",
    "UnknownProviderError",
    "Usage",
    "append_turn",
    "assistant_message",
    "collect",
    "collect_sync",
    "encode_response",
    "encode_stream",
    "encode_stream_sync",
    "event_from_dict",
    "media_type",
    "normalize",
    "normalize_stream",
    "normalize_stream_sync",
    "parse_anthropic_response",
    "parse_bedrock_response",
    "parse_cohere_response",
    "parse_envelope",
    "parse_gemini_response",
    "parse_ollama_response",
    "parse_openai_response",
    "parse_responses_response",
    "to_envelopes",
    "tool_results",
]
