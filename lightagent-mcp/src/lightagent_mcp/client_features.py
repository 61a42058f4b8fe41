"""What a server may ask of us: sampling, elicitation and roots, each opt-in per server.

Nothing is advertised unless the server's settings ask for it, so a server sees a plain
tool client by default. With ``"sampling"`` a server's ``sampling/createMessage`` is
answered by a model we choose (the agent's own with ``setup_mcp``, or the one passed as
``sampling_model=`` or named in the settings), within per-server limits: at most
``max_tokens`` per answer, ``max_requests`` answers and ``max_total_tokens`` tokens in
all; with ``"approval": true`` a human approves each request first. With
``"elicitation": true`` a server's questions go to the human reviewer (``reviewer=``),
or are refused when there is none. ``"roots"`` lists the directories the server may use.

Every request becomes an event (``mcp.sampling``, ``mcp.elicitation``, ``mcp.roots``)
in the toolset's ``events`` and, during a tool call, in the run that made the call; a
refusal carries a stable code (``LA-MCP-SAMPLING-REFUSED``,
``LA-MCP-ELICITATION-REFUSED``) and the server gets a JSON-RPC error.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["InputRequest", "SamplingSettings", "ServerRequests"]

_log = logging.getLogger("lightagent.mcp")
_REFUSED = -32600  # JSON-RPC "invalid request": what the SDK answers for an unsupported feature
_SHOWN = 500


@dataclass(frozen=True)
class SamplingSettings:
    """A server's sampling limits (``"sampling": true`` or ``{...}`` in its settings)."""

    #: A model name for the answers (default: the model handed to the toolset).
    model: str | None = None
    #: Tokens one answer may have at most (a request asking more gets this many).
    max_tokens: int = 1024
    #: Answers the server may get while the toolset is open.
    max_requests: int = 20
    #: Tokens (prompt and answer) the server's requests may spend in all.
    max_total_tokens: int = 50_000
    #: Ask the human reviewer before each request is answered.
    approval: bool = False


@dataclass
class InputRequest:
    """What a reviewer is asked on a server's behalf (the fields of an approval request).

    ``action`` is ``"mcp_elicitation"`` (answer with the form's values: an ``edit``
    decision's ``arguments``, or a dict) or ``"mcp_sampling"`` (approve or reject).
    """

    action: str
    server: str
    action_name: str
    arguments: dict[str, Any]
    reason: str
    allowed_decisions: tuple[str, ...]
    request_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def tool_name(self) -> str:
        """The name a tool-approval reviewer reads (``<server>:<action>``)."""
        return self.action_name


def _types() -> Any:
    import mcp.types as types

    return types


def _refusal(message: str) -> Any:
    return _types().ErrorData(code=_REFUSED, message=message)


def _reviewer(value: Any) -> Callable[[Any], Any] | None:
    """A reviewer callable, from a callable or an approval hook that holds one."""
    if value is None:
        return None
    held = getattr(value, "reviewer", None)
    if callable(held):
        return held  # type: ignore[no-any-return]
    if callable(value) and not hasattr(value, "wants"):
        return value  # type: ignore[no-any-return]
    return None


async def _ask(reviewer: Callable[[Any], Any], request: InputRequest, timeout: float) -> Any:
    """The reviewer's answer (a sync reviewer runs in a worker thread)."""
    if inspect.iscoroutinefunction(reviewer) or inspect.iscoroutinefunction(
        getattr(reviewer, "__call__", None)  # noqa: B004 - an async callable object
    ):
        answer = reviewer(request)
    else:
        answer = await asyncio.to_thread(reviewer, request)
    if inspect.isawaitable(answer):
        answer = await asyncio.wait_for(answer, timeout)
    return answer


def _decision(answer: Any) -> tuple[str, Any]:
    """``(action, values)`` of a reviewer's answer: an approval decision, a dict, a bool or None."""
    if answer is None:
        return "cancel", None
    if answer is True:
        return "accept", None
    if answer is False or isinstance(answer, str):
        return "decline", None
    if isinstance(answer, Mapping):
        return "accept", dict(answer)
    action = getattr(answer, "action", None)
    if action in ("approve", "edit", "respond"):
        values = getattr(answer, "arguments", None)
        if values is None and action == "respond":
            try:
                values = json.loads(getattr(answer, "response", None) or "null")
            except json.JSONDecodeError:
                values = None
        return "accept", dict(values) if isinstance(values, Mapping) else None
    if action == "reject":
        return "decline", None
    return "cancel", None


def _text(content: Any) -> str:
    blocks = content if isinstance(content, list) else [content]
    parts = []
    for block in blocks:
        kind = getattr(block, "type", None)
        if kind == "text":
            parts.append(block.text)
        else:
            parts.append(f"[{kind} content left out]")
    return "\n".join(parts)


