"""lightagent-serve: agents behind the OpenAI Chat Completions API (``lightagent serve``).

Starlette and uvicorn load on first use of :func:`create_app` or the command.
"""

from __future__ import annotations

from typing import Any

from lightagent_serve.chat import MAX_BODY_BYTES, SESSION_HEADER
from lightagent_serve.loader import load_agents

__version__ = "0.1.0"
__all__ = ["MAX_BODY_BYTES", "SESSION_HEADER", "__version__", "create_app", "load_agents"]


def create_app(
    agents: Any,
    *,
    api_key: str | None,
    drain_timeout: float = 30.0,
    max_body_bytes: int = MAX_BODY_BYTES,
) -> Any:
    """The Starlette (ASGI) app serving ``agents`` behind the OpenAI Chat Completions API.

    ``agents`` is anything :func:`load_agents` takes (``"module:attr"``, an agent, a list
    or dict of agents, a factory). ``api_key=None`` serves without authentication; an
    empty key is refused (``LA-CONFIG``). Bodies over ``max_body_bytes`` get 413. Run it
    with any ASGI server, or use ``lightagent serve``.
    """
    from lightagent_serve.app import create_app as build

    return build(
        load_agents(agents, app_dir=None),
        api_key=api_key,
        drain_timeout=drain_timeout,
        max_body_bytes=max_body_bytes,
    )
