"""Adversarial user ids and queries over two tenants, for the memory contract's property test.

Every example writes a secret for a few (tenant, user) pairs — tenants are namespaces
of a ``MemoryPolicy``, users are ids drawn from path tricks, SQL wildcards, NUL, case and
Unicode confusables and very long strings — and then reads as each of them, and as a
stranger, with a query that shares words with every secret. The backend may return
only records attributed to the reader's own backend id, and the policy may let through
only the reader's own secret. Records of earlier examples stay in the backend under
other namespaces, so every read also faces a growing crowd of foreign records.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

__all__ = ["ADVERSARIAL_PIECES", "check_no_foreign_records", "queries", "user_ids"]

ADVERSARIAL_PIECES = (
    "alice",
    "Alice",
    "ALICE",
    "\u0430lice",  # Cyrillic a
    "\uff41\uff4c\uff49\uff43\uff45",  # fullwidth
    "alice\u200b",  # zero-width space
    "ali\u0307ce",  # combining dot
    "../",
    "..",
    "../../etc/passwd",
    "*",
    "%",
    "_",
    "%%",
    "a%",
    "_lice",
    "\x00",
    "alice\x00",
    ":",
    "tenant-a:alice",
    "%3A",
    "%25",
    "' OR '1'='1",
    "; DROP TABLE x; --",
    " ",
    "",
    "\\",
    "\n",
)

_counter = itertools.count(1)


def user_ids() -> Any:
    """A hypothesis strategy of hostile user ids."""
    from hypothesis import strategies as st

    piece = st.sampled_from(ADVERSARIAL_PIECES)
    return st.one_of(
        piece,
        st.builds(lambda a, b: a + b, piece, piece),
        st.text(max_size=24),
        st.builds(lambda a, b: a + b, piece, st.text(max_size=8)),
        st.builds(
            lambda c, n: c * n,
            st.sampled_from(["a", "%", "_", "*", "\u0430"]),
            st.integers(200, 3000),
        ),
    )


def queries() -> Any:
    """A hypothesis strategy of hostile query tails (operators, wildcards, other ids)."""
    from hypothesis import strategies as st

    return st.one_of(
        st.sampled_from(ADVERSARIAL_PIECES),
        st.sampled_from(["AND OR NOT *", "secret* OR 1", "%secret%", "_ecret", "NEAR(a b)"]),
        st.text(max_size=60),
        st.builds(lambda n: "secret " * n, st.integers(1, 300)),
    )


def check_no_foreign_records(
    memory: Any,
    call: Callable[..., Any],
    ids: list[str],
    tail: str,
) -> None:
    """One example: write a secret per (tenant, user), read as each and as a stranger."""
    from lightagent import MemoryPolicy
    from lightagent.memory.protocol import memory_items, result_owner

    token = next(_counter)
    tenants = [MemoryPolicy(namespace=f"ta{token}"), MemoryPolicy(namespace=f"tb{token}")]
    owners: list[tuple[Any, str, str | None]] = []
    for index, user in enumerate(ids):
        policy = tenants[index % 2]
        if any(p is policy and u == user for p, u, _ in owners):
            continue
        secret = f"zq{token}x{index}k"
        owners.append((policy, user, secret))
        call(
            memory.store,
            f"the secret code word is {secret}",
            policy.scoped_user_id(user),
            **_metadata(memory, policy, user),
        )
    stranger: tuple[Any, str, str | None] = (tenants[0], f"stranger{token}", None)
    markers = {marker for _, _, marker in owners if marker is not None}
    query = f"what is the secret code word {tail}"
    for policy, user, marker in [*owners, stranger]:
        scoped = policy.scoped_user_id(user)
        items = memory_items(call(memory.retrieve, query, scoped))
        for item in items:
            owner = result_owner(item)
            assert owner == scoped, (
                f"backend returned a record of {owner!r} to {scoped!r}: {item.get('memory')!r}"
            )
            foreign = {m for m in markers if m in item["memory"] and m != marker}
            assert not foreign, f"{scoped!r} received a foreign secret: {item['memory']!r}"
        allowed = policy.filter_results(items, user_id=user, context=None).allowed
        for item in allowed:
            assert marker is not None and marker in item["memory"], (
                f"the policy let a foreign record reach {scoped!r}: {item['memory']!r}"
            )


def _metadata(memory: Any, policy: Any, user: str) -> dict[str, Any]:
    from lightagent.memory.protocol import accepts_keyword

    if not accepts_keyword(memory.store, "metadata"):
        return {}
    scoped = policy.scoped_user_id(user)
    return {
        "metadata": {
            "source": "user",
            "scope": "user",
            "user_id": scoped,
            "namespace": policy.namespace,
        }
    }
