"""lightagent-dag: LightDAG: verified dynamic task graphs with leases and fencing, on one machine or many, for lightagent."""

__version__ = "0.1.0"
__all__: list[str] = []
