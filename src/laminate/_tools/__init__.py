"""The tool loop: registry, JSON Schema from signatures, dispatch, request shapes, and the
strict application envelope."""
