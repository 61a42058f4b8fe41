"""lightagent-guardrails: guardrail templates and tool-output injection screens for lightagent."""

from __future__ import annotations

from lightagent_guardrails.injection import (
    INJECTION_MARKERS,
    ToolOutputScreen,
    find_taint,
    wrap_untrusted,
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
    "ToolOutputScreen",
    "__version__",
    "find_taint",
    "high_risk_parameter_guardrail",
    "output_redaction_guardrail",
    "privacy_input_guardrail",
    "sensitive_tool_confirmation_guardrail",
    "wrap_untrusted",
]
