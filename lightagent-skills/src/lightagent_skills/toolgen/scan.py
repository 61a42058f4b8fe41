"""The static check of a generated tool's source: parsed, never imported or run.

A generated tool must be one public function (helpers start with ``_``) with a docstring
and annotated parameters of JSON-describable types, in a module whose top level only
imports allowed modules, defines functions and assigns literal constants (``tool_info``
included). Imports are checked against an allow-list of pure-computation modules; a
refused import is reported with what it would reach (process, network, file system,
native code, the interpreter). Calls and names that reach code execution or the
interpreter's internals (``eval``, ``open``, ``getattr``, ``type``, frames, also as a class
pattern's keyword: ``case object(gi_frame=f)``) are refused anywhere, as are decorators, classes, ``global``, and defaults or annotations that are not
plain literals or type expressions (they run when the function is defined).

The scan fails closed on attribute access: no identifier may start with ``__``, no
attribute with ``_``, and no string or bytes constant may hold ``__`` at all; attributes
named by a string are refused (``operator.attrgetter``/``methodcaller``,
``functools.update_wrapper``/``singledispatch``, ``copy.dispatch_table``,
``string.Formatter``, ``hasattr`` with a computed name, ``str.format`` on a computed
template or with an attribute field such as ``{0.real}``).
Each finding names its ``rule``.
The scan is one layer: a generated tool also runs only in a sandbox provider.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Any

from lightagent_skills.toolgen.rules import (
    ALLOWED_MODULES,
    CATEGORIES,
    GENERIC_TYPES,
    REFUSED_ATTRIBUTES,
    REFUSED_MODULE_ATTRIBUTES,
    REFUSED_NAMES,
    SIMPLE_TYPES,
)

__all__ = ["ALLOWED_MODULES", "Finding", "ScanReport", "ToolSignature", "scan_source"]

_TOOL_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")


@dataclass(frozen=True)
class Finding:
    """One reason the source is refused: ``kind`` is ``unsafe`` or ``schema``; ``rule`` is
    the stable name of the check (``dunder-string``, ``dynamic-attribute`` … docs/tool-generator.md).
    """

    kind: str
    message: str
    line: int | None = None
    rule: str = "shape"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe form."""
        return {"kind": self.kind, "message": self.message, "line": self.line, "rule": self.rule}


@dataclass
class ToolSignature:
    """The tool the source defines, read from the syntax tree (what a reviewer is shown)."""

    name: str
    description: str
    parameters: list[dict[str, Any]] = field(default_factory=list)
    tool_info: dict[str, Any] | None = None
    imports: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe form."""
        return {
            "name": self.name,
            "description": self.description,
            "parameters": self.parameters,
            "tool_info": self.tool_info,
            "imports": self.imports,
        }


@dataclass
class ScanReport:
    """The scan's verdict: no findings means the source may go to review."""

    findings: list[Finding] = field(default_factory=list)
    signature: ToolSignature | None = None

    @property
    def ok(self) -> bool:
        """Whether nothing was found."""
        return not self.findings

    @property
    def unsafe(self) -> list[Finding]:
        """The findings about safety (not about the tool's shape)."""
        return [f for f in self.findings if f.kind == "unsafe"]


def _category(module: str) -> str:
    top = module.split(".")[0]
    for category, names in CATEGORIES.items():
        if top in names or module in names:
            return category
    return "nothing on the allowed list"


def _allowed(module: str) -> bool:
    return module in ALLOWED_MODULES


def _module_attribute(module: str, attr: str) -> tuple[str, str] | None:
    """``(rule, why)`` when ``module.attr`` is refused (allowed modules re-export others)."""
    import importlib
    import types

    if attr in REFUSED_MODULE_ATTRIBUTES.get(module, ()):
        return "dynamic-attribute", f"{module}.{attr} reaches attributes or code named by a string"
    try:
        value = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError):
        return None  # a mistake the tool finds out about when it runs, not an escape
    if isinstance(value, types.ModuleType) and f"{module}.{attr}" not in ALLOWED_MODULES:
        return "import", f"{module}.{attr} is the module {value.__name__!r}; refused"
    if isinstance(value, type) and issubclass(value, type):
        return "refused-name", f"{module}.{attr} is a metaclass (it makes classes); refused"
    return None


def _format_problem(template: str) -> str | None:
    """Why ``template.format(...)`` would read an attribute (None: it reads none)."""
    import string

    try:
        fields = list(string.Formatter().parse(template))
    except ValueError:
        return "is not a valid format string"
    for _, name, spec, _ in fields:
        if name and "." in name:
            return f"reads an attribute in its field {{{name}}}"
        if spec and "{" in spec and (problem := _format_problem(spec)) is not None:
            return problem
    return None


