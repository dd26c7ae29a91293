"""The bottom layer: events, the final response, errors, the assembler, the incremental
reader of unfinished JSON, FlexValue and coercion. It imports no other layer; the
normalizer that wires framing and the APIs to the assembler is ``_normalizer``."""
