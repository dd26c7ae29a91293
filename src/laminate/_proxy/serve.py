"""Running the proxy with uvicorn: in this process, in worker processes, or in a thread
for a test (:func:`proxy_server`).

Stopping (SIGTERM or SIGINT) drains: the listening socket closes at once (new
connections are refused), idle kept-alive connections close, ``/ready`` answers 503, and
the running requests get the configuration's ``drain`` seconds to end before they are
cancelled. SIGHUP reads the configuration file again. With workers, the parent process
closes its copy of the socket too when told to stop, and hands SIGHUP on to every
worker, which reloads on its own (uvicorn's own answer to SIGHUP, replacing the workers,
would wait on each old worker's streams in turn).
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import os
import shutil
import signal
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
from .config import Backend, Client, ConfigError, ConfigFile, ProxyConfig, Retry, Timeouts
from .limits import check_state

__all__ = ["proxy_server", "serve", "worker_app"]

_CONFIG_VARIABLE: Final = "LAMINATE_PROXY_CONFIG"
_SOURCE_VARIABLE: Final = "LAMINATE_PROXY_SOURCE"
_METRICS_VARIABLE: Final = "LAMINATE_PROXY_METRICS"


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


def _options(config: ProxyConfig) -> dict[str, Any]:
    return {
        "lifespan": "on",
        "log_config": None,
        "log_level": "warning",
        "access_log": False,
        "ws": "none",
        "timeout_graceful_shutdown": math.ceil(config.drain),
        # A client connection idle this long is closed: a load balancer in front keeps
        # its own idle connections a shorter time (docs/deploy.md).
        "timeout_keep_alive": 15,
    }


def _server(config: ProxyConfig, source: ConfigFile | None = None, **options: Any) -> Any:
    uvicorn = _uvicorn()
    settings = uvicorn.Config(app(config, source=source), **{**_options(config), **options})
    return uvicorn.Server(settings)


@contextmanager
def proxy_server(
    config: ProxyConfig,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    source: ConfigFile | None = None,
) -> Iterator[str]:
    """Run the proxy for ``config`` in a background thread; yields its base URL (a free
    loopback port by default), stops it on exit. ``source``: the file ``POST
    /admin/reload`` reads again (``None``: no reload)."""
    server = _server(config, source, timeout_graceful_shutdown=1)
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
    data["admin_key"] = config.admin_key
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
        retry=Retry(**data["retry"]),
        keepalive=data["keepalive"],
        clients=tuple(
            Client(**{**c, "models": None if c["models"] is None else tuple(c["models"])})
            for c in data["clients"]
        ),
        state=data["state"],
        state_failure=data["state_failure"],
        admin_key=data["admin_key"],
        drain=data["drain"],
    )


def worker_app() -> Any:
    """The app of one worker process, from the configuration its parent handed down."""
    _log_to_stderr()
    given = os.environ.get(_SOURCE_VARIABLE)
    source = None if given is None else ConfigFile(**json.loads(given))
    return app(
        _load(os.environ[_CONFIG_VARIABLE]),
        source=source,
        metrics_directory=os.environ.get(_METRICS_VARIABLE),
        reload_via=os.getppid(),  # the supervisor, which tells every worker
    )


def _log_to_stderr() -> None:
    logger = logging.getLogger("laminate.proxy")
    if not logger.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(message)s"))
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
        logger.propagate = False


def _stopped(number: int, frame: object) -> None:
    """SIGTERM outside the server's own handler (before it starts, or raised again once
    it has drained): a clean exit."""
    raise SystemExit(0)


def serve(
    config: ProxyConfig,
    *,
    host: str,
    port: int,
    workers: int = 1,
    source: ConfigFile | None = None,
) -> None:
    """Serve the proxy until told to stop (then drain): in this process, or in
    ``workers`` processes sharing the port. ``source``: the file SIGHUP and ``POST
    /admin/reload`` read again (``None``: no reload).

    The clients' limits are counted in this process for one worker; for several, unless
    the configuration names its ``state``, in a SQLite file in a temporary folder of
    their own (a reload keeps it), removed when they stop. A store that cannot be
    reached is refused before anything is served."""
    _log_to_stderr()
    check_state(config.state)
    if workers > 1 and config.state is None:
        folder = tempfile.mkdtemp(prefix="laminate-limits-")
        try:
            shared = f"sqlite:{folder}/limits.sqlite"
            if source is not None:
                source = replace(source, default_state=shared)
            _serve_workers(replace(config, state=shared), host, port, workers, source)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        return
    if workers <= 1:
        sock = _listen(host, port)
        if threading.current_thread() is threading.main_thread():
            # uvicorn raises the signal that stopped it again once it has drained, to the
            # handler it found: a drained stop is a clean exit (status 0).
            signal.signal(signal.SIGTERM, _stopped)
        _server(config, source).run(sockets=[sock])
        return
    _serve_workers(config, host, port, workers, source)


def _serve_workers(
    config: ProxyConfig, host: str, port: int, workers: int, source: ConfigFile | None
) -> None:
    uvicorn = _uvicorn()
    from uvicorn.supervisors.multiprocess import Multiprocess

    class Supervisor(Multiprocess):
        """uvicorn's, but a stop goes on to the workers at once (not at the parent's next
        look at its signals, up to half a second later) and closes the parent's copy of
        the socket, so that new connections are refused while the workers drain; SIGHUP
        goes on to every worker, which reloads."""

        def __init__(self, config: Any, sockets: list[socket.socket]) -> None:
            super().__init__(config, sockets)
            for number in (signal.SIGINT, signal.SIGTERM):
                signal.signal(number, self._stop)

        def _stop(self, number: int, frame: object) -> None:
            for sock in self.sockets:
                sock.close()
            for process in self.processes:
                if process.pid is not None and process.exitcode is None:
                    os.kill(process.pid, number)
            self.should_exit.set()

        def handle_hup(self) -> None:
            # A worker started from now on (in place of one that died) gets the file's
            # configuration too, when it is valid; each running worker reads it itself.
            if source is not None:
                with contextlib.suppress(ConfigError):
                    os.environ[_CONFIG_VARIABLE] = _dump(source.load(os.environ))
            for process in self.processes:
                if process.pid is not None and process.exitcode is None:
                    os.kill(process.pid, signal.SIGHUP)

    with tempfile.TemporaryDirectory(prefix="laminate-metrics-") as directory:
        # Each worker rebuilds the configuration from the environment it inherits.
        os.environ[_CONFIG_VARIABLE] = _dump(config)
        os.environ[_METRICS_VARIABLE] = directory
        if source is not None:
            os.environ[_SOURCE_VARIABLE] = json.dumps(asdict(source))
        settings = uvicorn.Config(
            "laminate._proxy.serve:worker_app",
            factory=True,
            workers=workers,
            **_options(config),
        )
        sock = _listen(host, port)
        try:
            Supervisor(settings, sockets=[sock]).run()
        finally:
            sock.close()
