"""Running the proxy with uvicorn: in this process, in worker processes, or in a thread
for a test (:func:`proxy_server`)."""

from __future__ import annotations

import json
import logging
import os
import shutil
import socket
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, replace
from typing import Any, Final

from .._core.extras import missing_extra
from .app import app
from .config import Backend, Client, ProxyConfig, Retry, Timeouts
from .limits import check_state

__all__ = ["proxy_server", "serve", "worker_app"]

_CONFIG_VARIABLE: Final = "LAMINATE_PROXY_CONFIG"


def _uvicorn() -> Any:
    try:
        import uvicorn
    except ImportError as exc:
        raise missing_extra("the proxy", "proxy", exc) from exc
    return uvicorn


def _listen(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.create_server((host, port), family=family, backlog=2048)
    # Accepted connections inherit it: each chunk of a stream leaves at once.
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def _url(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def _server(config: ProxyConfig, **options: Any) -> Any:
    uvicorn = _uvicorn()
    settings = uvicorn.Config(
        app(config),
        lifespan="on",
        log_config=None,
        log_level="warning",
        access_log=False,
        ws="none",
        timeout_graceful_shutdown=1,
        **options,
    )
    return uvicorn.Server(settings)


@contextmanager
def proxy_server(config: ProxyConfig, *, host: str = "127.0.0.1", port: int = 0) -> Iterator[str]:
    """Run the proxy for ``config`` in a background thread; yields its base URL (a free
    loopback port by default), stops it on exit."""
    server = _server(config)
    sock = _listen(host, port)
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": [sock]}, name="laminate-proxy", daemon=True
    )
    thread.start()
    try:
        while not server.started:
            if not thread.is_alive():
                raise RuntimeError("the proxy failed to start")
            thread.join(0.005)
        yield _url(sock)
    finally:
        server.should_exit = True
        thread.join(timeout=5)
        sock.close()


def _dump(config: ProxyConfig) -> str:
    data = asdict(config)
    data.pop("log", None)
    data.pop("_routing", None)  # compiled from the backends again by each worker
    for backend, original in zip(data["backends"], config.backends, strict=True):
        backend["key"] = original.key
    data["api_key"] = config.api_key
    for person, known in zip(data["clients"], config.clients, strict=True):
        person["key"] = known.key
    return json.dumps(data)


def _load(text: str) -> ProxyConfig:
    data = json.loads(text)
    return ProxyConfig(
        backends=tuple(Backend(**{**b, "drop": tuple(b["drop"])}) for b in data["backends"]),
        api_key=data["api_key"],
        max_request_bytes=data["max_request_bytes"],
        timeouts=Timeouts(**data["timeouts"]),
        keepalive=data["keepalive"],
        clients=tuple(
            Client(**{**c, "models": None if c["models"] is None else tuple(c["models"])})
            for c in data["clients"]
        ),
        state=data["state"],
        state_failure=data["state_failure"],
        retry=Retry(**data["retry"]),
    )


def worker_app() -> Any:
    """The app of one worker process, from the configuration its parent handed down."""
    _log_to_stderr()
    return app(_load(os.environ[_CONFIG_VARIABLE]))


def _log_to_stderr() -> None:
    logger = logging.getLogger("laminate.proxy")
    if not logger.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(message)s"))
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
        logger.propagate = False


def serve(config: ProxyConfig, *, host: str, port: int, workers: int = 1) -> None:
    """Serve the proxy until interrupted: in this process, or in ``workers`` processes
    sharing the port. The clients' limits are counted in this process for one worker;
    for several, unless the configuration names its ``state``, in a SQLite file in a
    temporary folder of their own, removed when they stop. A store that cannot be
    reached is refused before anything is served."""
    _log_to_stderr()
    check_state(config.state)
    if workers <= 1:
        sock = _listen(host, port)
        _server(config).run(sockets=[sock])
        return
    if config.state is None and any(c.limited for c in config.clients):
        folder = tempfile.mkdtemp(prefix="laminate-limits-")
        try:
            shared = replace(config, state=f"sqlite:{folder}/limits.sqlite")
            _serve_workers(shared, host, port, workers)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        return
    _serve_workers(config, host, port, workers)


def _serve_workers(config: ProxyConfig, host: str, port: int, workers: int) -> None:
    check_state(config.state)
    uvicorn = _uvicorn()
    # Each worker rebuilds the configuration from the environment it inherits.
    os.environ[_CONFIG_VARIABLE] = _dump(config)
    uvicorn.run(
        "laminate._proxy.serve:worker_app",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        lifespan="on",
        log_config=None,
        log_level="warning",
        access_log=False,
        ws="none",
        backlog=2048,
    )