def _literal(node: ast.AST | None) -> bool:
    if node is None:
        return True
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, RecursionError):
        return False
    return True


def _type_expression(node: ast.AST) -> bool:
    """Whether ``node`` is a plain type expression (evaluating it runs no code of the tool).

    A string is not one: ``typing.get_type_hints`` would evaluate it as code.
    """
    if isinstance(node, ast.Constant):
        return node.value is None
    if isinstance(node, ast.Name):
        return node.id in SIMPLE_TYPES or node.id in GENERIC_TYPES
    if isinstance(node, ast.Attribute):
        return (
            isinstance(node.value, ast.Name)
            and node.value.id == "typing"
            and (node.attr in SIMPLE_TYPES or node.attr in GENERIC_TYPES)
        )
    if isinstance(node, ast.Subscript):
        base = node.value
        name = base.id if isinstance(base, ast.Name) else getattr(base, "attr", None)
        if name not in GENERIC_TYPES or not _type_expression(base):
            return False
        inner = node.slice
        items = inner.elts if isinstance(inner, ast.Tuple) else [inner]
        if name == "Literal":
            return all(isinstance(i, ast.Constant) for i in items)
        if name == "Annotated":  # Annotated[type, "a description", ...]
            return _type_expression(items[0]) and all(
                isinstance(i, ast.Constant) for i in items[1:]
            )
        return all(_type_expression(i) for i in items)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _type_expression(node.left) and _type_expression(node.right)
    if isinstance(node, ast.Tuple):
        return all(_type_expression(i) for i in node.elts)
    return False


def _dunder(node: ast.AST) -> tuple[str, str] | None:
    """``(rule, why)`` when ``node`` names or spells a dunder (or private) attribute."""
    if isinstance(node, ast.Constant):
        value = node.value
        if (isinstance(value, str) and "__" in value) or (
            isinstance(value, bytes) and b"__" in value
        ):
            return "dunder-string", f"the constant {value!r:.60} holds '__'; refused"
        return None
    attrs = [node.attr] if isinstance(node, ast.Attribute) else []
    if isinstance(node, ast.MatchClass):  # case C(attr=...) reads C's attribute attr
        attrs = node.kwd_attrs
    for attr in attrs:
        if attr.startswith("_"):
            return "dunder-attribute", f"the attribute {attr!r} is refused"
    if attrs:
        return None
    for key, value in ast.iter_fields(node):
        if isinstance(node, ast.ImportFrom) and key == "module" and value == "__future__":
            continue
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, str) and item.startswith("__"):
                return "dunder-name", f"the name {item!r} is refused"
    return None


def _bound_names(node: ast.AST) -> list[str]:
    """The names ``node`` binds other than by ``import module`` (that one is a module)."""
    if isinstance(node, ast.Name):
        return [] if isinstance(node.ctx, ast.Load) else [node.id]
    if isinstance(node, ast.arg):
        return [node.arg]
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, ast.ImportFrom):
        return [alias.asname or alias.name for alias in node.names]
    if isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)):
        return [node.name] if node.name else []
    if isinstance(node, ast.MatchMapping):
        return [node.rest] if node.rest else []
    if isinstance(node, (ast.Global, ast.Nonlocal)):
        return list(node.names)
    return []


