"""The streaming core: events, the final response, errors, the assembler, the sans-IO
normalizer, the incremental reader of unfinished JSON, and FlexValue."""
