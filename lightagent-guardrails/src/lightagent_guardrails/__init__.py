"""lightagent-guardrails: guardrails for lightagent.

The guardrail runner (:class:`GuardrailManager`, :class:`GuardrailDecision`) the kernel's
``input_guardrails=`` / ``tool_guardrails=`` / ``output_guardrails=`` use, guardrail
templates and tool-output injection screens.
"""

from __future__ import annotations

from lightagent_guardrails.injection import (
    INJECTION_MARKERS,
    ToolOutputScreen,
    find_taint,
    wrap_untrusted,
)
from lightagent_guardrails.manager import (
    Guardrail,
    GuardrailDecision,
    GuardrailManager,
    GuardrailOutcome,
    normalize_guardrail_result,
)
from lightagent_guardrails.templates import (
    DEFAULT_PRIVACY_PATTERNS,
    high_risk_parameter_guardrail,
    output_redaction_guardrail,
    privacy_input_guardrail,
    sensitive_tool_confirmation_guardrail,
)

__version__ = "0.1.0"
__all__ = [
    "DEFAULT_PRIVACY_PATTERNS",
    "INJECTION_MARKERS",
    "Guardrail",
    "GuardrailDecision",
    "GuardrailManager",
    "GuardrailOutcome",
    "ToolOutputScreen",
    "__version__",
    "find_taint",
    "high_risk_parameter_guardrail",
    "normalize_guardrail_result",
    "output_redaction_guardrail",
    "privacy_input_guardrail",
    "sensitive_tool_confirmation_guardrail",
    "wrap_untrusted",
]
