"""laminate: one event stream for every LLM provider's streamed answer."""

from ._adapters import (
    NormalizedStream,
    NormalizedStreamSync,
    collect,
    collect_sync,
    normalize_stream,
    normalize_stream_sync,
)
from ._coerce import Change
from ._complete import (
    normalize,
    parse_anthropic_response,
    parse_ollama_response,
    parse_openai_response,
    parse_responses_response,
)
from ._errors import (
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
from ._events import (
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
from ._flex import FlexValue
from ._normalizer import StreamNormalizer
from ._response import (
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

__version__ = "0.1.0"

__all__ = [
    "BlockEnd",
    "BlockStart",
    "Change",
    "ContentBlock",
    "EnvelopeError",
    "Event",
    "ExtractError",
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
    "StreamNormalizer",
    "StreamReadError",
    "StreamTimeoutError",
    "StringDelta",
    "Text",
    "TextDelta",
    "ToolInputDelta",
    "ToolUse",
    "Unknown",
    "UnknownProviderError",
    "Usage",
    "collect",
    "collect_sync",
    "normalize",
    "normalize_stream",
    "normalize_stream_sync",
    "parse_anthropic_response",
    "parse_ollama_response",
    "parse_openai_response",
    "parse_responses_response",
]
