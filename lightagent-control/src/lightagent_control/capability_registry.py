"""``CapabilityRegistry``: providers by scope, with lifecycle, resolution and checked invocation."""

from __future__ import annotations

import asyncio
import builtins
import inspect
import itertools
import threading
from collections.abc import Mapping
from typing import Any

from lightagent.deciders import adecide
from lightagent.errors import ConfigurationError, PluginError, ToolError
from lightagent.keywords import seeds_keywords

from lightagent_control.specs import (
    CapabilityScope,
    CapabilitySpec,
    ProviderHealth,
    Registration,
    _maybe_await,
    _specs_of,
)

__all__ = ["CapabilityRegistry"]


class CapabilityRegistry:
    """Providers by scope, with lifecycle, deterministic resolution and policy-checked invocation."""

    def __init__(
        self,
        *,
        policy_engine: Any = None,
        audit: Any = None,
        gate: Any = None,
        approval: Any = None,
    ) -> None:
        self.policy_engine = policy_engine
        self.audit = audit
        self._gate = gate
        #: Answers ``requires_approval`` without a token (an approver such as HumanApprovalHook, a review store or a reviewer).
        self.approval = approval
        self._approver: Any = None
        self._registrations: list[Registration] = []
        self._counter = itertools.count()
        self._lock = threading.RLock()

    # -- registration ----------------------------------------------------------------
    def register(
        self,
        provider: Any,
        *,
        scope: str | CapabilityScope = "runtime",
        owner_id: str | None = None,
    ) -> Registration:
        """Add ``provider`` without mounting it; re-registering the same key replaces it."""
        try:
            scope = CapabilityScope(scope)
        except ValueError:
            raise ConfigurationError(
                "LA-CONFIG",
                f"unknown capability scope {scope!r}",
                hint="Use 'default', 'runtime', 'session' or 'agent'.",
            ) from None
        _specs_of(provider)
        if scope in (CapabilityScope.SESSION, CapabilityScope.AGENT) and not owner_id:
            raise ConfigurationError(
                "LA-CONFIG",
                f"a {scope.value}-scoped provider needs owner_id= (the {scope.value} id)",
            )
        name = str(getattr(provider, "name", type(provider).__name__))
        with self._lock:
            self._registrations = [
                r
                for r in self._registrations
                if not (r.name == name and r.scope is scope and r.owner_id == owner_id)
            ]
            reg = Registration(provider, scope, owner_id, next(self._counter))
            self._registrations.append(reg)
        return reg

    async def mount(
        self,
        provider: Any,
        *,
        scope: str | CapabilityScope = "runtime",
        owner_id: str | None = None,
        context: Any = None,
    ) -> Registration:
        """Register, then ``mount(context)`` and ``start()`` the provider; a failure leaves nothing registered."""
        reg = self.register(provider, scope=scope, owner_id=owner_id)
        try:
            if hasattr(provider, "mount"):
                await _maybe_await(provider.mount(context))
            reg.state = "mounted"
            if hasattr(provider, "start"):
                await _maybe_await(provider.start())
            reg.state = "started"
        except BaseException:
            self._remove(reg)
            raise
        return reg

    async def unmount(
        self, name: str, *, scope: str | CapabilityScope | None = None, owner_id: str | None = None
    ) -> int:
        """Stop and unmount every matching registration and forget it; returns how many."""
        wanted = CapabilityScope(scope) if scope is not None else None
        with self._lock:
            matches = [
                r
                for r in self._registrations
                if r.name == name
                and (wanted is None or r.scope is wanted)
                and (owner_id is None or r.owner_id == owner_id)
            ]
        for reg in matches:
            # Forget first so a failing stop/unmount can never leave a half-live entry.
            self._remove(reg)
            try:
                if reg.state == "started" and hasattr(reg.provider, "stop"):
                    await _maybe_await(reg.provider.stop())
            finally:
                if reg.state in ("mounted", "started") and hasattr(reg.provider, "unmount"):
                    await _maybe_await(reg.provider.unmount())
                reg.state = "unmounted"
        return len(matches)

    unregister = unmount

    async def release_owner(self, owner_id: str) -> int:
        """Unmount every session- or agent-scoped registration of ``owner_id`` (end of a session)."""
        with self._lock:
            names = {(r.name, r.scope) for r in self._registrations if r.owner_id == owner_id}
        count = 0
        for name, scope in names:
            count += await self.unmount(name, scope=scope, owner_id=owner_id)
        return count

    def _remove(self, reg: Registration) -> None:
        with self._lock:
            self._registrations = [r for r in self._registrations if r is not reg]

    # -- lifecycle -------------------------------------------------------------------
    async def health(self, name: str | None = None) -> dict[str, ProviderHealth]:
        """Each provider's health; a provider that raises reports unhealthy (never raises)."""
        out: dict[str, ProviderHealth] = {}
        for reg in self.registrations(name):
            key = reg.name if reg.owner_id is None else f"{reg.name}@{reg.owner_id}"
            try:
                result = (
                    await _maybe_await(reg.provider.health())
                    if hasattr(reg.provider, "health")
                    else ProviderHealth()
                )
                out[key] = (
                    result
                    if isinstance(result, ProviderHealth)
                    else ProviderHealth(
                        healthy=bool(result), status="ok" if result else "unhealthy"
                    )
                )
            except Exception as exc:
                out[key] = ProviderHealth(False, "error", type(exc).__name__)
        return out

    async def reload(self, name: str, config: Mapping[str, Any] | None = None) -> None:
        """Pass new configuration to the named provider(s)."""
        for reg in self.registrations(name):
            if hasattr(reg.provider, "reload"):
                await _maybe_await(reg.provider.reload(config))

    async def stop(self, name: str | None = None) -> None:
        """Stop providers (all, or the named one) without forgetting them."""
        for reg in self.registrations(name):
            if reg.state == "started" and hasattr(reg.provider, "stop"):
                await _maybe_await(reg.provider.stop())
                reg.state = "mounted"

    async def aclose(self) -> None:
        """Unmount every provider, newest first."""
        for reg in reversed(self.registrations()):
            await self.unmount(reg.name, scope=reg.scope, owner_id=reg.owner_id)

    # -- resolution ------------------------------------------------------------------
    def registrations(self, name: str | None = None) -> list[Registration]:
        """Current registrations (optionally only those of provider ``name``)."""
        with self._lock:
            return [r for r in self._registrations if name is None or r.name == name]

    @seeds_keywords(cap="capability", ctx="context")
    def resolve(self, capability: str, context: Any = None) -> tuple[Any, CapabilitySpec] | None:
        """The provider and spec that serve ``capability`` for ``context``, or None."""
        best: tuple[int, int, Registration] | None = None
        for reg in self.registrations():
            if not reg.visible_to(context):
                continue
            if capability in _specs_of(reg.provider):
                key = (reg.scope.rank, reg.order)
                if best is None or key > best[:2]:
                    best = (*key, reg)
        if best is None:
            return None
        reg = best[2]
        return reg.provider, _specs_of(reg.provider)[capability]

    def spec(self, capability: str, context: Any = None) -> CapabilitySpec | None:
        """The winning spec of ``capability``, or None."""
        found = self.resolve(capability, context)
        return found[1] if found else None

    def get(self, name: str) -> Any:
        """The newest provider registered as ``name`` (any scope), or None."""
        regs = self.registrations(name)
        return max(regs, key=lambda r: (r.scope.rank, r.order)).provider if regs else None

    @seeds_keywords(ctx="context")
    def list(self, context: Any = None) -> dict[str, CapabilitySpec]:
        """Every capability visible to ``context`` with its winning spec."""
        names = {
            cap
            for reg in self.registrations()
            if reg.visible_to(context)
            for cap in _specs_of(reg.provider)
        }
        out = {}
        for cap in sorted(names):
            found = self.resolve(cap, context)
            if found:
                out[cap] = found[1]
        return out

    def conflicts(self) -> builtins.list[dict[str, Any]]:
        """Capabilities offered by more than one provider in the same scope and owner."""
        groups: dict[tuple[str, CapabilityScope, str | None], list[Registration]] = {}
        for reg in self.registrations():
            for cap in _specs_of(reg.provider):
                groups.setdefault((cap, reg.scope, reg.owner_id), []).append(reg)
        out = []
        for (cap, scope, owner), regs in sorted(
            groups.items(), key=lambda kv: (kv[0][0], kv[0][1].rank, kv[0][2] or "")
        ):
            if len(regs) > 1:
                regs.sort(key=lambda r: r.order)
                out.append(
                    {
                        "capability": cap,
                        "scope": scope.value,
                        "owner_id": owner,
                        "providers": [r.name for r in regs],
                        "winner": regs[-1].name,
                    }
                )
        return out

    # -- invocation ------------------------------------------------------------------
    @property
    def gate(self) -> Any:
        """The :class:`~lightagent_control.security.CapabilityGate` every invocation passes (created on first use)."""
        if self._gate is None:
            from lightagent_control.gate import CapabilityGate

            self._gate = CapabilityGate(
                self, policy_engine=self.policy_engine, audit=self.audit, approval=self.approval
            )
        return self._gate

    @seeds_keywords(cap="capability", args="arguments", ctx="context")
    async def invoke(
        self,
        capability: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        context: Any = None,
        approval_token: Any = None,
        resource: str | None = None,
        approval_id: str | None = None,
    ) -> Any:
        """Authorize and call ``capability``, enforcing its spec.

        Every call passes the :class:`~lightagent_control.security.CapabilityGate`: with a
        :class:`~lightagent_control.security.SecurityContext` all of its checks, with any other
        context (or none) the policy engine and approval. ``requires_approval`` (from the
        spec or a policy) is answered by ``approval_token`` or the registry's ``approval=``
        (``approval_id`` resumes a resolved request); with neither the call is refused
        (``LA-APPROVAL``). ``timeout`` bounds the whole call (``LA-TOOL-TIMEOUT``);
        ``output_limit`` cuts the result (non-text results by their JSON form). A denial
        raises :class:`~lightagent.errors.PolicyError` / ``ApprovalError``.
        """
        found = self.resolve(capability, context)
        if found is None:
            raise PluginError(
                "LA-PROVIDER-NOT-FOUND",
                f"no provider offers capability {capability!r}",
                hint="Mount a provider that declares it, or check the scope and owner id.",
            )
        provider, spec = found
        args = dict(arguments or {})
        from lightagent_control.context import SecurityContext

        decision = await self._authorize(
            spec,
            str(getattr(provider, "name", "")),
            args,
            context,
            approval_token=approval_token,
            resource=resource,
            approval_id=approval_id,
            scoped=isinstance(context, SecurityContext),
        )
        if decision.arguments is not None:
            args = dict(decision.arguments)
        if not hasattr(provider, "invoke"):
            raise PluginError("LA-PROVIDER-NOT-FOUND", f"{provider!r} cannot invoke {capability!r}")
        try:
            if spec.timeout:
                result = await asyncio.wait_for(_call(provider, capability, args), spec.timeout)
            else:
                result = await _call(provider, capability, args)
        except asyncio.TimeoutError:
            raise ToolError(
                "LA-TOOL-TIMEOUT",
                f"capability {capability!r} exceeded {spec.timeout}s",
                details={"capability": capability, "timeout": spec.timeout},
            ) from None
        return _limited(result, spec.output_limit) if spec.output_limit else result

    async def _authorize(
        self,
        spec: CapabilitySpec,
        provider_name: str,
        args: dict[str, Any],
        context: Any,
        *,
        approval_token: Any,
        resource: str | None,
        approval_id: str | None,
        scoped: bool,
    ) -> Any:
        gate = self.gate
        approver = None
        if self.approval is not None and getattr(gate, "approval", None) is None:
            # A gate passed in without its own approval path uses the registry's.
            if self._approver is None:
                from lightagent_control.approval import approver as approval_path

                self._approver = approval_path(self.approval)
            approver = self._approver
        options: dict[str, Any] = {"approval_token": approval_token, "approval_id": approval_id}
        options.update(resource=resource, scoped=scoped, approver=approver)
        decider = gate.steps(spec, provider_name, args, context, **options)
        return await adecide(decider)


async def _call(provider: Any, capability: str, args: dict[str, Any]) -> Any:
    """The provider's result, every awaitable it hands back awaited (all within the timeout)."""
    invoke = provider.invoke
    if inspect.iscoroutinefunction(invoke):
        result = await invoke(capability, **args)
    else:  # a sync provider may block: run it in a worker thread
        result = await asyncio.to_thread(invoke, capability, **args)
    while inspect.isawaitable(result):
        result = await result
    return result


def _limited(result: Any, limit: int) -> Any:
    """``result`` cut to ``limit`` characters (bytes for bytes) with a marker saying how much went."""
    if isinstance(result, (bytes, bytearray)):
        if len(result) <= limit:
            return result
        return bytes(result[:limit]) + f"\n[truncated {len(result) - limit} bytes]".encode()
    if result is None:
        return result
    text = result if isinstance(result, str) else _as_text(result)
    if len(text) <= limit:
        return result
    return f"{text[:limit]}\n[truncated {len(text) - limit} characters]"


def _as_text(result: Any) -> str:
    import json

    try:
        return json.dumps(result, ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError):
        return str(result)
