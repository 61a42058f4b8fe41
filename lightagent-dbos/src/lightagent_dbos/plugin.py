"""The lightagent plugin of lightagent-dbos: what ``lightagent plugins`` shows.

``DBOSAgent`` wraps an agent rather than extending it, so the plugin registers no agent
extension; importing it imports nothing of DBOS.
"""

from __future__ import annotations

from typing import Any

from lightagent.hookspecs import hookimpl

__all__ = ["lightagent_manifest"]


@hookimpl
def lightagent_manifest() -> dict[str, Any]:
    """What ``lightagent plugins`` shows for this distribution."""
    from lightagent_dbos import __version__

    return {
        "name": "lightagent-dbos",
        "version": __version__,
        "description": "Durable runs on DBOS Transact: checkpointed steps, crash recovery, durable queues.",
        "docs": "docs/dbos.md",
    }
