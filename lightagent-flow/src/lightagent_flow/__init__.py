"""lightagent-flow: LightFlow: deterministic, durable, resumable multi-step agent workflows for lightagent."""

__version__ = "0.1.0"
__all__: list[str] = []
