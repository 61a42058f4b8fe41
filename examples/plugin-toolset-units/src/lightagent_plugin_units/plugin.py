"""The toolset and hook implementations of lightagent-plugin-units.

``UnitsToolset`` offers two tools (length and temperature conversion) under the namespace
``units``. It is registered as a toolset factory, so an agent picks it by name and
configuration: ``LightAgent(tools=[("units", {"precision": 2})])``.
"""

from __future__ import annotations

from typing import Any

from lightagent import BaseToolset, ConnectorManifest, ToolDefinition, hookimpl

from lightagent_plugin_units import __version__

_METRES = {
    "mm": 0.001,
    "cm": 0.01,
    "m": 1.0,
    "km": 1000.0,
    "in": 0.0254,
    "ft": 0.3048,
    "mi": 1609.344,
}
_TEMPERATURES = ("C", "F", "K")


def _to_kelvin(value: float, unit: str) -> float:
    if unit == "C":
        return value + 273.15
    if unit == "F":
        return (value - 32) * 5 / 9 + 273.15
    return value


def _from_kelvin(value: float, unit: str) -> float:
    if unit == "C":
        return value - 273.15
    if unit == "F":
        return (value - 273.15) * 9 / 5 + 32
    return value


class UnitsToolset(BaseToolset):
    """Unit conversion as a toolset; ``precision`` is the number of decimals in answers."""

    namespace = "units"

    def __init__(self, *, precision: int = 3) -> None:
        super().__init__()
        if not isinstance(precision, int) or not 0 <= precision <= 12:
            raise ValueError(f"precision must be an int from 0 to 12, got {precision!r}")
        self.precision = precision

    def list_tools(self) -> list[ToolDefinition]:
        """The two conversion tools."""
        return [
            ToolDefinition(
                "convert_length",
                "Convert a length between units (mm, cm, m, km, in, ft, mi).",
                {
                    "type": "object",
                    "properties": {
                        "value": {"type": "number"},
                        "from_unit": {"type": "string", "enum": sorted(_METRES)},
                        "to_unit": {"type": "string", "enum": sorted(_METRES)},
                    },
                    "required": ["value", "from_unit", "to_unit"],
                    "additionalProperties": False,
                },
            ),
            ToolDefinition(
                "convert_temperature",
                "Convert a temperature between Celsius (C), Fahrenheit (F) and Kelvin (K).",
                {
                    "type": "object",
                    "properties": {
                        "value": {"type": "number"},
                        "from_unit": {"type": "string", "enum": list(_TEMPERATURES)},
                        "to_unit": {"type": "string", "enum": list(_TEMPERATURES)},
                    },
                    "required": ["value", "from_unit", "to_unit"],
                    "additionalProperties": False,
                },
            ),
        ]

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any) -> str:
        """Run one conversion; an unknown tool raises ``LookupError``."""
        value = float(arguments["value"])
        source, target = arguments["from_unit"], arguments["to_unit"]
        if name == "convert_length":
            result = value * _METRES[source] / _METRES[target]
        elif name == "convert_temperature":
            result = _from_kelvin(_to_kelvin(value, source), target)
        else:
            raise LookupError(f"no tool named {name!r} in the units toolset")
        return f"{round(result, self.precision)} {target}"


@hookimpl
def register_toolsets(register: Any) -> None:
    """Register the ``units`` toolset factory."""
    register("units", "lightagent_plugin_units.plugin:UnitsToolset")


@hookimpl
def lightagent_manifest() -> ConnectorManifest:
    """What this plugin brings."""
    return ConnectorManifest(
        name="lightagent-plugin-units",
        version=__version__,
        description="A unit-conversion toolset (length and temperature).",
        providers={"toolset": ("units",)},
        core_requires=">=0.1.0,<0.2",
    )
