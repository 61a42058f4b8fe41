"""lightagent-guardrails: Guardrail templates and tool-output injection screens for lightagent."""

__version__ = "0.1.0"
__all__: list[str] = []
