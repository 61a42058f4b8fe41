"""The lightagent plugin of lightagent-guardrails: it registers the guardrail factories and the screen.

Registered objects are factories (call them to get a guardrail or a hook), referenced
lazily so loading the plugin imports nothing until a factory is resolved.
"""

from __future__ import annotations

from typing import Any

import lightagent.hookspecs

_MODULE = "lightagent_guardrails.templates"


@lightagent.hookspecs.hookimpl
def register_guardrails(register: Any) -> None:
    """Register the seeds' four guardrail templates."""
    register("privacy_input", f"{_MODULE}:privacy_input_guardrail")
    register("sensitive_tool_confirmation", f"{_MODULE}:sensitive_tool_confirmation_guardrail")
    register("high_risk_parameter", f"{_MODULE}:high_risk_parameter_guardrail")
    register("output_redaction", f"{_MODULE}:output_redaction_guardrail")


@lightagent.hookspecs.hookimpl
def register_hooks(register: Any) -> None:
    """Register the tool-output injection screen and the provenance guard (hook factories)."""
    register("tool_output_screen", "lightagent_guardrails.injection:ToolOutputScreen")
    register("provenance_guard", "lightagent_guardrails.guard:ProvenanceGuard")
