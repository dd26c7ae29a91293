"""The ollama API."""
