"""The hooks LightFlow owns, added to lightagent's plugin host by ``register_hookspecs``.

LightDAG declares ``register_workflows`` too, with the same arguments: either
distribution is enough for plugins that register workflow engines.
"""

from __future__ import annotations

from lightagent.hookspecs import Register, hookspec

__all__ = ["KINDS", "register_workflows"]


@hookspec
def register_workflows(register: Register) -> None:
    """Register workflow engines (LightFlow, LightDAG, your own): objects with ``run`` or ``arun``."""


#: Registry kind -> the hook above that registers it.
KINDS = {"workflow": "register_workflows"}
