"""Per-run tool overlays under concurrency: 50 runs, each with its own tool, never mixed."""

from __future__ import annotations

import asyncio
import json
import time
from concurrent.futures import ThreadPoolExecutor

from lightagent.models.base import ToolCall
from lightagent.tools import AsyncToolDispatcher, ToolRegistry, tool


@tool
def double(n: int) -> int:
    """Twice ``n``."""
    return 2 * n


def base_registry() -> ToolRegistry:
    return ToolRegistry([double])


def make_user_tool(user: int):
    @tool(name="whoami")
    async def whoami(delay: float) -> str:
        """Tell which user this run belongs to."""
        await asyncio.sleep(delay)
        return f"user-{user}"

    return whoami


def make_sync_user_tool(user: int):
    @tool(name="whoami")
    def whoami(delay: float) -> str:
        """Tell which user this run belongs to."""
        time.sleep(delay)
        return f"user-{user}"

    return whoami


def test_fifty_concurrent_runs_keep_their_own_tools():
    base = base_registry()
    dispatcher = AsyncToolDispatcher(base)

    async def run(user: int) -> list[str]:
        overlay = base.with_tools([make_user_tool(user)])
        calls = [
            ToolCall(f"{user}-a", "whoami", json.dumps({"delay": 0.001 * (user % 7)})),
            ToolCall(f"{user}-b", "double", json.dumps({"n": user})),
        ]
        outcomes = await dispatcher.arun_calls(calls, registry=overlay)
        return [o.output for o in outcomes]

    async def main():
        return await asyncio.gather(*(run(u) for u in range(50)))

    results = asyncio.run(main())
    assert results == [[f"user-{u}", str(u * 2)] for u in range(50)]
    assert base.names() == ["double"]


def test_threads_running_sync_driver_with_overlays():
    base = base_registry()
    dispatcher = AsyncToolDispatcher(base)

    def run(user: int) -> str:
        overlay = base.with_tools([make_sync_user_tool(user)])
        [outcome] = dispatcher.run_calls(
            [ToolCall("c", "whoami", '{"delay": 0.01}')], registry=overlay
        )
        return outcome.output

    with ThreadPoolExecutor(8) as pool:
        outputs = list(pool.map(run, range(40)))
    assert outputs == [f"user-{u}" for u in range(40)]
    assert "whoami" not in base
