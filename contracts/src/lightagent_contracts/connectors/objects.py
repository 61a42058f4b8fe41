"""Checks on a loaded plugin: hookimpls against hookspecs, registrations, protocols, tools.

These run inside the validator's sandbox subprocess (see :mod:`.sandbox`), never in the
validating process, because they call the plugin's hook implementations.
"""

from __future__ import annotations

import importlib
import inspect
import re
from typing import Any

__all__ = ["PROVIDER_PROTOCOLS", "check_tool_schema", "inspect_plugin", "tool_schema_of"]

#: kind -> (protocol "module:Name" or None, methods all required, methods of which one is enough)
PROVIDER_PROTOCOLS: dict[str, tuple[str | None, tuple[str, ...], tuple[str, ...]]] = {
    "model": ("lightagent.models.base:Model", ("complete", "acomplete", "stream", "astream"), ()),
    "toolset": (None, ("list_tools", "call_tool"), ()),
    "memory": (None, ("store", "retrieve"), ()),
    "session_store": ("lightagent.events.store:SessionStore", (), ("append", "save", "get")),
    "retrieval": (None, ("search",), ()),
    "workflow": (None, (), ("run", "arun")),
    "verifier": (None, ("verify",), ()),
    "artifact_store": (None, ("stage", "read"), ()),
    "guardrail": (None, (), ("__call__", "check", "acheck")),
    "hook": (None, (), ("__call__", "on_phase", "on_phase_sync", "before_run", "after_run")),
    "exporter": (None, (), ("export", "on_event", "__call__")),
}
_NAME = re.compile(
    r"^[A-Za-z0-9][A-Za-z0-9_.:/-]{0,127}$"
)  # as the registry: URL schemes ("sqlite://")
_TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_JSON_TYPES = {"string", "number", "integer", "boolean", "array", "object", "null"}
_SCOPES = {"runtime", "session", "agent"}
_TOOL_PROVIDER_METHODS = ("tools", "list_tools", "get_tools", "load_tools")
_BUILTIN_COMMANDS = {"plugins", "version", "help"}
#: Commands of the author kit (lightagent-contracts registers them); another plugin may not.
_KIT_COMMANDS = {"validate-connector", "new-plugin"}


def _location(obj: Any) -> str:
    code = getattr(inspect.unwrap(obj), "__code__", None) if callable(obj) else None
    if code is not None:
        return f"{code.co_filename}:{code.co_firstlineno}"
    try:
        return f"{inspect.getsourcefile(obj)}:{inspect.getsourcelines(obj)[1] or 1}"
    except (TypeError, OSError):
        return ""


def _finding(
    code: str, message: str, location: str = "", level: str | None = None, hint: str = ""
) -> dict[str, Any]:
    return {"code": code, "message": message, "location": location, "level": level, "hint": hint}


def _spec_args(plugin: Any = None) -> dict[str, list[str]]:
    """The hooks ``plugin`` may implement: the kernel's, moved ones, and those it declares."""
    from lightagent.plugins import declared_hookspecs

    return declared_hookspecs([plugin] if plugin is not None else [])


def _kinds(plugin: Any) -> dict[str, str]:
    """Register hook -> registry kind, including kinds ``plugin`` declares."""
    from lightagent import hookspecs
    from lightagent.hookspecs import LEGACY_HOOKS

    kinds = {hook: kind for kind, hook in hookspecs.REGISTER_HOOKS.items()}
    kinds.update({hook: kind for hook, (kind, _) in LEGACY_HOOKS.items()})
    impl = getattr(plugin, "register_hookspecs", None)
    if callable(impl) and hasattr(impl, f"{hookspecs.PROJECT}_impl"):

        def add(specs: Any, *, kinds: dict[str, str] | None = None) -> None:
            for kind, hook in (kinds or {}).items():
                found[hook] = kind

        found: dict[str, str] = {}
        try:
            impl(add)
        except Exception:  # reported as LAV032 when the hook itself is checked
            pass
        kinds.update(found)
    return kinds


