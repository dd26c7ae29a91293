"""``laminate proxy``: the translating proxy on one port (see ``_proxy/app.py``)."""

from __future__ import annotations

import argparse
import ipaddress
import os
import sys
from collections.abc import Mapping
from typing import Any, Final

from .._apis.registry import APIS
from .._proxy.config import (
    DEFAULT_KEEPALIVE,
    DEFAULT_MAX_REQUEST,
    Backend,
    ConfigError,
    ConfigFile,
    ProxyConfig,
    Timeouts,
    parse_backend,
)

__all__ = ["add_parser", "build_config", "config_file", "run"]

DEFAULT_PORT: Final = 8082

_DESCRIPTION_DOC: Final = """\
Serve every API's client endpoints on one port and answer each request from a backend,
in the client's own API: Claude Code, Codex or any SDK on any model.

  laminate proxy --backend openai:http://127.0.0.1:11434/v1 --model qwen3-coder
  ANTHROPIC_BASE_URL=http://127.0.0.1:8082 claude

Endpoints: /v1/messages (and /count_tokens), /v1/chat/completions, /v1/responses,
/v1beta/models/M:generateContent and :streamGenerateContent, /model/M/converse and
/converse-stream, /api/chat, /v2/chat, GET /v1/models; Anthropic Messages as Bedrock's
/model/M/invoke and /invoke-with-response-stream and as Vertex's
/v1/projects/P/locations/L/publishers/anthropic/models/M:rawPredict and
:streamRawPredict; GET /health, /ready, /metrics and POST /admin/reload. One JSON log
line per request on standard error. SIGTERM drains the running streams, then exits;
SIGHUP reads the --config file again."""


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if value <= 0:
        raise argparse.ArgumentTypeError(f"invalid value {text!r}: a positive number")
    return value


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"invalid value {text!r}: a number of seconds from 0")
    return value


def _count(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"invalid value {text!r}: a whole number from 1")
    return int(text)


def _port(text: str) -> int:
    if not text.isdigit() or int(text) > 65535:
        raise argparse.ArgumentTypeError(f"invalid port {text!r}")
    return int(text)


def _backend(text: str) -> tuple[str, str]:
    try:
        return parse_backend(text)
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``proxy`` to the command line's subcommands."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "proxy",
        help="serve every API's endpoints, answered by a backend of any API",
        description=_DESCRIPTION_DOC,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.set_defaults(run=run)
    apis = ", ".join(name for name, record in APIS.items() if record.http is not None)
    parser.add_argument(
        "--backend",
        type=_backend,
        metavar="API:BASE_URL",
        help=f"the backend's API ({apis}) and base URL, as its SDK takes it (Chat "
        "Completions and Responses end in /v1)",
    )
    parser.add_argument(
        "--backend-key-env", metavar="NAME", help="the environment variable holding its key"
    )
    parser.add_argument(
        "--model",
        action="append",
        default=[],
        metavar="NAME|CLIENT=BACKEND",
        help="the backend's model for every request, or a client model's backend model "
        "(repeatable; CLIENT may be a shell pattern, 'claude-*=qwen3-coder', the most "
        "specific wins); absent: the client's model",
    )
    parser.add_argument(
        "--max-tokens",
        type=_count,
        default=None,
        metavar="N",
        help="the backend's cap on a request's output limit: a request asking for more "
        "is lowered to N",
    )
    parser.add_argument(
        "--drop",
        action="append",
        default=[],
        metavar="FIELD",
        help="a top-level field of the backend's API it refuses, removed from every "
        "request (repeatable)",
    )
    parser.add_argument(
        "--api-key-env",
        metavar="NAME",
        help="clients must present the key in this environment variable, each in its "
        "API's own header",
    )
    parser.add_argument("--host", default="127.0.0.1", help="the address (default: 127.0.0.1)")
    parser.add_argument("--port", type=_port, default=DEFAULT_PORT, help="the port (8082)")
    parser.add_argument("--workers", type=_count, default=1, help="worker processes (1)")
    parser.add_argument(
        "--allow-anyone",
        action="store_true",
        help="listen beyond loopback without --api-key-env (anyone who reaches the port "
        "spends the backend's key)",
    )
    parser.add_argument(
        "--config", metavar="FILE", help="a TOML file: several backends, routed by model"
    )
    parser.add_argument(
        "--max-request-bytes",
        type=_count,
        default=None,
        metavar="N",
        help=f"the largest request accepted (default {DEFAULT_MAX_REQUEST}); larger: 413",
    )
    parser.add_argument(
        "--keepalive",
        type=_seconds,
        default=None,
        metavar="S",
        help=f"while the backend is silent in a streamed answer, write the client API's "
        f"keep-alive at least every S seconds ({DEFAULT_KEEPALIVE:g}; 0: never)",
    )
    defaults = Timeouts()
    for name, default, what in (
        ("connect", defaults.connect, "to connect to the backend"),
        ("read", defaults.read, "until the backend's answer begins"),
        ("idle", defaults.idle, "between two pieces of the answer"),
    ):
        parser.add_argument(
            f"--{name}-timeout",
            type=_positive,
            default=None,
            metavar="S",
            help=f"seconds to wait {what} ({default:g})",
        )
    return parser


