"""The tool ``safe_expression`` and a registry holding it (``default_registry``).

``safe_expression`` walks the parsed expression and evaluates only a whitelist of node
types (literals, arithmetic, comparisons, boolean logic, containers, subscripts and a few
pure functions), with limits on size and on the growth of numbers and strings. It never
calls ``eval``/``exec`` and has no names, attributes, imports or lambdas, so there is
nothing to escape through. It is registered as the tool ``safe_expression``
(``LightAgent(tools=["safe_expression"])``); no code-execution tool is registered by default.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from lightagent.errors import ValidationError
from lightagent.tools.decorator import tool

if TYPE_CHECKING:
    from lightagent.tools.registry import ToolRegistry

__all__ = [
    "BUILTIN_TOOLS",
    "SafeExpressionError",
    "default_registry",
    "evaluate_safe_expression",
    "safe_expression",
]

MAX_CHARS = 4096
MAX_NODES = 256
MAX_ITEMS = 256
MAX_INT_BITS = 4096
MAX_STRING = 10_000
MAX_DEPTH = 32


class SafeExpressionError(ValidationError, ValueError):
    """An expression uses something ``safe_expression`` does not allow, or exceeds a limit."""

    default_code = "LA-EXPRESSION"


def _refuse(message: str) -> SafeExpressionError:
    return SafeExpressionError("LA-EXPRESSION", message)


def _check_value(value: Any) -> Any:
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value.bit_length() > MAX_INT_BITS:
        raise _refuse(f"integer result larger than {MAX_INT_BITS} bits")
    if isinstance(value, float) and not math.isfinite(value):
        raise _refuse("the result is not a finite number")
    if isinstance(value, str) and len(value) > MAX_STRING:
        raise _refuse(f"string result longer than {MAX_STRING} characters")
    if isinstance(value, (list, tuple, dict, set)) and len(value) > MAX_ITEMS:
        raise _refuse(f"collection larger than {MAX_ITEMS} items")
    return value


def _bits(value: Any) -> int:
    return abs(value).bit_length() if isinstance(value, int) else 0


def _power(base: Any, exponent: Any) -> Any:
    if isinstance(base, int) and isinstance(exponent, int) and exponent > 0:
        if max(_bits(base), 1) * exponent > MAX_INT_BITS and abs(base) > 1:
            raise _refuse(f"power result larger than {MAX_INT_BITS} bits")
    try:
        result = operator.pow(base, exponent)
    except OverflowError:
        raise _refuse("power result too large") from None
    if isinstance(result, complex):
        raise _refuse("complex results are not supported")
    return result


def _multiply(left: Any, right: Any) -> Any:
    if isinstance(left, int) and isinstance(right, int) and not isinstance(left, bool):
        if _bits(left) + _bits(right) > MAX_INT_BITS:
            raise _refuse(f"product larger than {MAX_INT_BITS} bits")
    for seq, count in ((left, right), (right, left)):
        if isinstance(seq, (str, list, tuple)) and isinstance(count, int):
            limit = MAX_STRING if isinstance(seq, str) else MAX_ITEMS
            if len(seq) * max(count, 0) > limit:
                raise _refuse(f"repetition longer than {limit}")
    return operator.mul(left, right)


def _shift(left: Any, right: Any) -> Any:
    if isinstance(right, int) and right > MAX_INT_BITS:
        raise _refuse(f"shift larger than {MAX_INT_BITS} bits")
    return operator.lshift(left, right)


_BINARY: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: _multiply,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: _power,
    ast.LShift: _shift,
    ast.RShift: operator.rshift,
    ast.BitAnd: operator.and_,
    ast.BitOr: operator.or_,
    ast.BitXor: operator.xor,
}
_UNARY: dict[type, Callable[[Any], Any]] = {
    ast.UAdd: operator.pos,
    ast.USub: operator.neg,
    ast.Not: operator.not_,
    ast.Invert: operator.invert,
}
_COMPARE: dict[type, Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}
_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "abs": abs,
    "round": round,
    "min": min,
    "max": max,
    "sum": sum,
    "len": len,
    "int": int,
    "float": float,
    "bool": bool,
    "sqrt": math.sqrt,
}
_CONSTANTS: dict[str, Any] = {"pi": math.pi, "e": math.e, "inf": None}
_LITERALS = (int, float, str, bool, type(None))


class _Evaluator:
    def __init__(self) -> None:
        self.depth = 0

    def eval(self, node: ast.AST) -> Any:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise _refuse(f"expression nested deeper than {MAX_DEPTH}")
        try:
            return _check_value(self._eval(node))
        finally:
            self.depth -= 1

    def _eval(self, node: ast.AST) -> Any:
        if isinstance(node, ast.Constant):
            if not isinstance(node.value, _LITERALS):
                raise _refuse(f"{type(node.value).__name__} literals are not allowed")
            return node.value
        if isinstance(node, ast.BinOp):
            op = _BINARY.get(type(node.op))
            if op is None:
                raise _refuse(f"operator {type(node.op).__name__} is not allowed")
            return op(self.eval(node.left), self.eval(node.right))
        if isinstance(node, ast.UnaryOp):
            unary = _UNARY.get(type(node.op))
            if unary is None:
                raise _refuse(f"operator {type(node.op).__name__} is not allowed")
            return unary(self.eval(node.operand))
        if isinstance(node, ast.BoolOp):
            result: Any = None
            for value_node in node.values:
                result = self.eval(value_node)
                if isinstance(node.op, ast.And) and not result:
                    return result
                if isinstance(node.op, ast.Or) and result:
                    return result
            return result
        if isinstance(node, ast.Compare):
            left = self.eval(node.left)
            for op_node, right_node in zip(node.ops, node.comparators, strict=True):
                compare = _COMPARE.get(type(op_node))
                if compare is None:
                    raise _refuse(f"comparison {type(op_node).__name__} is not allowed")
                right = self.eval(right_node)
                if not compare(left, right):
                    return False
                left = right
            return True
        if isinstance(node, ast.IfExp):
            return self.eval(node.body) if self.eval(node.test) else self.eval(node.orelse)
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            items = [self.eval(e) for e in node.elts]
            if isinstance(node, ast.Tuple):
                return tuple(items)
            return items if isinstance(node, ast.List) else set(items)
        if isinstance(node, ast.Dict):
            if any(k is None for k in node.keys):
                raise _refuse("dict unpacking is not allowed")
            return {self.eval(k): self.eval(v) for k, v in zip(node.keys, node.values, strict=True)}  # type: ignore[arg-type]
        if isinstance(node, ast.Subscript):
            container = self.eval(node.value)
            key = self._slice(node.slice)
            return container[key]
        if isinstance(node, ast.Name):
            if node.id in _CONSTANTS and _CONSTANTS[node.id] is not None:
                return _CONSTANTS[node.id]
            raise _refuse(f"name {node.id!r} is not allowed")
        if isinstance(node, ast.Call):
            if not isinstance(node.func, ast.Name) or node.func.id not in _FUNCTIONS:
                raise _refuse(
                    "only abs, round, min, max, sum, len, int, float, bool and sqrt can be called"
                )
            if node.keywords:
                raise _refuse("keyword arguments are not allowed")
            if any(isinstance(a, ast.Starred) for a in node.args):
                raise _refuse("argument unpacking is not allowed")
            args = [self.eval(a) for a in node.args]
            if (
                node.func.id == "round"
                and len(args) > 1
                and isinstance(args[1], int)
                and abs(args[1]) > 100
            ):
                raise _refuse("round() digits must be between -100 and 100")
            if node.func.id == "int" and args and isinstance(args[0], str) and len(args[0]) > 1300:
                raise _refuse("integer text too long")
            return _FUNCTIONS[node.func.id](*args)
        raise _refuse(f"{type(node).__name__} is not allowed")

    def _slice(self, node: ast.AST) -> Any:
        if isinstance(node, ast.Slice):
            parts = [
                None if p is None else self.eval(p) for p in (node.lower, node.upper, node.step)
            ]
            return slice(*parts)
        return self.eval(node)


def evaluate_safe_expression(expression: str) -> Any:
    """The value of ``expression``; raises :class:`SafeExpressionError` (``LA-EXPRESSION``)."""
    if not isinstance(expression, str):
        raise _refuse(f"expression must be a string, got {type(expression).__name__}")
    if len(expression) > MAX_CHARS:
        raise _refuse(f"expression longer than {MAX_CHARS} characters")
    if not expression.strip():
        raise _refuse("expression is empty")
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except SyntaxError as exc:
        raise _refuse(f"not a valid expression: {exc.msg}") from None
    count = sum(1 for _ in ast.walk(tree))
    if count > MAX_NODES:
        raise _refuse(f"expression has {count} parts, more than {MAX_NODES}")
    try:
        return _Evaluator().eval(tree.body)
    except SafeExpressionError:
        raise
    except ZeroDivisionError:
        raise _refuse("division by zero") from None
    except (TypeError, ValueError, KeyError, IndexError, OverflowError, RecursionError) as exc:
        raise _refuse(f"{type(exc).__name__}: {exc}") from None


@tool(name="safe_expression", title="Safe expression")
def safe_expression(expression: str) -> Any:
    """Evaluate an arithmetic or data-only expression, such as "45 * 9827" or "max(3, 7) / 2".

    Numbers, strings, + - * / // % **, comparisons, and/or/not, lists, tuples, dicts,
    indexing and abs, round, min, max, sum, len, sqrt are supported; nothing else.

    Args:
        expression: The expression to evaluate.
    """
    return evaluate_safe_expression(expression)


#: The tools every default registry holds. Nothing here can execute code.
BUILTIN_TOOLS = (safe_expression,)


def default_registry() -> ToolRegistry:
    """A new :class:`ToolRegistry` holding only :data:`BUILTIN_TOOLS`."""
    from lightagent.tools.registry import ToolRegistry

    return ToolRegistry(BUILTIN_TOOLS)
