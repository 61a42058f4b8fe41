"""What ``pip install lightagent-core`` alone (no plugin) must do; check-dists runs it in a venv
that holds only the core wheel.

An agent with a tool records its run in a SQLite session; the process dies after the tool
ran and before the next model request; a new process resumes the run from the session and
finishes it without running the tool again. An agent with many tools offers every one of
them (no tool selector is installed). Every seeds name a capability distribution provides
(``memory=`` among them, even with the kernel's ``InMemoryMemory``),
and a PostgreSQL session store, fails at the line that uses it with ``LA-MISSING-EXTRA``
and its install line.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lightagent import LightAgent, ScriptedModel, SqliteSessionStore, tool
from lightagent.models.base import ModelRequest, ModelResponse, ToolCall


def _agent(folder: Path, crash: bool) -> LightAgent:
    @tool
    def stamp(label: str) -> str:
        """Append ``label`` to the ledger file and say so."""
        with open(folder / "ledger.txt", "a", encoding="utf-8") as ledger:
            ledger.write(label + "\n")
        return f"stamped {label}"

    def model(request: ModelRequest) -> Any:
        if not any(m.get("role") == "tool" for m in request.messages):
            return ModelResponse(
                tool_calls=[ToolCall(id="call-1", name="stamp", arguments={"label": "once"})]
            )
        if crash:
            os._exit(17)  # the tool's result is in the session; the answer never comes
        return "the ledger is stamped"

    return LightAgent(
        name="core-alone",
        model=ScriptedModel(model),
        tools=[stamp],
        session_store=SqliteSessionStore(str(folder / "sessions.db")),
    )


def _check_missing_names() -> int:
    import lightagent
    from lightagent import vocabulary
    from lightagent.errors import MissingExtraError

    checked = 0
    for name, extra in vocabulary.EXPORTS.items():
        try:
            getattr(lightagent, name)
        except MissingExtraError as exc:
            assert exc.details["install"] == f"pip install 'lightagent-core[{extra}]'", exc
            checked += 1
        else:
            raise SystemExit(f"core-alone: lightagent.{name} loaded without its distribution")
    for keyword, (extra, unused) in vocabulary.KEYWORDS.items():
        LightAgent(model=ScriptedModel(["x"]), **{keyword: unused})  # "not used": fine
        try:
            LightAgent(model=ScriptedModel(["x"]), **{keyword: object()})
        except MissingExtraError as exc:
            assert extra in exc.details["install"], exc
            checked += 1
        else:
            raise SystemExit(f"core-alone: LightAgent({keyword}=...) accepted without its extra")
    try:  # the kernel's own reference backend too: memory= is lightagent-memory's
        LightAgent(model=ScriptedModel(["x"]), memory=lightagent.InMemoryMemory())
    except MissingExtraError as exc:
        assert exc.details["install"] == "pip install 'lightagent-core[memory]'", exc
        checked += 1
    else:
        raise SystemExit(
            "core-alone: LightAgent(memory=InMemoryMemory()) accepted without its extra"
        )
    agent = LightAgent(model=ScriptedModel(lambda request: "x"))
    for option, (extra, unused) in vocabulary.RUN_OPTIONS.items():
        agent.run("q", **{option: unused})
        try:
            agent.run("q", **{option: object()})
        except MissingExtraError as exc:
            assert extra in exc.details["install"], exc
            checked += 1
        else:
            raise SystemExit(f"core-alone: run({option}=...) accepted without its extra")
    url = "postgresql+psycopg://app@127.0.0.1/sessions"  # lightagent-postgres: not installed
    checked += _refused(
        "postgres",
        "a PostgreSQL session store built",
        lambda: lightagent.SqlSessionStore(url),
        lambda: LightAgent(model=ScriptedModel(["x"]), session_store=url).run("q", session_id="s"),
    )
    for attribute, extra in vocabulary.ATTRIBUTES.items():
        try:
            getattr(agent, attribute)
        except MissingExtraError as exc:
            assert extra in exc.details["install"], exc
            checked += 1
        else:
            raise SystemExit(f"core-alone: agent.{attribute} exists without its extra")
    return checked


def _check_no_selection() -> int:
    import lightagent.tools

    tools = [tool(name=f"t{i}", description=f"Item number {i}.")(lambda: "ok") for i in range(20)]
    model = ScriptedModel(["ok"])
    LightAgent(model=model, tools=tools).run("item number 3")  # filter_tools=True
    if len(model.requests[0].tools or ()) != 20:
        raise SystemExit("core-alone: an agent without a tool selector did not offer every tool")
    return _refused(
        "selection",
        "tool selection worked",
        lambda: lightagent.tools.ToolRegistry(tools).select("item"),
        lambda: lightagent.tools.ToolIndex,
    )


def _refused(extra: str, what: str, *uses: Callable[[], Any]) -> int:
    """How many of ``uses`` fail with ``LA-MISSING-EXTRA`` naming ``extra``'s install line
    (all, or this exits saying ``what`` happened without it)."""
    from lightagent.errors import MissingExtraError

    for use in uses:
        try:
            use()
        except MissingExtraError as exc:
            assert exc.details["install"] == f"pip install 'lightagent-core[{extra}]'", exc
        else:
            raise SystemExit(f"core-alone: {what} without its extra")
    return len(uses)


def main() -> int:
    if len(sys.argv) > 2 and sys.argv[1] == "crash":
        _agent(Path(sys.argv[2]), crash=True).run("stamp it", session_id="s-1")
        return 1  # not reached: the model ends the process
    with tempfile.TemporaryDirectory(prefix="lightagent-core-alone-") as tmp:
        folder = Path(tmp)
        child = subprocess.run([sys.executable, __file__, "crash", tmp], check=False)
        if child.returncode != 17:
            raise SystemExit(f"core-alone: the crashing run exited {child.returncode}")
        agent = _agent(folder, crash=False)
        run_id = next(e.run_id for e in agent.get_session("s-1") if e.type == "turn.started")
        answer = agent.resume(run_id, session_id="s-1")
        if answer != "the ledger is stamped":
            raise SystemExit(f"core-alone: the resumed run answered {answer!r}")
        ledger = (folder / "ledger.txt").read_text(encoding="utf-8").split()
        if ledger != ["once"]:
            raise SystemExit(f"core-alone: the tool ran {len(ledger)} times: {ledger}")
    checked = _check_missing_names() + _check_no_selection()
    print(
        f"core-alone: tools, a SQLite session and resume work; {checked} seeds names say their extra"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