class ServerRequests:
    """Answers one server's sampling, elicitation and roots requests (see the module doc).

    ``emit(type, data)`` puts an event in the run of the tool call in progress (if any);
    ``hold()`` is a context manager that stops the calls' idle clocks while we answer.
    """

    def __init__(
        self,
        settings: Any,
        *,
        model: Any = None,
        reviewer: Any = None,
        record: Callable[..., None],
        emit: Callable[[str, dict[str, Any]], None],
        hold: Callable[[], Any],
    ) -> None:
        self.settings = settings
        self.model = model
        self.reviewer = reviewer
        self._record, self._emit, self._hold = record, emit, hold
        self.requests = 0
        self.tokens = 0
        self._resolved: Any = None

    @property
    def _patience(self) -> float:
        # a human may take longer than a call's idle timeout, not longer than the call may
        return max(self.settings.total_timeout, self.settings.timeout)

    def callbacks(self) -> dict[str, Any]:
        """The SDK's callback keywords for what this server's settings turn on."""
        s, out = self.settings, dict[str, Any]()
        if s.sampling is not None:
            out["sampling_callback"] = self.sample
        if s.elicitation:
            out["elicitation_callback"] = self.elicit
        if s.roots:
            out["list_roots_callback"] = self.list_roots
        return out

    def _event(self, kind: str, **data: Any) -> None:
        data = {"server": self.settings.name, **data}
        self._record(kind, **data)
        try:
            self._emit(f"mcp.{kind}", data)
        except Exception:  # an observer must not break the server's request
            _log.debug("MCP server %s: %s event not delivered", self.settings.name, kind)

    def _refuse(self, kind: str, code: str, why: str, **data: Any) -> Any:
        self._event(kind, status="refused", code=code, reason=why, **data)
        _log.warning("MCP server %s: %s refused: %s", self.settings.name, kind, why)
        return _refusal(f"[{code}] {why}")

    # -- roots -------------------------------------------------------------------------------
    async def list_roots(self, context: Any = None) -> Any:
        """``roots/list``: the directories of the settings."""
        types = _types()
        roots = [types.Root(uri=uri, name=name) for uri, name in self.settings.roots]
        self._event("roots", status="answered", roots=[uri for uri, _ in self.settings.roots])
        return types.ListRootsResult(roots=roots)

    # -- sampling ----------------------------------------------------------------------------
    def _sampling_model(self) -> Any:
        if self._resolved is not None:
            return self._resolved
        limits: SamplingSettings = self.settings.sampling
        model = self.model
        if limits.model is not None:
            model = limits.model
        elif model is not None and not isinstance(model, str) and hasattr(model, "tools"):
            model = getattr(model, "model", None)  # an agent: its own model
        if model is None:
            return None
        if isinstance(model, str):
            from lightagent.run.options import resolve_model

            model = resolve_model(model, api_key=None, base_url=None, provider=None)
        from lightagent.models.adapt import as_model

        self._resolved = as_model(model)
        return self._resolved

    async def sample(self, context: Any, params: Any) -> Any:
        """``sampling/createMessage``: our model answers, within the server's limits."""
        limits: SamplingSettings = self.settings.sampling
        code = "LA-MCP-SAMPLING-REFUSED"
        asked = int(getattr(params, "max_tokens", None) or getattr(params, "maxTokens", 0) or 0)
        if self.requests >= limits.max_requests:
            return self._refuse(
                "sampling", code, f"the server used its {limits.max_requests} sampling requests"
            )
        if self.tokens >= limits.max_total_tokens:
            return self._refuse(
                "sampling",
                code,
                f"the server spent its {limits.max_total_tokens} sampling tokens",
                tokens=self.tokens,
            )
        try:
            model = self._sampling_model()
        except Exception as exc:
            return self._refuse("sampling", code, f"the sampling model cannot be built: {exc}")
        if model is None:
            return self._refuse(
                "sampling",
                code,
                "no model to answer with: pass sampling_model= (a model or an agent) or name "
                "one in the server's sampling settings",
            )
        messages = []
        system = getattr(params, "system_prompt", None) or getattr(params, "systemPrompt", None)
        if system:
            messages.append({"role": "system", "content": str(system)})
        for message in params.messages:
            messages.append({"role": message.role, "content": _text(message.content)})
        if limits.approval:
            refused = await self._approve(messages, asked)
            if refused is not None:
                return refused
        self.requests += 1
        cap = min(asked or limits.max_tokens, limits.max_tokens)
        options: dict[str, Any] = {"max_tokens": cap}
        temperature = getattr(params, "temperature", None)
        if temperature is not None:
            options["temperature"] = temperature
        stop = getattr(params, "stop_sequences", None) or getattr(params, "stopSequences", None)
        if stop:
            options["stop"] = list(stop)
        from lightagent.models.base import ModelRequest

        try:
            with self._hold():
                response = await model.acomplete(ModelRequest(messages=messages, options=options))
        except Exception as exc:
            return self._refuse("sampling", code, f"the model failed: {exc}"[:_SHOWN])
        usage = getattr(response, "usage", None)
        spent = int(getattr(usage, "total_tokens", 0) or 0)
        self.tokens += spent
        name = getattr(response, "model", None) or getattr(model, "name", None) or "unknown"
        stop_reason = "maxTokens" if response.finish_reason == "length" else "endTurn"
        self._event(
            "sampling",
            status="answered",
            model=name,
            max_tokens=cap,
            tokens=spent,
            requests_left=limits.max_requests - self.requests,
            tokens_left=max(0, limits.max_total_tokens - self.tokens),
        )
        types = _types()
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text=response.content or ""),
            model=str(name),
            stop_reason=stop_reason,
        )

    async def _approve(self, messages: list[dict[str, Any]], asked: int) -> Any:
        code = "LA-MCP-SAMPLING-REFUSED"
        reviewer = _reviewer(self.reviewer)
        if reviewer is None:
            return self._refuse(
                "sampling", code, "sampling needs approval and no reviewer is configured"
            )
        request = InputRequest(
            action="mcp_sampling",
            server=self.settings.name,
            action_name=f"{self.settings.name}:sampling",
            arguments={"messages": messages, "max_tokens": asked},
            reason=f"MCP server {self.settings.name!r} asks the model for an answer",
            allowed_decisions=("approve", "reject"),
        )
        try:
            with self._hold():
                action, _ = _decision(await _ask(reviewer, request, self._patience))
        except Exception as exc:
            return self._refuse("sampling", code, f"the reviewer failed: {exc}"[:_SHOWN])
        if action != "accept":
            return self._refuse("sampling", code, "the reviewer did not approve the request")
        return None

    # -- elicitation -------------------------------------------------------------------------
    async def elicit(self, context: Any, params: Any) -> Any:
        """``elicitation/create``: the human reviewer answers the server's form."""
        code = "LA-MCP-ELICITATION-REFUSED"
        mode = getattr(params, "mode", "form") or "form"
        message = str(getattr(params, "message", ""))[:_SHOWN]
        if mode != "form":
            return self._refuse(
                "elicitation", code, f"{mode} elicitation is not supported", mode=mode
            )
        reviewer = _reviewer(self.reviewer)
        if reviewer is None:
            return self._refuse(
                "elicitation", code, "no human reviewer is configured (reviewer=)", message=message
            )
        schema = getattr(params, "requested_schema", None) or getattr(
            params, "requestedSchema", None
        )
        request = InputRequest(
            action="mcp_elicitation",
            server=self.settings.name,
            action_name=f"{self.settings.name}:elicitation",
            arguments={"message": message, "requested_schema": schema},
            reason=message,
            allowed_decisions=("edit", "reject"),
        )
        try:
            with self._hold():
                action, values = _decision(await _ask(reviewer, request, self._patience))
        except Exception as exc:
            return self._refuse("elicitation", code, f"the reviewer failed: {exc}"[:_SHOWN])
        self._event("elicitation", status=action, message=message, request_id=request.request_id)
        return _types().ElicitResult(action=action, content=values if action == "accept" else None)


