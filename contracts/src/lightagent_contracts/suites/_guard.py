"""The drop-guard: a contract subclass may customise a standard test, never silently drop it.

A subclass that overrides a standard test with something that is not a test function, or
with a body that does nothing (``pass``, ``...``, a docstring, ``return``), fails at class
creation with :class:`DroppedContractTestError` — unless the override is marked
``@pytest.mark.xfail(reason="...")`` with a real reason, which keeps the gap visible in
every test report.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from collections.abc import Iterator
from typing import Any

import pytest

__all__ = ["ContractSuite", "DroppedContractTestError", "check_contract_subclass", "standard_tests"]


class DroppedContractTestError(TypeError):
    """A contract subclass dropped a standard test without an ``xfail(reason=...)`` mark."""


def _marks(func: Any) -> list[Any]:
    return list(getattr(func, "pytestmark", []))


def _has_xfail_reason(func: Any) -> bool:
    for mark in _marks(func):
        if mark.name == "xfail":
            reason = mark.kwargs.get("reason") or (mark.args[1] if len(mark.args) > 1 else None)
            if isinstance(reason, str) and reason.strip():
                return True
    return False


def _does_nothing(func: Any) -> bool:
    try:
        source = textwrap.dedent(inspect.getsource(func))
        node = ast.parse(source).body[0]
    except (OSError, TypeError, SyntaxError, IndexError):
        return _empty_bytecode(func)
    if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return False
    for stmt in node.body:
        if isinstance(stmt, ast.Pass):
            continue
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            continue  # a docstring or ``...``
        if isinstance(stmt, ast.Return) and (
            stmt.value is None or isinstance(stmt.value, ast.Constant)
        ):
            continue
        return False
    return True


def _empty_bytecode(func: Any) -> bool:
    def empty(*args: Any, **kwargs: Any) -> None:
        pass

    code = getattr(func, "__code__", None)
    return code is not None and code.co_code == empty.__code__.co_code and not code.co_names


def standard_tests(cls: type) -> Iterator[tuple[str, type]]:
    """``(test name, suite class)`` of every standard test ``cls`` inherits from a suite."""
    seen: set[str] = set()
    for base in cls.__mro__[1:]:
        if not base.__dict__.get("_contract_suite", False):
            continue
        for name, value in base.__dict__.items():
            if name.startswith("test") and callable(value) and name not in seen:
                seen.add(name)
                yield name, base


def check_contract_subclass(cls: type) -> None:
    """Raise :class:`DroppedContractTestError` if ``cls`` silently drops a standard test."""
    problems = []
    for name, suite in standard_tests(cls):
        override = inspect.getattr_static(cls, name)
        origin = next(k for k in cls.__mro__ if name in k.__dict__)
        if origin.__dict__.get("_contract_suite", False):
            continue  # still the standard test (perhaps from a more specific suite)
        if isinstance(override, staticmethod | classmethod):
            override = override.__func__
        if not inspect.isfunction(override):
            problems.append(
                f"{name} (from {suite.__name__}) is replaced by a {type(override).__name__}"
            )
        elif _does_nothing(override) and not _has_xfail_reason(override):
            problems.append(
                f"{name} (from {suite.__name__}) is overridden with a body that does nothing"
            )
        elif any(m.name in {"skip", "skipif"} for m in _marks(override)) and not _has_xfail_reason(
            override
        ):
            problems.append(f"{name} (from {suite.__name__}) is skipped")
    if problems:
        raise DroppedContractTestError(
            f"{cls.__qualname__} drops standard contract tests: "
            + "; ".join(problems)
            + '. Mark a test you cannot pass with @pytest.mark.xfail(reason="why") instead.'
        )


def _check_collectable(cls: type) -> None:
    # pytest only collects ``Test*`` classes: another name in a test module would run
    # none of the suite. Helper bases start with ``_`` or set ``__test__ = False``.
    module = cls.__module__.rsplit(".", 1)[-1]
    if module.startswith("test_") and not cls.__name__.startswith(("Test", "_")):
        raise DroppedContractTestError(
            f"{cls.__qualname__} subclasses a contract suite but pytest will not collect it: "
            "name it Test..., or start the name with _ (or set __test__ = False) for a helper base."
        )


class ContractSuite:
    """Base of the contract suites: subclasses are collected by pytest and drop-guarded.

    A suite class sets ``_contract_suite = True``; a plugin's test class subclasses a
    suite and provides its factory fixture.
    """

    __test__ = False
    _contract_suite: bool  # set on each subclass by __init_subclass__ (or by a suite itself)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "_contract_suite" not in cls.__dict__:
            cls._contract_suite = False
            if "__test__" not in cls.__dict__:
                cls.__test__ = True
                _check_collectable(cls)
        check_contract_subclass(cls)

    @pytest.fixture(autouse=True)
    def _lightagent_no_network(self) -> Iterator[None]:
        """Contract tests may reach loopback servers only."""
        from lightagent_contracts.network import block_network

        with block_network():
            yield
