"""lightagent-guardrails: guardrails for lightagent.

The guardrail runner (:class:`GuardrailManager`, :class:`GuardrailDecision`) the kernel's
``input_guardrails=`` / ``tool_guardrails=`` / ``output_guardrails=`` use, guardrail
templates, tool-output injection screens and the provenance guard
(:class:`ProvenanceGuard`: sink calls are decided on where their values came from).
"""

from __future__ import annotations

from lightagent_guardrails.answer_check import AnswerScreen, contacts_in, screen_answer
from lightagent_guardrails.guard import Planner, ProvenanceGuard
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
from lightagent_guardrails.provenance import (
    TRUST_LEVELS,
    TRUSTED_LEVELS,
    Origin,
    Provenance,
    leaf_values,
    normalise,
)
from lightagent_guardrails.sink_policy import SinkCall, SinkPolicy, SinkVerdict, provenance_policy
from lightagent_guardrails.templates import (
    DEFAULT_PRIVACY_PATTERNS,
    high_risk_parameter_guardrail,
    output_redaction_guardrail,
    privacy_input_guardrail,
    sensitive_tool_confirmation_guardrail,
)
from lightagent_guardrails.tool_facts import CRITICAL_ROLES, ROLES, ToolFacts, annotate, facts_of

__version__ = "0.1.0"
__all__ = [
    "CRITICAL_ROLES",
    "DEFAULT_PRIVACY_PATTERNS",
    "INJECTION_MARKERS",
    "ROLES",
    "TRUSTED_LEVELS",
    "TRUST_LEVELS",
    "AnswerScreen",
    "Guardrail",
    "GuardrailDecision",
    "GuardrailManager",
    "GuardrailOutcome",
    "Origin",
    "Planner",
    "Provenance",
    "ProvenanceGuard",
    "SinkCall",
    "SinkPolicy",
    "SinkVerdict",
    "ToolFacts",
    "ToolOutputScreen",
    "__version__",
    "annotate",
    "contacts_in",
    "facts_of",
    "find_taint",
    "high_risk_parameter_guardrail",
    "leaf_values",
    "normalise",
    "normalize_guardrail_result",
    "output_redaction_guardrail",
    "privacy_input_guardrail",
    "provenance_policy",
    "screen_answer",
    "sensitive_tool_confirmation_guardrail",
    "wrap_untrusted",
]
