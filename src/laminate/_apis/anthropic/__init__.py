"""The anthropic API."""
