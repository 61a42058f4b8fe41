"""The hooks LightDAG owns, added to lightagent's plugin host by ``register_hookspecs``.

``register_workflows`` is shared with LightFlow (same arguments).
"""

from __future__ import annotations

from lightagent.hookspecs import Register, hookspec

__all__ = ["KINDS", "register_artifact_stores", "register_verifiers", "register_workflows"]


@hookspec
def register_workflows(register: Register) -> None:
    """Register workflow engines (LightFlow, LightDAG, your own): objects with ``run`` or ``arun``."""


@hookspec
def register_verifiers(register: Register) -> None:
    """Register LightDAG verifiers (``key``, ``version``, ``async verify(request)``)."""


@hookspec
def register_artifact_stores(register: Register) -> None:
    """Register LightDAG artifact stores (``stage``, ``read``, ``check_integrity``)."""


#: Registry kind -> the hook above that registers it.
KINDS = {
    "workflow": "register_workflows",
    "verifier": "register_verifiers",
    "artifact_store": "register_artifact_stores",
}
