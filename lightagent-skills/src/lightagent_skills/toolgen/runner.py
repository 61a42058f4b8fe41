"""How a generated tool runs: through a sandbox provider, one process per call, never here.

The host never imports or executes a generated source. It reads the tool's signature from
the syntax tree (the scan has checked that every annotation is a plain type and every
default a literal), so the schema and the argument checks are the ones ``@tool`` gives.
Each call writes one self-contained script — a small runner, the approved source and the
call's arguments as literals — and hands it to the agent's
:class:`~lightagent_skills.sandbox.SandboxProvider`. Inside the sandbox the runner executes
the source with the scan's import allow-list and without the refused builtins, and prints
the JSON result as the last line of its output. Without a provider nothing runs
(``LA-SANDBOX``): there is no in-process fallback.
"""

from __future__ import annotations

import ast
import builtins
import inspect
import json
import tempfile
import typing
from pathlib import Path
from typing import Any

from lightagent.errors import PolicyError, ToolError, ValidationError

from lightagent_skills.toolgen.rules import (
    ALLOWED_MODULES,
    GENERIC_TYPES,
    REFUSED_NAMES,
    SIMPLE_TYPES,
)
from lightagent_skills.toolgen.scan import ScanReport

__all__ = ["require_sandbox", "sandboxed_tool"]

#: The runner's code, after the lines that set SOURCE, CALL, ALLOWED and REFUSED.
_RUNNER = """
import builtins, json, sys


def _import(name, globals=None, locals=None, fromlist=(), level=0):
    if level or not (name in ALLOWED or name.split(".")[0] in ALLOWED):
        raise ImportError("import of %r is not allowed in a generated tool" % name)
    return __import__(name, globals, locals, fromlist, level)


def main():
    out, sys.stdout = sys.stdout, sys.stderr  # the tool's prints are not its result
    names = {k: v for k, v in vars(builtins).items() if k not in REFUSED}
    names["__import__"] = _import
    namespace = {"__name__": "generated_tool", "__builtins__": names}
    try:
        exec(compile(SOURCE, "<generated tool>", "exec"), namespace)
        value = namespace[CALL["name"]](*CALL["args"], **CALL["kwargs"])
        if hasattr(value, "__await__"):
            import asyncio

            value = asyncio.run(value)
        elif hasattr(value, "__next__"):
            value = list(value)
        text = json.dumps({"value": value}, default=str)
    except Exception as exc:
        text = json.dumps({"error": "%s: %s" % (type(exc).__name__, exc)})
    out.write("\\n" + text + "\\n")


main()
"""

_TYPES: dict[str, Any] = {
    name: getattr(typing, name) if name[0].isupper() else getattr(builtins, name)
    for name in (SIMPLE_TYPES | GENERIC_TYPES) - {"None"}
}


def require_sandbox(sandbox: Any) -> Any:
    """``sandbox`` if it is a provider; ``LA-SANDBOX`` otherwise (a generated tool never runs here)."""
    if not callable(getattr(sandbox, "run_script", None)):
        raise PolicyError(
            "LA-SANDBOX",
            "a generated tool runs only through a sandbox provider, and none is configured",
            hint="Pass LightAgent(sandbox=...): a SandboxProvider such as your container "
            "runner (docs/tool-generator.md).",
        )
    return sandbox


def _annotation(node: ast.expr | None) -> Any:
    """The type a checked annotation names, built from its syntax tree (nothing evaluated)."""
    if node is None:
        return inspect.Parameter.empty
    if isinstance(node, ast.Constant):
        return node.value  # None, or a Literal member / Annotated metadata
    if isinstance(node, (ast.Name, ast.Attribute)):
        name = node.id if isinstance(node, ast.Name) else node.attr
        return None if name == "None" else _TYPES[name]
    if isinstance(node, ast.BinOp):
        return typing.Union[_annotation(node.left), _annotation(node.right)]  # noqa: UP007
    if isinstance(node, ast.Tuple):
        return tuple(_annotation(item) for item in node.elts)
    assert isinstance(node, ast.Subscript)  # the scan admits nothing else
    base, inner = _annotation(node.value), _annotation(node.slice)
    return base[inner]


