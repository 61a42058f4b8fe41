"""The control plane behind the agent loop: hooks, guardrails, policy and approval on one path.

:func:`lightagent.control.runtime.build_interceptor` builds the loop's interceptor. This
package imports nothing heavy; its modules are loaded on first use.
"""

from __future__ import annotations

__all__: list[str] = []
