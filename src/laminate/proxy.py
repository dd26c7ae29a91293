"""The translating proxy, as a library: ``app(config)`` is an ASGI app that serves every
API's client endpoints on one port and answers each request from a configured backend, in
the client's own API (``laminate proxy`` on the command line). It needs the ``proxy``
extra (Starlette, uvicorn): without it, importing this module raises an ``ImportError``
that says how to install it.

```python
from laminate.proxy import Backend, ProxyConfig, app

config = ProxyConfig(backends=(Backend("openai", "http://127.0.0.1:11434/v1", model="qwen3"),))
asgi_app = app(config)          # uvicorn.run(asgi_app, port=8082)
```

``proxy_server(config)`` runs it in a thread on a free loopback port for a test and yields
its base URL.
"""

from ._proxy.app import app
from ._proxy.config import (
    Backend,
    Client,
    ConfigError,
    ConfigFile,
    ProxyConfig,
    Retry,
    Timeouts,
    config_from_toml,
)
from ._proxy.counting import estimate_tokens
from ._proxy.serve import proxy_server, serve

__all__ = [
    "Backend",
    "Client",
    "ConfigError",
    "ConfigFile",
    "ProxyConfig",
    "Retry",
    "Timeouts",
    "app",
    "config_from_toml",
    "estimate_tokens",
    "proxy_server",
    "serve",
]