class _Checker(ast.NodeVisitor):
    def __init__(self, report: ScanReport) -> None:
        self.report = report
        self.imports: list[str] = []
        #: Names bound to allowed modules (``import json as j`` binds ``j``).
        self.modules: dict[str, str] = {}

    def refuse(self, node: ast.AST, message: str, rule: str, kind: str = "unsafe") -> None:
        self.report.findings.append(Finding(kind, message, getattr(node, "lineno", None), rule))

    def dunders(self, tree: ast.AST) -> None:
        """Every node, whatever visits it: no dunder names, attributes or strings."""
        for node in ast.walk(tree):
            found = _dunder(node)
            if found is not None:
                self.refuse(node, found[1], found[0])

    def bindings(self, tree: ast.AST) -> None:
        """A name an import binds to a module is that module everywhere, whatever the order
        of the statements: ``name.attr`` is checked as the module's attribute, so any other
        binding of the name (a local, a parameter, a second import) is refused."""
        for node in ast.walk(tree):
            for alias in node.names if isinstance(node, ast.Import) else ():
                if _allowed(alias.name):
                    bound = alias.asname or alias.name.split(".")[0]
                    module = alias.name if alias.asname else bound
                    if self.modules.setdefault(bound, module) != module:
                        self.refuse(node, f"{bound!r} names two modules", "module-value")
        for node in ast.walk(tree):
            for name in _bound_names(node):
                if name in self.modules:
                    message = f"{name!r} is the module {self.modules[name]}; it may not be rebound"
                    self.refuse(node, message, "module-value")

    def _module(self, node: ast.AST, module: str) -> None:
        self.imports.append(module)
        if not _allowed(module):
            self.refuse(
                node, f"import of {module!r} refused: it reaches {_category(module)}", "import"
            )

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:  # the names it binds are in self.modules (bindings)
            self._module(node, alias.name)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level:
            self.refuse(node, "relative imports are refused", "import")
            return
        module = node.module or ""
        self._module(node, module)
        if any(alias.name == "*" for alias in node.names):
            self.refuse(node, "star imports are refused", "import")
        elif _allowed(module) and module != "__future__":
            for alias in node.names:
                problem = _module_attribute(module, alias.name)
                if problem is not None:
                    self.refuse(node, problem[1], problem[0])
                elif alias.name.startswith("_"):
                    self.refuse(node, f"the private name {alias.name!r} is refused", "import")

    def visit_Name(self, node: ast.Name) -> None:
        if node.id in self.modules and isinstance(node.ctx, ast.Load):
            self.refuse(
                node,
                f"the module {node.id!r} may only be used as {node.id}.<name>",
                "module-value",
            )
        elif node.id in REFUSED_NAMES:
            self.refuse(
                node,
                f"{node.id!r} is refused (code execution or interpreter access)",
                "refused-name",
            )
        elif node.id == "hasattr":  # a literal name is checked in visit_Call
            self.refuse(node, "hasattr is allowed only as hasattr(x, 'name')", "dynamic-attribute")

    def visit_Call(self, node: ast.Call) -> None:
        func, args = node.func, node.args
        if (
            isinstance(func, ast.Name)
            and func.id == "hasattr"
            and len(args) == 2
            and not node.keywords
            and isinstance(args[1], ast.Constant)
            and isinstance(args[1].value, str)
        ):
            self.visit(args[0])  # the name is a literal (and dunder strings are refused anyway)
            return
        self.generic_visit(node)

    def _read(self, node: ast.AST, attr: str) -> None:
        """The check of every attribute read, ``x.attr`` or ``case C(attr=...)``."""
        if attr in REFUSED_ATTRIBUTES:
            self.refuse(node, f"the attribute {attr!r} is refused", "frame-attribute")

    def visit_MatchClass(self, node: ast.MatchClass) -> None:
        # case C(attr=p) reads the subject's attribute: a value, never a string literal
        for attr in node.kwd_attrs:
            self._read(node, attr)
            if attr in ("format", "format_map"):
                message = f"a pattern taking .{attr} of a value is refused"
                self.refuse(node, message, "dynamic-attribute")
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        self._read(node, node.attr)
        value = node.value
        if isinstance(value, ast.Name) and value.id in self.modules:
            problem = _module_attribute(self.modules[value.id], node.attr)
            if problem is not None:
                self.refuse(node, problem[1], problem[0])
            if not isinstance(node.ctx, ast.Load):
                self.refuse(node, f"{value.id}.{node.attr} may not be changed", "module-value")
            return  # module.name: the module itself is not used as a value
        if node.attr in ("format", "format_map"):
            template = value.value if isinstance(value, ast.Constant) else None
            why = (
                _format_problem(template)
                if isinstance(template, str)
                else "is not a string literal (its fields could read any attribute)"
            )
            if why is not None:
                self.refuse(node, f"the template of .{node.attr}() {why}", "dynamic-attribute")
        self.generic_visit(node)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.refuse(node, "classes are refused: a tool is a function", "shape", "schema")

    def visit_Global(self, node: ast.Global) -> None:
        self.refuse(node, "global statements are refused", "global")

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        def refuse(where: ast.AST, message: str) -> None:
            self.refuse(where, message, "definition-time")

        if node.decorator_list:
            refuse(node, f"decorators on {node.name} are refused (they run at definition)")
        args = node.args
        for default in [*args.defaults, *args.kw_defaults]:
            if not _literal(default):
                refuse(node, f"a default of {node.name} is not a literal (it runs at definition)")
        for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
            if (
                arg is not None
                and arg.annotation is not None
                and not _type_expression(arg.annotation)
            ):
                refuse(arg, f"the annotation of {arg.arg} is not a plain type")
        if node.returns is not None and not _type_expression(node.returns):
            refuse(node, f"the return annotation of {node.name} is not a plain type")
        for statement in node.body:
            self.visit(statement)

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]


