"""Public-API snapshots of every lightagent distribution and of the hookspecs.

``python -m lightagent_contracts.api_snapshot --update`` writes
``contracts/snapshots/<distribution>.json`` (each package's ``__all__`` with the
signatures of its public callables and classes) and ``hookspecs.json`` (every hook and
its arguments). ``--check`` (the default) compares and exits 1 on any difference; a
removed name also needs a version bump of its distribution.
"""

from __future__ import annotations

import argparse
import enum
import importlib
import inspect
import json
import re
import sys
from pathlib import Path
from typing import Any

__all__ = [
    "DISTRIBUTIONS",
    "SNAPSHOT_DIR",
    "UPDATE_COMMAND",
    "describe_package",
    "diff_snapshot",
    "hookspec_snapshot",
    "main",
    "snapshot",
]

#: distribution -> import package whose ``__all__`` is its public API.
DISTRIBUTIONS: dict[str, str] = {
    "lightagent-core": "lightagent",
    "lightagent-flow": "lightagent_flow",
    "lightagent-dag": "lightagent_dag",
    "lightagent-mcp": "lightagent_mcp",
    "lightagent-rag-fts": "lightagent_rag_fts",
    "lightagent-memory-mem0": "lightagent_memory_mem0",
    "lightagent-guardrails": "lightagent_guardrails",
    "lightagent-otel": "lightagent_otel",
    "lightagent-serve": "lightagent_serve",
    "lightagent-thought": "lightagent_thought",
    "lightagent-devtools": "lightagent_devtools",
    "lightagent-swarm": "lightagent_swarm",
    "lightagent-runtime": "lightagent_runtime",
    "lightagent-memory": "lightagent_memory",
    "lightagent-skills": "lightagent_skills",
    "lightagent-review": "lightagent_review",
    "lightagent-control": "lightagent_control",
    "lightagent-dbos": "lightagent_dbos",
    "lightagent-selection": "lightagent_selection",
    "lightagent-postgres": "lightagent_postgres",
    "lightagent-contracts": "lightagent_contracts",
}
SNAPSHOT_DIR = Path(__file__).resolve().parents[2] / "snapshots"
UPDATE_COMMAND = ".venv/bin/python -m lightagent_contracts.api_snapshot --update"
HOOKSPECS = "hookspecs"
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
_FOREIGN_BASES = {
    "builtins",
    "typing",
    "typing_extensions",
    "abc",
    "enum",
    "pydantic",
    "collections",
    "dataclasses",
}


def _clean(text: str) -> str:
    return _ADDRESS.sub("", text)


def _signature(obj: Any) -> str:
    try:
        return _clean(str(inspect.signature(obj)))
    except (TypeError, ValueError):
        return ""


def _describe(obj: Any) -> dict[str, Any]:
    if inspect.isclass(obj):
        members: dict[str, str] = {}
        if issubclass(obj, enum.Enum):
            return {"kind": "enum", "members": sorted(m.name for m in obj)}
        # Inherited members count too (moving a method to a base class changes no API);
        # the standard library's and pydantic's own bases are not ours to snapshot.
        merged: dict[str, Any] = {}
        for base in reversed(obj.__mro__):
            if base.__module__.split(".")[0] in _FOREIGN_BASES:
                continue
            merged.update(vars(base))
        for name, value in sorted(merged.items()):
            if name.startswith("_") and name != "__call__":
                continue
            if isinstance(value, property):
                members[name] = "property"
            elif isinstance(value, staticmethod | classmethod):
                members[name] = f"{type(value).__name__}{_signature(value.__func__)}"
            elif inspect.isfunction(value):
                prefix = "async " if inspect.iscoroutinefunction(value) else ""
                members[name] = f"{prefix}def{_signature(value)}"
        return {"kind": "class", "signature": _signature(obj), "members": members}
    if inspect.isfunction(obj) or inspect.isbuiltin(obj):
        prefix = "async " if inspect.iscoroutinefunction(obj) else ""
        return {"kind": "function", "signature": f"{prefix}def{_signature(obj)}"}
    if inspect.ismodule(obj):
        return {"kind": "module"}
    if callable(obj):
        return {"kind": "callable", "type": type(obj).__name__, "signature": _signature(obj)}
    return {"kind": "value", "type": type(obj).__name__}


def describe_package(package: str) -> dict[str, Any]:
    """``{name: description}`` for every name in ``package.__all__`` (resolving lazy names)."""
    module = importlib.import_module(package)
    out: dict[str, Any] = {}
    for name in sorted(set(getattr(module, "__all__", ()))):
        if name == "__version__":
            continue  # the version is recorded separately
        try:
            out[name] = _describe(getattr(module, name))
        except Exception as exc:  # a name whose module is missing is itself API drift
            out[name] = {"kind": "unresolved", "error": type(exc).__name__}
    return out


