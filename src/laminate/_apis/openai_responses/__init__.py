"""The openai_responses API."""