def _signature(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> inspect.Signature:
    P = inspect.Parameter
    args = fn.args
    positional = [*args.posonlyargs, *args.args]
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    kinds = [P.POSITIONAL_ONLY] * len(args.posonlyargs) + [P.POSITIONAL_OR_KEYWORD] * len(args.args)
    entries = [
        *zip(positional, defaults, kinds, strict=True),
        *(
            (arg, default, P.KEYWORD_ONLY)
            for arg, default in zip(args.kwonlyargs, args.kw_defaults, strict=True)
        ),
    ]
    return inspect.Signature(
        [
            P(
                arg.arg,
                kind,
                default=P.empty if default is None else ast.literal_eval(default),
                annotation=_annotation(arg.annotation),
            )
            for arg, default, kind in entries
        ]
    )


def _value(result: Any, name: str, timeout: float) -> Any:
    details = {"tool": name, "returncode": result.returncode, "stderr": result.stderr[-2000:]}
    if result.timed_out:
        raise ToolError(
            "LA-TOOLGEN-RUN",
            f"the generated tool {name} timed out after {timeout:g}s in its sandbox",
            details=details,
        )
    lines = result.stdout.strip().splitlines()
    try:
        answer = json.loads(lines[-1])
    except (IndexError, ValueError):
        answer = None
    if not isinstance(answer, dict) or "value" not in answer:
        error = answer.get("error") if isinstance(answer, dict) else None
        raise ToolError(
            "LA-TOOLGEN-RUN",
            f"the generated tool {name} failed in its sandbox: "
            f"{error or f'no result (exit code {result.returncode})'}",
            details=details,
        )
    return answer["value"]


def _run(source: str, name: str, call: dict[str, Any], sandbox: Any, timeout: float) -> Any:
    """Run one call of the tool ``name`` of ``source`` through ``sandbox``; its JSON result."""
    from lightagent_skills.sandbox import run_in_sandbox

    header = (
        f"SOURCE = {source!r}\nCALL = json.loads({json.dumps(call, default=str)!r})\n"
        f"ALLOWED = {sorted(ALLOWED_MODULES)!r}\nREFUSED = {sorted(REFUSED_NAMES)!r}\n"
    )
    with tempfile.TemporaryDirectory(prefix="lightagent-tool-") as folder:
        script = Path(folder) / f"{name}.py"
        script.write_text("import json\n" + header + _RUNNER, encoding="utf-8")
        result = run_in_sandbox(require_sandbox(sandbox), script, [], None, timeout)
    return _value(result, name, timeout)


def sandboxed_tool(source: str, report: ScanReport, sandbox: Any, *, timeout: float) -> Any:
    """The ``Tool`` that ``source`` (scanned: ``report``) defines; each call runs in ``sandbox``."""
    from lightagent.tools.decorator import as_tool

    require_sandbox(sandbox)
    signature = report.signature
    if signature is None:
        raise ValidationError("LA-TOOLGEN-SCHEMA", "the source defines no tool")
    name = signature.name
    fn = next(
        node
        for node in ast.parse(source).body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name
    )

    def call(*args: Any, **kwargs: Any) -> Any:
        return _run(source, name, {"name": name, "args": args, "kwargs": kwargs}, sandbox, timeout)

    try:
        call.__signature__ = _signature(fn)  # type: ignore[attr-defined]
    except (TypeError, KeyError) as exc:  # e.g. Optional[int, str]
        raise ValidationError(
            "LA-TOOLGEN-SCHEMA", f"the parameters of {name} do not describe types: {exc}"
        ) from exc
    call.__annotations__ = {
        p.name: p.annotation
        for p in call.__signature__.parameters.values()  # type: ignore[attr-defined]
        if p.annotation is not inspect.Parameter.empty
    }
    call.__name__ = call.__qualname__ = name
    call.__doc__ = ast.get_docstring(fn)
    if signature.tool_info is not None:
        call.tool_info = signature.tool_info  # type: ignore[attr-defined]
    return as_tool(call, infer=True)
