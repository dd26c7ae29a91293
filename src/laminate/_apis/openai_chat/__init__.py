"""The openai_chat API."""
