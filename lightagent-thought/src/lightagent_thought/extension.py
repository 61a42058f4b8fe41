"""How Tree of Thought reaches ``LightAgent``: keywords, attributes and the planning step.

:class:`ThoughtExtension` claims ``tree_of_thought=``, ``tot_model=``, ``tot_api_key=``
and ``tot_base_url=`` and the attributes ``tree_of_thought``, ``tot_model``,
``tot_client``, ``run_thought`` and ``arun_thought``. The agent's :class:`ThoughtPart`
holds the settings; for each run with ``tree_of_thought`` on it adds a
:class:`PlanningStep`, which plans once before the first model request (never on a
resumed run, only when the run has a query).
"""

from __future__ import annotations

import threading
from collections.abc import Generator, Iterable
from typing import Any

from lightagent.extensions import AgentExtension, ExtensionPart, RunStep

from lightagent_thought.thought import Thought, ThoughtStep, TreeOfThought, thought_setting

__all__ = ["PlanningStep", "ThoughtExtension", "ThoughtPart"]


class PlanningStep(RunStep):
    """Tree of Thought in one run: plan (and reflect) after the prompt is assembled."""

    def __init__(self, planner: ThoughtStep) -> None:
        self.planner = planner

    def start(
        self,
        spec: Any,
        st: Any,
        history: Any,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
    ) -> Generator[Any, Any, None]:
        """Plan before the first request; a resumed run or a run without a query does not."""
        if spec.initial_messages is not None or st.query_message is None:
            return
        st.stage = "thought"
        query = st.query_message["content"]
        yield from self.planner.plan(spec, st, query, messages, tools)


class ThoughtPart(ExtensionPart):
    """An agent's Tree-of-Thought settings, its planning model and ``run_thought``."""

    def __init__(
        self,
        agent: Any,
        tree_of_thought: Any = False,
        tot_model: Any = None,
        tot_api_key: Any = None,
        tot_base_url: Any = None,
    ) -> None:
        self._agent = agent
        #: The Tree-of-Thought settings runs use (None: off).
        self.tree_of_thought: TreeOfThought | None = thought_setting(tree_of_thought)
        self._tot_spec = (tot_model, tot_api_key, tot_base_url)
        self._tot: Any = None
        self._lock = threading.Lock()

    @property
    def tot_model(self) -> Any:
        """The model planning calls use (None: the agent's own model)."""
        model, api_key, base_url = self._tot_spec
        if model is None and api_key is None and base_url is None:
            return None
        if self._tot is None:
            with self._lock:
                if self._tot is None:
                    from lightagent.run.options import resolve_model

                    agent = self._agent
                    # the agent's model name, when it was given one (not a Model object)
                    named = getattr(agent, "_model_spec", None)
                    if model is None and isinstance(named, str):
                        model = named
                    self._tot = resolve_model(
                        model,
                        api_key=api_key or agent.api_key,
                        base_url=base_url or agent.base_url,
                        provider=agent.provider,
                    )
        return self._tot

    @property
    def tot_client(self) -> Any:
        """The planning model's OpenAI-style client (the seeds' attribute)."""
        model = self.tot_model
        return getattr(model if model is not None else self._agent.model, "client", None)

    def run_step(self, spec: Any, options: Any) -> RunStep | None:
        """A :class:`PlanningStep` when ``tree_of_thought`` is on."""
        if self.tree_of_thought is None:
            return None
        return PlanningStep(ThoughtStep(self.tree_of_thought, self.tot_model))

    def run_thought(
        self, query: str, runtime_tools: Iterable[Any] | None = None, **options: Any
    ) -> str:
        """Plan (and reflect on) ``query`` with the agent's tools and return the plan's text.

        Makes only the planning calls (at most two), even when ``tree_of_thought`` is off.
        """
        from lightagent.run.sync_driver import drive_effects

        spec, gen = self._thought_run(query, runtime_tools, options)
        return str(drive_effects(gen, spec))

    async def arun_thought(
        self, query: str, runtime_tools: Iterable[Any] | None = None, **options: Any
    ) -> str:
        """Async :meth:`run_thought`."""
        from lightagent.run.async_driver import adrive_effects

        spec, gen = self._thought_run(query, runtime_tools, options)
        return str(await adrive_effects(gen, spec))

    def _thought_run(
        self, query: str, runtime_tools: Iterable[Any] | None, options: dict[str, Any]
    ) -> tuple[Any, Generator[Any, Any, Thought]]:
        from lightagent.run.effects import ListTools
        from lightagent.run.prepare import build_spec
        from lightagent.run.run_options import RunOptions
        from lightagent.run.state import RunState

        spec = build_spec(
            self._agent,
            query,
            RunOptions.of(None, {**options, "tools": runtime_tools}, where="run_thought()"),
        )
        step = ThoughtStep(self.tree_of_thought or TreeOfThought(), self.tot_model)

        def planning() -> Generator[Any, Any, Thought]:
            if spec.toolsets is not None:
                view = yield ListTools(spec.base_registry)
                spec.registry = view.registry
            registry = spec.registry
            tools = registry.schemas() if registry is not None and len(registry) else None
            messages = [{"role": "system", "content": spec.system_prompt or ""}]
            messages.append({"role": "user", "content": query})
            return (yield from step.plan(spec, RunState(), query, messages, tools))

        return spec, planning()


class ThoughtExtension(AgentExtension):
    """Tree of Thought's claim on ``LightAgent`` (docs/tree-of-thought.md)."""

    name = "thought"
    keywords = {
        "tree_of_thought": False,
        "tot_model": None,
        "tot_api_key": None,
        "tot_base_url": None,
    }
    attributes = ("tree_of_thought", "tot_model", "tot_client", "run_thought", "arun_thought")

    def configure(self, agent: Any, values: dict[str, Any]) -> ThoughtPart:
        """The agent's part; a bad ``tree_of_thought=`` fails ``LightAgent(...)`` here."""
        return ThoughtPart(agent, **values)