def _moved_hook(plugin: Any, plugin_name: str, hook: str) -> str | None:
    """A LAV036 message when ``hook`` moved out of the kernel and the plugin relies on the fallback."""
    from lightagent.hookspecs import LEGACY_HOOKS

    if hook not in LEGACY_HOOKS:
        return None
    owners = LEGACY_HOOKS[hook][1]
    if plugin_name in owners or hook in _declared_by(plugin):
        return None
    try:
        from importlib.metadata import requires

        from packaging.requirements import Requirement

        required = {Requirement(r).name.lower() for r in requires(plugin_name) or ()}
    except Exception:  # not installed as a distribution: nothing to check against
        required = set()
    if required & set(owners):
        return None
    return (
        f"{hook} is a hook of {' or '.join(owners)} since lightagent-core 0.2: add "
        f"{' or '.join(owners)} to the dependencies (the core's fallback goes in 0.3)"
    )


def _declared_by(plugin: Any) -> set[str]:
    from lightagent import hookspecs

    impl = getattr(plugin, "register_hookspecs", None)
    if not (callable(impl) and hasattr(impl, f"{hookspecs.PROJECT}_impl")):
        return set()
    names: set[str] = set()

    def add(specs: Any, *, kinds: Any = None) -> None:
        marker = f"{hookspecs.PROJECT}_spec"
        names.update(n for n in dir(specs) if hasattr(getattr(specs, n, None), marker))

    try:
        impl(add)
    except Exception:  # reported as LAV032 when the hook itself is checked
        pass
    return names


def _impl_args(func: Any) -> list[str]:
    # pluggy passes only the arguments without defaults; those are what must exist.
    params = inspect.signature(func).parameters.values()
    return [
        p.name
        for p in params
        if p.default is inspect.Parameter.empty
        and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    ]


def _seeds_tool_schema(info: dict[str, Any]) -> dict[str, Any]:
    props: dict[str, Any] = {}
    required = []
    for param in info.get("tool_params") or []:
        if not isinstance(param, dict) or "name" not in param:
            props["?"] = param
            continue
        props[param["name"]] = {
            "type": param.get("type", "string"),
            "description": param.get("description", ""),
        }
        if param.get("required"):
            required.append(param["name"])
    return {
        "name": info.get("tool_name"),
        "description": info.get("tool_description") or info.get("description") or "",
        "parameters": {"type": "object", "properties": props, "required": required},
    }


def tool_schema_of(obj: Any) -> dict[str, Any]:
    """``{name, description, parameters}`` of a tool object, a ``tool_info`` callable or a function."""
    try:
        from lightagent.tools.decorator import as_tool
    except ImportError:  # the tools package is optional for this check
        as_tool = None  # type: ignore[assignment]
    if as_tool is not None:
        tool = as_tool(obj)
        return {"name": tool.name, "description": tool.description, "parameters": tool.parameters}
    info = getattr(obj, "tool_info", None)
    if isinstance(info, dict):
        return _seeds_tool_schema(info)
    if all(hasattr(obj, a) for a in ("name", "parameters")) and not inspect.isfunction(obj):
        return {
            "name": obj.name,
            "description": getattr(obj, "description", ""),
            "parameters": obj.parameters,
        }
    if callable(obj):
        props = {name: {"type": "string"} for name in inspect.signature(obj).parameters}
        return {
            "name": getattr(obj, "__name__", None),
            "description": inspect.getdoc(obj) or "",
            "parameters": {"type": "object", "properties": props, "required": list(props)},
        }
    raise TypeError(f"a {type(obj).__name__} is not a tool")