def parse_sampling(fail: Callable[[str, str], Exception], value: Any) -> SamplingSettings | None:
    """``"sampling"`` of a server's settings: false/absent (off), true (defaults) or limits."""
    if value is None or value is False:
        return None
    if value is True:
        return SamplingSettings()
    if not isinstance(value, Mapping):
        raise fail("sampling", f"must be true, false or an object of limits, got {value!r}")
    known = {"model", "max_tokens", "max_requests", "max_total_tokens", "approval"}
    unknown = sorted(set(value) - known)
    if unknown:
        raise fail("sampling", f"unknown key {unknown[0]!r}; known keys are {sorted(known)}")
    out: dict[str, Any] = {}
    for key in ("max_tokens", "max_requests", "max_total_tokens"):
        if key in value:
            number = value[key]
            if isinstance(number, bool) or not isinstance(number, int) or number < 1:
                raise fail("sampling", f"{key} must be a positive integer, got {number!r}")
            out[key] = number
    model = value.get("model")
    if model is not None and (not isinstance(model, str) or not model.strip()):
        raise fail("sampling", f"model must be a model name, got {model!r}")
    approval = value.get("approval", False)
    if not isinstance(approval, bool):
        raise fail("sampling", f"approval must be true or false, got {approval!r}")
    return SamplingSettings(model=model, approval=approval, **out)


def parse_roots(fail: Callable[[str, str], Exception], value: Any) -> tuple[tuple[str, str], ...]:
    """``"roots"``: directories (paths or ``file://`` URIs), as ``(uri, name)`` pairs."""
    from pathlib import Path

    if value is None:
        return ()
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise fail("roots", "must be a list of directories (paths or file:// URIs)")
    out = []
    for item in value:
        if item.startswith("file://"):
            uri = item
        elif "://" in item:
            raise fail("roots", f"a root is a path or a file:// URI, got {item!r}")
        else:
            uri = Path(item).expanduser().resolve().as_uri()
        out.append((uri, uri.rstrip("/").rsplit("/", 1)[-1] or uri))
    return tuple(out)
