"""``MemoryProviderAdapter``: a memory backend as a capability provider (the runtime guide's
adapter), so reads and writes can be granted, refused and audited by the registry."""

from __future__ import annotations

from typing import Any

from lightagent_control.capabilities import BaseCapabilityProvider, CapabilityRisk, CapabilitySpec

__all__ = ["MemoryProviderAdapter"]


class MemoryProviderAdapter(BaseCapabilityProvider):
    """``memory.retrieve`` (L0, read) and ``memory.store`` (L1, a persistent write) over any
    backend with the seeds' ``retrieve(query, user_id)`` and ``store(data, user_id)``
    (sync or async). The calls go to the backend as given: no policy of an agent applies,
    the registry's does."""

    name = "memory"
    version = "1"

    def __init__(self, backend: Any) -> None:
        self.backend = backend

        def retrieve(query: str, user_id: str = "default_user") -> Any:
            return backend.retrieve(query, user_id)

        def store(data: Any, user_id: str = "default_user") -> Any:
            return backend.store(data, user_id)

        super().__init__(
            [
                CapabilitySpec("memory.retrieve", read=True),
                CapabilitySpec(
                    "memory.store", write=True, persistent=True, risk=CapabilityRisk.ISOLATED_WRITE
                ),
            ],
            handlers={"memory.retrieve": retrieve, "memory.store": store},
        )
