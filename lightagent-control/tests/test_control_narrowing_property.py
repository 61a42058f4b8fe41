"""Bar: 10,000 random narrowing chains (depth up to 5) never yield a child allowed more than its parent."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lightagent_control.capabilities import EFFECTS, CapabilityRisk
from lightagent_control.security import PermissionSet, SecurityContext

NAMES = ["a", "a.b", "a.c", "tool.x", "tool.y", "toolbox", "b"]
PATTERNS = [*NAMES, "a*", "a.*", "tool.*", "tool*", "t*", "*"]
RESOURCES = ["r/1", "r/2", "r/sub/3", "s/1"]
RESOURCE_PATTERNS = [*RESOURCES, "r/*", "r/sub/*", "s*", "*"]
RISKS = [CapabilityRisk(level) for level in range(4)]
EFFECT_SAMPLES = ((), ("read",), ("write", "network"), tuple(sorted(EFFECTS)))
BASE = datetime(2030, 1, 1, tzinfo=timezone.utc)

maybe_names = st.one_of(st.none(), st.frozensets(st.sampled_from(PATTERNS), max_size=4))
maybe_resources = st.one_of(
    st.none(), st.frozensets(st.sampled_from(RESOURCE_PATTERNS), max_size=3)
)
maybe_effects = st.one_of(st.none(), st.frozensets(st.sampled_from(sorted(EFFECTS))))
deadlines = st.one_of(st.none(), st.integers(0, 1000).map(lambda m: BASE + timedelta(minutes=m)))

step = st.fixed_dictionaries(
    {},
    optional={
        "allowed_capabilities": maybe_names,
        "denied_capabilities": st.frozensets(st.sampled_from(PATTERNS), max_size=2),
        "max_risk": st.sampled_from(list(range(4))),
        "effects": maybe_effects,
        "resources": maybe_resources,
        "network_allowed": st.booleans(),
        "sandbox_required": st.booleans(),
        "deadline": deadlines,
    },
)

roots = st.builds(
    lambda allowed, denied, risk, effects, resources, net, sandbox, deadline: SecurityContext(
        tenant_id="t",
        permissions=PermissionSet(allowed=allowed, denied=denied, max_risk=risk, effects=effects),
        resources=resources,
        network_allowed=net,
        sandbox_required=sandbox,
        deadline=deadline,
    ),
    maybe_names,
    st.frozensets(st.sampled_from(PATTERNS), max_size=2),
    st.sampled_from(list(range(4))),
    maybe_effects,
    maybe_resources,
    st.booleans(),
    st.booleans(),
    deadlines,
)


def _assert_within(child: SecurityContext, parent: SecurityContext) -> None:
    for name in NAMES:
        for risk in RISKS:
            for effects in EFFECT_SAMPLES:
                if child.permissions.allows(name, risk, effects):
                    assert parent.permissions.allows(name, risk, effects), (name, risk, effects)
    for resource in RESOURCES:
        if child.allows_resource(resource):
            assert parent.allows_resource(resource), resource
    assert child.permissions.max_risk <= parent.permissions.max_risk
    assert parent.network_allowed or not child.network_allowed
    assert child.sandbox_required or not parent.sandbox_required
    if parent.deadline is not None:
        assert child.deadline is not None and child.deadline <= parent.deadline
    assert child.is_within(parent)


def _check_chain(root: SecurityContext, chain: list[dict]) -> None:
    contexts = [root]
    for index, kwargs in enumerate(chain):
        child = contexts[-1].child(agent_id=f"agent-{index}", **kwargs)
        # within its parent (so, by transitivity, within every ancestor) and within the root
        _assert_within(child, contexts[-1])
        assert child.is_within(root)
        contexts.append(child)


@pytest.mark.slow
@settings(
    max_examples=10_000, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck)
)
@given(root=roots, chain=st.lists(step, min_size=1, max_size=5))
def test_10000_random_narrowing_chains_never_widen(root, chain):
    _check_chain(root, chain)


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(root=roots, chain=st.lists(step, min_size=1, max_size=5))
def test_random_narrowing_chains_never_widen(root, chain):
    """The default run's sample of the bar above (the full 10,000 run under `make test-slow`)."""
    _check_chain(root, chain)