def check_tool_schema(schema: dict[str, Any]) -> list[str]:
    """Problems with a ``{name, description, parameters}`` tool schema (empty when valid)."""
    problems: list[str] = []
    name = schema.get("name")
    if not isinstance(name, str) or not _TOOL_NAME.fullmatch(name):
        problems.append(f"name {name!r} must match {_TOOL_NAME.pattern}")
    params = schema.get("parameters")
    if not isinstance(params, dict) or params.get("type") != "object":
        problems.append('parameters must be a JSON schema with "type": "object"')
        return problems
    props = params.get("properties", {})
    if not isinstance(props, dict):
        problems.append("parameters.properties must be an object")
        return problems
    for key, prop in props.items():
        if not isinstance(prop, dict):
            problems.append(f"property {key!r} must be an object")
            continue
        kind = prop.get("type")
        kinds = kind if isinstance(kind, list) else [kind]
        if kind is None and not any(
            k in prop for k in ("anyOf", "oneOf", "allOf", "$ref", "enum", "const")
        ):
            problems.append(f"property {key!r} has no type")
        elif kind is not None and not all(k in _JSON_TYPES for k in kinds):
            problems.append(f"property {key!r} has unknown type {kind!r}")
        if kind == "array" and "items" not in prop and "prefixItems" not in prop:
            problems.append(f"property {key!r} is an array without items")
    required = params.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        problems.append("parameters.required must be a list of names")
    else:
        missing = [r for r in required if r not in props]
        if missing:
            problems.append(f"required names {missing} are not properties")
    return problems


def _load_protocol(path: str | None) -> Any:
    if not path:
        return None
    module, _, attr = path.partition(":")
    try:
        proto = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError):
        return None
    return proto if getattr(proto, "_is_runtime_protocol", False) else None


def _protocol_attrs(proto: Any) -> list[str]:
    attrs = getattr(proto, "__protocol_attrs__", None)  # Python 3.12+
    if attrs is None:
        attrs = set()
        for base in proto.__mro__[:-1]:
            if base.__name__ in ("Protocol", "Generic"):
                continue
            names = [*vars(base).get("__annotations__", {}), *vars(base)]
            attrs.update(n for n in names if not n.startswith("_"))
    return sorted(attrs)


def _protocol_problem(kind: str, obj: Any) -> str | None:
    spec = PROVIDER_PROTOCOLS.get(kind)
    if spec is None:
        return None
    proto_path, required, any_of = spec
    proto = _load_protocol(proto_path)
    if proto is not None:
        attrs = _protocol_attrs(proto)
        if inspect.isclass(obj):
            # A class: its instances' data attributes are unknown, its methods are not.
            wanted = [a for a in attrs if callable(getattr(proto, a, None))]
        else:
            try:
                if isinstance(obj, proto):
                    return None
            except TypeError:
                pass
            wanted = attrs
        missing = [a for a in wanted if not hasattr(obj, a)]
        if missing:
            return f"does not follow {proto.__name__} (missing {', '.join(missing)})"
        return None
    missing = [m for m in required if not callable(getattr(obj, m, None))]
    if missing:
        return f"missing method(s) {', '.join(missing)}"
    if any_of and not any(callable(getattr(obj, m, None)) for m in any_of):
        return f"needs one of {', '.join(any_of)}"
    return None


class _Recorder:
    """The ``register`` callback handed to ``register_*`` hooks: records, checks shapes."""

    def __init__(self, kind: str, hook: str, out: dict[str, Any]) -> None:
        self.kind, self.hook, self.out = kind, hook, out

    def __call__(self, *args: Any, **kwargs: Any) -> None:
        where = _caller_location()
        try:
            bound = _register_signature.bind(*args, **kwargs)
        except TypeError as exc:
            self.out["findings"].append(
                _finding("LAV034", f"{self.hook}: register{_short(args, kwargs)}: {exc}", where)
            )
            return
        values = {**{"priority": 0, "scope": "runtime"}, **bound.arguments}
        name, provider = values["name"], values["provider"]
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            self.out["findings"].append(
                _finding("LAV041", f"{self.hook}: provider name {name!r} is invalid", where)
            )
            return
        if not isinstance(values["priority"], int) or values["scope"] not in _SCOPES:
            self.out["findings"].append(
                _finding(
                    "LAV034",
                    f"{self.hook}: {name!r}: priority must be an int and scope one of {sorted(_SCOPES)}",
                    where,
                )
            )
        self.out["registrations"].append((self.kind, name, provider, where))


