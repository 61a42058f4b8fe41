"""Hooks that moved out of the kernel in lightagent-core 0.2, kept for one minor version.

``register_workflows`` belongs to LightFlow and LightDAG, ``register_verifiers`` and
``register_artifact_stores`` to LightDAG: those distributions declare them with
``register_hookspecs``. A plugin that implements one while no installed plugin declares
it still works until lightagent-core 0.3, through the specs below, and gets a
``DeprecationWarning`` naming the distribution to depend on.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from lightagent.hookspecs import LEGACY_HOOKS, Register, hookspec

__all__ = ["LEGACY_HOOKS", "legacy_specs"]


def _warning(hook: str) -> DeprecationWarning:
    owners = " or ".join(LEGACY_HOOKS[hook][1])
    return DeprecationWarning(
        f"{hook} is a hook of {owners} since lightagent-core 0.2; without it installed "
        f"the core still accepts it until 0.3: add {owners} to your plugin's dependencies"
    )


def legacy_specs(hooks: Any) -> Any:
    """A namespace of deprecated hookspecs for the hook names in ``hooks``."""

    def register_workflows(register: Register) -> None:
        """Register workflow engines (now a LightFlow / LightDAG hook)."""

    def register_verifiers(register: Register) -> None:
        """Register LightDAG verifiers (now a LightDAG hook)."""

    def register_artifact_stores(register: Register) -> None:
        """Register LightDAG artifact stores (now a LightDAG hook)."""

    table = {
        "register_workflows": register_workflows,
        "register_verifiers": register_verifiers,
        "register_artifact_stores": register_artifact_stores,
    }

    return SimpleNamespace(
        **{name: hookspec(warn_on_impl=_warning(name))(table[name]) for name in hooks}
    )