def _top_level(
    tree: ast.Module, checker: _Checker
) -> tuple[list[ast.FunctionDef | ast.AsyncFunctionDef], dict[str, Any]]:
    functions: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
    infos: dict[str, Any] = {}
    for statement in tree.body:
        if isinstance(statement, (ast.Import, ast.ImportFrom)):
            checker.visit(statement)
        elif isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            functions.append(statement)
            checker.visit(statement)
        elif isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
            continue  # a docstring or a bare literal
        elif isinstance(statement, (ast.Assign, ast.AnnAssign)):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            if isinstance(statement, ast.AnnAssign) and not _type_expression(statement.annotation):
                checker.refuse(
                    statement, "a top-level annotation must be a plain type", "import-time"
                )
            if not _literal(statement.value):
                message = "a top-level assignment must be a literal (it runs at import)"
                checker.refuse(statement, message, "import-time")
                continue
            for target in targets:
                if isinstance(target, ast.Name) and not target.id.startswith("__"):
                    if target.id == "tool_info":
                        infos[""] = ast.literal_eval(statement.value)  # type: ignore[arg-type]
                elif (
                    isinstance(target, ast.Attribute)
                    and target.attr == "tool_info"
                    and isinstance(target.value, ast.Name)
                ):
                    infos[target.value.id] = ast.literal_eval(statement.value)  # type: ignore[arg-type]
                else:
                    message = "only constants and tool_info may be assigned at the top level"
                    checker.refuse(statement, message, "import-time")
        else:
            kind = type(statement).__name__
            message = f"a top-level {kind} statement runs at import; refused"
            checker.refuse(statement, message, "import-time")
    return functions, infos


def _signature(
    functions: list[ast.FunctionDef | ast.AsyncFunctionDef],
    infos: dict[str, Any],
    checker: _Checker,
) -> ToolSignature | None:
    public = [f for f in functions if not f.name.startswith("_")]
    if len(public) != 1:
        names = ", ".join(f.name for f in public) or "none"
        checker.refuse(
            functions[0] if functions else ast.Module(body=[], type_ignores=[]),
            f"the module must define exactly one public function (the tool); found: {names}",
            "shape",
            "schema",
        )
        return None
    fn = public[0]
    if not _TOOL_NAME.fullmatch(fn.name):
        checker.refuse(fn, f"{fn.name!r} is not a valid tool name", "shape", "schema")
    description = (ast.get_docstring(fn) or "").strip()
    info = infos.get(fn.name, infos.get(""))
    if not description and not info:
        checker.refuse(
            fn, f"{fn.name} has no docstring (the tool's description)", "shape", "schema"
        )
    args = fn.args
    if args.vararg is not None or args.kwarg is not None:
        checker.refuse(fn, f"{fn.name} may not take *args or **kwargs", "shape", "schema")
    positional = [*args.posonlyargs, *args.args]
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    params: list[dict[str, Any]] = []
    for arg, default in [
        *zip(positional, defaults, strict=True),
        *zip(args.kwonlyargs, args.kw_defaults, strict=True),
    ]:
        if arg.annotation is None and not info:
            checker.refuse(arg, f"parameter {arg.arg} has no type annotation", "shape", "schema")
        params.append(
            {
                "name": arg.arg,
                "annotation": ast.unparse(arg.annotation) if arg.annotation is not None else None,
                "required": default is None,
                "default": ast.literal_eval(default)
                if default is not None and _literal(default)
                else None,
            }
        )
    if info is not None:
        from lightagent.tools.registry import ToolRegistry

        for problem in ToolRegistry.validate_tool_info(info):
            if problem.get("level") == "error":
                message = f"tool_info: {problem.get('field')}: {problem.get('message')}"
                checker.refuse(fn, message, "shape", "schema")
        if isinstance(info, dict) and info.get("tool_name") not in (None, fn.name):
            checker.refuse(
                fn, "tool_info's tool_name must be the function's name", "shape", "schema"
            )
    first = description.split("\n\n")[0].strip()
    return ToolSignature(
        fn.name, first, params, info if isinstance(info, dict) else None, checker.imports
    )


def scan_source(source: str, *, max_chars: int = 50_000) -> ScanReport:
    """Check ``source`` without running it; the report lists every finding."""
    report = ScanReport()
    if not isinstance(source, str) or not source.strip():
        report.findings.append(Finding("schema", "the source is empty"))
        return report
    if len(source) > max_chars:
        report.findings.append(
            Finding("schema", f"the source is longer than {max_chars} characters")
        )
        return report
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        report.findings.append(
            Finding("schema", f"the source does not parse: {exc.msg}", exc.lineno)
        )
        return report
    checker = _Checker(report)
    checker.dunders(tree)
    checker.bindings(tree)
    functions, infos = _top_level(tree, checker)
    report.signature = _signature(functions, infos, checker)
    return report