def _register_signature_fn(
    name: Any, provider: Any, *, priority: int = 0, scope: str = "runtime"
) -> None:
    """Mirror of :class:`lightagent.hookspecs.Register`."""


_register_signature = inspect.signature(_register_signature_fn)


def _short(args: tuple, kwargs: dict) -> str:
    text = ", ".join([*(repr(a)[:30] for a in args), *(f"{k}=..." for k in kwargs)])
    return f"({text})"


def _caller_location() -> str:
    frame = inspect.currentframe()
    frame = frame.f_back.f_back if frame and frame.f_back else None
    return f"{frame.f_code.co_filename}:{frame.f_lineno}" if frame else ""


class _CommandRecorder:
    """The ``cli`` object handed to ``register_commands``: records ``add_command`` calls."""

    def __init__(self, out: dict[str, Any], plugin_name: str) -> None:
        self.out = out
        self.taken = set(_BUILTIN_COMMANDS)
        if plugin_name != "lightagent-contracts":
            self.taken |= _KIT_COMMANDS

    def add_command(self, name: Any, handler: Any = None, *args: Any, **kwargs: Any) -> None:
        """Record one command and check its shape."""
        where = _caller_location()
        configure = kwargs.get("configure")
        if not isinstance(name, str) or not re.match(r"^[a-z][a-z0-9-]*$", name):
            self.out["findings"].append(
                _finding("LAV044", f"command name {name!r} is invalid", where)
            )
        elif name in self.taken or name in self.out["commands"]:
            self.out["findings"].append(
                _finding("LAV044", f"command {name!r} is already defined", where)
            )
        elif not callable(handler) or (configure is not None and not callable(configure)):
            self.out["findings"].append(
                _finding("LAV044", f"command {name!r}: handler/configure must be callable", where)
            )
        else:
            self.out["commands"].append(name)


def _resolve(provider: Any) -> Any:
    if isinstance(provider, str) and ":" in provider:
        module, _, attr = provider.partition(":")
        obj: Any = importlib.import_module(module)
        for part in attr.split("."):
            obj = getattr(obj, part)
        return obj
    return provider


def _check_registration(
    kind: str, name: str, provider: Any, where: str, out: dict[str, Any]
) -> None:
    try:
        obj = _resolve(provider)
    except Exception as exc:
        out["findings"].append(
            _finding("LAV040", f"{kind} {name!r}: cannot resolve {provider!r}: {exc}", where)
        )
        return
    if kind == "tool":
        if not inspect.isfunction(obj) and any(
            callable(getattr(obj, m, None)) for m in _TOOL_PROVIDER_METHODS
        ):
            return  # a tool provider (e.g. MCP): its tools appear at run time, not at import
        try:
            schema = tool_schema_of(obj)
        except Exception as exc:
            out["findings"].append(_finding("LAV050", f"tool {name!r}: {exc}", where))
            return
        for issue in check_tool_schema(schema):
            out["findings"].append(_finding("LAV050", f"tool {name!r}: {issue}", where))
        if not str(schema.get("description") or "").strip():
            out["findings"].append(_finding("LAV052", f"tool {name!r} has no description", where))
        out["tool_names"].append((str(schema.get("name") or name), where))
        return
    problem = _protocol_problem(kind, obj)
    if problem and callable(obj) and not inspect.isclass(obj):
        # A factory: build one instance (inside the sandbox) and check that instead.
        try:
            built = obj()
        except Exception:
            # It needs its configuration (``("mcp", {...})``): what it builds is checked
            # when a user names it, not here.
            problem = None
        else:
            if built is not None:
                problem = _protocol_problem(kind, built)
    if problem:
        out["findings"].append(_finding("LAV040", f"{kind} {name!r} {problem}", where))


