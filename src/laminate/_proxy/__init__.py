"""The translating proxy: every API's client endpoints on one port, each request answered
by a configured backend in the client's own API (see ``app.py``)."""

from .app import app
from .config import Backend, ConfigError, ProxyConfig, Timeouts, config_from_toml, parse_backend
from .counting import Exchange, estimate_tokens
from .refusals import error_response
from .serve import proxy_server, serve

__all__ = [
    "Backend",
    "ConfigError",
    "Exchange",
    "ProxyConfig",
    "Timeouts",
    "app",
    "config_from_toml",
    "error_response",
    "estimate_tokens",
    "parse_backend",
    "proxy_server",
    "serve",
]
