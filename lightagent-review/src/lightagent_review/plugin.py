"""The lightagent plugin of lightagent-review: it registers the human-approval hook.

The registered object is a factory (the hook class), referenced lazily so loading the
plugin imports nothing until it is resolved: ``hooks=["human_approval"]`` or
``hooks=[("human_approval", {"tools": ["delete_file"]})]`` builds a ``HumanApprovalHook``.
``approval=`` shorthands and ``policy_engine=`` policies reach this distribution through
its ``lightagent.exports`` entry points (the kernel looks the names up, never the package).
"""

from __future__ import annotations

from typing import Any

import lightagent.hookspecs


@lightagent.hookspecs.hookimpl
def register_hooks(register: Any) -> None:
    """Register the human-approval hook (a hook factory)."""
    register("human_approval", "lightagent_review.hook:HumanApprovalHook")