def hookspec_snapshot() -> dict[str, Any]:
    """Every hookspec of ``lightagent.hookspecs`` with its arguments and options."""
    from lightagent import hookspecs

    marker = f"{hookspecs.PROJECT}_spec"
    hooks = {}
    for name in sorted(dir(hookspecs)):
        func = getattr(hookspecs, name)
        opts = getattr(func, marker, None)
        if callable(func) and opts is not None:
            hooks[name] = {
                "args": list(inspect.signature(func).parameters),
                "firstresult": bool(opts.get("firstresult")),
                "historic": bool(opts.get("historic")),
            }
    return {"distribution": HOOKSPECS, "version": _version("lightagent-core"), "names": hooks}


def _version(dist: str) -> str | None:
    from importlib import metadata

    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def snapshot(only: list[str] | None = None) -> dict[str, dict[str, Any]]:
    """The current snapshot of every installed distribution (or those in ``only``), plus ``hookspecs``."""
    out: dict[str, dict[str, Any]] = {}
    for dist, package in DISTRIBUTIONS.items():
        if only and dist not in only:
            continue
        version = _version(dist)
        if version is None:
            continue
        out[dist] = {
            "distribution": dist,
            "package": package,
            "version": version,
            "names": describe_package(package),
        }
    out[HOOKSPECS] = hookspec_snapshot()
    return out


def _newer(current: str | None, stored: str | None) -> bool:
    from packaging.version import InvalidVersion, Version

    try:
        return Version(current or "0") > Version(stored or "0")
    except InvalidVersion:
        return current != stored


def diff_snapshot(stored: dict[str, Any] | None, current: dict[str, Any]) -> list[str]:
    """Human-readable differences (empty when equal). A removal without a version bump says so."""
    name = current["distribution"]
    if stored is None:
        return [f"{name}: no snapshot yet"]
    old, new = stored.get("names", {}), current.get("names", {})
    problems = []
    removed = sorted(set(old) - set(new))
    added = sorted(set(new) - set(old))
    changed = sorted(n for n in set(old) & set(new) if old[n] != new[n])
    if removed and not _newer(current.get("version"), stored.get("version")):
        problems.append(
            f"{name}: removes {', '.join(removed)} without a version bump "
            f"(still {current.get('version')}); bump the version of {name} first"
        )
    elif removed:
        problems.append(f"{name}: removed {', '.join(removed)}")
    if added:
        problems.append(f"{name}: added {', '.join(added)}")
    for item in changed:
        problems.append(f"{name}: changed {item}: {_describe_change(old[item], new[item])}")
    return problems


def _describe_change(old: dict[str, Any], new: dict[str, Any]) -> str:
    parts = []
    for key in sorted(set(old) | set(new)):
        before, after = old.get(key), new.get(key)
        if before == after:
            continue
        if isinstance(before, dict) and isinstance(after, dict):
            gone = sorted(set(before) - set(after))
            came = sorted(set(after) - set(before))
            moved = sorted(k for k in set(before) & set(after) if before[k] != after[k])
            if gone:
                parts.append(f"{key} removed {', '.join(gone)}")
            if came:
                parts.append(f"{key} added {', '.join(came)}")
            parts.extend(f"{key}.{k}: {before[k]} -> {after[k]}" for k in moved)
        else:
            parts.append(f"{key}: {json.dumps(before)} -> {json.dumps(after)}")
    return "; ".join(parts)


def _path(directory: Path, dist: str) -> Path:
    return directory / f"{dist}.json"


def _load(directory: Path, dist: str) -> dict[str, Any] | None:
    path = _path(directory, dist)
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def _write(directory: Path, dist: str, data: dict[str, Any]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    text = json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    _path(directory, dist).write_text(text, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    """Check (default) or ``--update`` the snapshots; exit 1 when they differ."""
    parser = argparse.ArgumentParser(prog="python -m lightagent_contracts.api_snapshot")
    parser.add_argument("--update", action="store_true", help="rewrite the snapshot files")
    parser.add_argument(
        "--allow-removal",
        action="store_true",
        help="with --update: accept removals without a version bump",
    )
    parser.add_argument("--dir", type=Path, default=SNAPSHOT_DIR, help="snapshot folder")
    parser.add_argument(
        "--only",
        action="append",
        choices=sorted(DISTRIBUTIONS),
        help="limit to these distributions (repeatable)",
    )
    args = parser.parse_args(argv)
    current = snapshot(args.only)
    problems = {dist: diff_snapshot(_load(args.dir, dist), data) for dist, data in current.items()}
    if args.update:
        blocked = [p for lines in problems.values() for p in lines if "without a version bump" in p]
        if blocked and not args.allow_removal:
            print("\n".join(blocked), file=sys.stderr)
            print("refusing to update; bump the versions or pass --allow-removal", file=sys.stderr)
            return 1
        for dist, data in current.items():
            _write(args.dir, dist, data)
        print(f"wrote {len(current)} snapshots to {args.dir}")
        return 0
    lines = [p for group in problems.values() for p in group]
    if lines:
        print("\n".join(lines))
        print(f"if these changes are intended, run: {UPDATE_COMMAND}")
        return 1
    print("public API matches the snapshots")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