def inspect_plugin(plugin: Any, *, plugin_name: str) -> dict[str, Any]:
    """Check ``plugin``'s hookimpls, call its hooks with recorders and check what it registers."""
    import pluggy
    from lightagent import hookspecs
    from lightagent.errors import ValidationError
    from lightagent.manifest import ConnectorManifest

    specs = _spec_args(plugin)
    kinds = _kinds(plugin)
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    out: dict[str, Any] = {
        "findings": [],
        "registrations": [],
        "commands": [],
        "tool_names": [],
        "hooks": [],
    }
    manifest: Any = None
    for attr in dir(plugin):
        opts = pm.parse_hookimpl_opts(plugin, attr)
        if opts is None:
            continue
        func = getattr(plugin, attr)
        hook = opts.get("specname") or attr
        where = _location(func)
        out["hooks"].append(hook)
        if hook not in specs:
            out["findings"].append(
                _finding("LAV030", f"hookimpl {attr!r}: lightagent has no hook {hook!r}", where)
            )
            continue
        moved = _moved_hook(plugin, plugin_name, hook)
        if moved is not None:
            out["findings"].append(_finding("LAV036", moved, where))
        args = _impl_args(func)
        unknown = [a for a in args if a not in specs[hook]]
        if unknown:
            out["findings"].append(
                _finding(
                    "LAV031",
                    f"hookimpl {hook!r} takes {', '.join(unknown)}, which the hookspec does not provide "
                    f"(it provides: {', '.join(specs[hook]) or 'nothing'})",
                    where,
                )
            )
            continue
        if hook in kinds:
            target: Any = _Recorder(kinds[hook], hook, out)
        elif hook == "register_commands":
            target = _CommandRecorder(out, plugin_name)
        elif hook == "register_hookspecs":

            def target(specs: Any, *, kinds: Any = None) -> None:
                return None

        else:
            target = None
        call_args = {a: target for a in args}
        try:
            result = func(**call_args)
            if hook == "lightagent_manifest":
                manifest = (
                    ConnectorManifest.from_any(result).to_dict() if result is not None else None
                )
        except Exception as exc:
            if hook == "lightagent_manifest":
                manifest = False  # reported below, never again as "returns no manifest"
            if hook == "lightagent_manifest" and isinstance(exc, ValidationError):
                out["findings"].append(_finding("LAV011", exc.message, where, hint=exc.hint or ""))
            else:
                out["findings"].append(
                    _finding("LAV032", f"{hook} raised {type(exc).__name__}: {exc}", where)
                )
    if not out["hooks"]:
        out["findings"].append(
            _finding("LAV033", f"{plugin_name} implements no lightagent hook", _location(plugin))
        )
    seen: dict[tuple[str, str], str] = {}
    registered: dict[str, list[str]] = {}
    for kind, name, provider, where in out.pop("registrations"):
        if (kind, name) in seen:
            code = "LAV051" if kind == "tool" else "LAV041"
            out["findings"].append(
                _finding(
                    code,
                    f"{kind} {name!r} is registered twice (first at {seen[(kind, name)]})",
                    where,
                )
            )
            continue
        seen[(kind, name)] = where
        registered.setdefault(kind, []).append(name)
        _check_registration(kind, name, provider, where, out)
    by_name: dict[str, str] = {}
    for tool_name, where in out.pop("tool_names"):
        if tool_name in by_name and by_name[tool_name] != where:
            out["findings"].append(
                _finding(
                    "LAV051",
                    f"two tools are named {tool_name!r} (first at {by_name[tool_name]})",
                    where,
                )
            )
        by_name.setdefault(tool_name, where)
    if out["commands"]:
        registered["command"] = list(out["commands"])
    return {
        "findings": out["findings"],
        "registered": registered,
        "hooks": out["hooks"],
        "manifest": manifest,
    }
