"""``lightagent serve APP``: run the app on uvicorn, with a key, draining on SIGTERM."""

from __future__ import annotations

import argparse
import ipaddress
import logging
import os
import signal
import socket
import sys
import threading
from typing import Any

__all__ = ["ENV_API_KEY", "ENV_MAX_BODY_BYTES", "configure_serve", "run_serve"]

#: Where the key comes from when ``--api-key`` is not given (preferred: a command line is
#: visible to every user of the machine).
ENV_API_KEY = "LIGHTAGENT_SERVE_API_KEY"
#: Where the body limit comes from when ``--max-body-bytes`` is not given.
ENV_MAX_BODY_BYTES = "LIGHTAGENT_SERVE_MAX_BODY_BYTES"


def configure_serve(parser: argparse.ArgumentParser) -> None:
    """The arguments of ``lightagent serve``."""
    parser.add_argument(
        "app",
        metavar="APP",
        help="module:attr naming an agent, a list or dict of agents, or a factory of them",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000, help="port (8000; 0 picks a free one)")
    parser.add_argument(
        "--api-key", default=None, help=f"the key clients must send (default: ${ENV_API_KEY})"
    )
    parser.add_argument(
        "--no-auth",
        action="store_true",
        help="serve without a key; allowed only on a loopback host",
    )
    parser.add_argument(
        "--app-dir", default=".", help="folder put first on sys.path to import APP (.)"
    )
    parser.add_argument(
        "--graceful-timeout",
        type=float,
        default=30.0,
        help="seconds in-flight requests get to finish after SIGTERM (30)",
    )
    parser.add_argument(
        "--max-body-bytes",
        type=int,
        default=None,
        help=f"largest request body accepted; larger ones get 413 (default: ${ENV_MAX_BODY_BYTES} "
        "or 16 MiB)",
    )
    parser.add_argument("--log-level", default="info", help="uvicorn's log level (info)")


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _fail(message: str) -> int:
    print(f"lightagent serve: {message}", file=sys.stderr)
    return 2


def _bind(host: str, port: int) -> socket.socket:
    family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(address)
    sock.listen(2048)
    sock.setblocking(False)
    return sock


def run_serve(args: argparse.Namespace) -> int:
    """Serve until SIGTERM/SIGINT; in-flight requests finish first. Returns the exit code."""
    # A key of blanks is no key: refused below unless --no-auth, never "any token".
    key = (args.api_key or os.environ.get(ENV_API_KEY) or "").strip() or None
    if key is not None and args.no_auth:
        return _fail("--no-auth and an API key exclude each other")
    if key is None and not args.no_auth:
        return _fail(
            f"an API key is required: set {ENV_API_KEY} (or pass --api-key); "
            "--no-auth serves without one, on a loopback host only"
        )
    if args.no_auth and not _is_loopback(args.host):
        return _fail(f"--no-auth is refused on {args.host}: it is allowed on a loopback host only")
    limit = args.max_body_bytes
    if limit is None:
        given = os.environ.get(ENV_MAX_BODY_BYTES, "").strip()
        if given and not given.isdigit():
            return _fail(f"{ENV_MAX_BODY_BYTES} must be a number of bytes, got {given!r}")
        limit = int(given) if given else None
    try:
        import uvicorn

        from lightagent_serve.app import create_app
    except ImportError as exc:  # pragma: no cover - the distribution requires both
        return _fail(f"{exc}; install it with: pip install 'lightagent-core[serve]'")
    from lightagent_serve.chat import MAX_BODY_BYTES
    from lightagent_serve.loader import load_agents

    agents = load_agents(args.app, app_dir=args.app_dir)
    app = create_app(
        agents,
        api_key=key,
        drain_timeout=args.graceful_timeout,
        max_body_bytes=MAX_BODY_BYTES if limit is None else limit,
    )
    try:
        sock = _bind(args.host, args.port)
    except OSError as exc:
        return _fail(f"cannot listen on {args.host}:{args.port}: {exc}")
    host, port = sock.getsockname()[:2]
    config = uvicorn.Config(
        app,
        log_level=args.log_level,
        timeout_graceful_shutdown=args.graceful_timeout,
        lifespan="on",
    )
    from lightagent.events.log_redaction import install_log_redaction

    # uvicorn logs the tracebacks of requests that failed: through redaction too.
    install_log_redaction(
        h for name in ("", "uvicorn", "uvicorn.error") for h in logging.getLogger(name).handlers
    )
    server = uvicorn.Server(config)
    shown = f"[{host}]" if ":" in host else host
    print(
        f"lightagent serve: http://{shown}:{port}/v1 serving {', '.join(agents)}"
        + (" (no auth)" if key is None else ""),
        flush=True,
    )
    previous: Any = None
    if threading.current_thread() is threading.main_thread():
        # uvicorn drains on SIGTERM, then raises the signal again under the handler it
        # found: a no-op here, so a drained shutdown exits 0 instead of dying by signal.
        previous = signal.signal(signal.SIGTERM, lambda signum, frame: None)
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    return 0