def _models(items: list[str]) -> tuple[dict[str, str], str | None]:
    pairs: dict[str, str] = {}
    every: str | None = None
    for item in items:
        client, sep, backend = item.partition("=")
        if sep:
            if not client or not backend:
                raise ConfigError(f"invalid --model {item!r}: use NAME or CLIENT=BACKEND")
            pairs[client] = backend
        elif "*" in item or "?" in item or "[" in item:
            raise ConfigError(f"invalid --model {item!r}: a pattern needs PATTERN=BACKEND")
        elif every is not None:
            raise ConfigError("--model NAME is given twice: give one, or CLIENT=BACKEND pairs")
        else:
            every = item
    return pairs, every


def config_file(args: argparse.Namespace) -> ConfigFile | None:
    """The file the options name, to read again at each reload (``None``: no file)."""
    if not args.config:
        return None
    if args.backend or args.model or args.backend_key_env or args.max_tokens or args.drop:
        raise ConfigError(
            "--config holds the backends: leave out --backend, --backend-key-env, "
            "--model, --max-tokens and --drop"
        )
    given = {
        name: getattr(args, f"{name}_timeout")
        for name in ("connect", "read", "idle")
        if getattr(args, f"{name}_timeout") is not None
    }
    return ConfigFile(
        args.config, args.api_key_env, args.max_request_bytes, given, keepalive=args.keepalive
    )


def build_config(args: argparse.Namespace, environ: Mapping[str, str]) -> ProxyConfig:
    """The configuration the options describe (keys read from ``environ``)."""
    source = config_file(args)
    if source is not None:
        return source.load(environ)
    if args.backend is None:
        raise ConfigError("give --backend API:BASE_URL (or --config FILE)")
    api, url = args.backend
    pairs, every = _models(args.model)
    backend = Backend(
        api,
        url,
        key=_key(args.backend_key_env, environ, "--backend-key-env"),
        models=pairs,
        model=every,
        max_tokens=args.max_tokens,
        drop=tuple(args.drop),
    )
    defaults = Timeouts()
    timeouts = Timeouts(
        connect=args.connect_timeout or defaults.connect,
        read=args.read_timeout or defaults.read,
        idle=args.idle_timeout or defaults.idle,
    )
    return ProxyConfig(
        backends=(backend,),
        api_key=_key(args.api_key_env, environ, "--api-key-env"),
        max_request_bytes=args.max_request_bytes or DEFAULT_MAX_REQUEST,
        timeouts=timeouts,
        keepalive=DEFAULT_KEEPALIVE if args.keepalive is None else args.keepalive,
    )


def _key(name: str | None, environ: Mapping[str, str], option: str) -> str | None:
    if name is None:
        return None
    value = environ.get(name)
    if not value:
        raise ConfigError(f"{option}: the environment variable {name} is not set")
    return value


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def run(args: argparse.Namespace) -> int:
    """Serve until interrupted."""
    from .._proxy.serve import serve

    config = build_config(args, os.environ)
    source = config_file(args)
    keyless = config.api_key is None and not config.clients
    if not _loopback(args.host) and keyless and not args.allow_anyone:
        raise ConfigError(
            f"refusing to listen on {args.host} without --api-key-env or [[client]] keys: "
            "anyone who reaches it would spend the backend's key (give --allow-anyone to do "
            "it anyway)"
        )
    shown = args.host if ":" not in args.host else f"[{args.host}]"
    routes = ", ".join(f"{b.api} at {b.base_url}" for b in config.backends)
    print(f"laminate proxy on http://{shown}:{args.port} -> {routes}", file=sys.stderr, flush=True)
    serve(config, host=args.host, port=args.port, workers=args.workers, source=source)
    return 0
