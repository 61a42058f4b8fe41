"""Item 5 of issue 18: the seeds' error signature, LA-UNKNOWN mapping and formatters."""

from __future__ import annotations

import dataclasses

import pytest
from lightagent import (
    ERROR_TAXONOMY,
    LightAgentError,
    LightAgentErrorInfo,
    format_error_code,
    format_lightagent_error,
)


def test_string_details_are_accepted() -> None:
    err = LightAgentError("LA-TOOL", "boom", "check the tool", "the disk was full")
    assert err.details == {"text": "the disk was full"}
    assert err.guidance == "check the tool"
    assert err.to_dict()["details"] == {"text": "the disk was full"}


def test_unknown_code_maps_to_unknown_and_keeps_the_text() -> None:
    err = LightAgentError("LA-NOT-A-CODE", "something odd")
    assert err.code == "LA-UNKNOWN"
    assert err.message == "something odd"
    assert err.details["original_code"] == "LA-NOT-A-CODE"
    bare = LightAgentError("LA-NOT-A-CODE")
    assert bare.code == "LA-UNKNOWN" and bare.message == "LA-NOT-A-CODE"
    assert LightAgentError("E42", "x").code == "LA-UNKNOWN"


def test_error_info_is_frozen_and_matches_the_taxonomy() -> None:
    info = LightAgentErrorInfo.of("LA-TOOL")
    assert info.code == "LA-TOOL"
    assert info.guidance == ERROR_TAXONOMY["LA-TOOL"].hint == info.hint
    with pytest.raises(dataclasses.FrozenInstanceError):
        info.code = "LA-X"  # type: ignore[misc]
    assert LightAgentErrorInfo("LA-X", "m", "g").guidance == "g"


def test_format_error_code() -> None:
    text = format_error_code("LA-TOOL", "tool=get_weather")
    assert text.startswith("[LA-TOOL] ")
    assert "Guidance: " in text and text.endswith("Details: tool=get_weather")
    unknown = format_error_code("LA-NOPE")
    assert unknown.startswith("[LA-UNKNOWN] ") and "code=LA-NOPE" in unknown


def test_format_lightagent_error() -> None:
    text = format_lightagent_error(TimeoutError("slow"), action="calling the model")
    assert text.startswith("[LA-408] calling the model failed: TimeoutError: slow")
    ours = format_lightagent_error(LightAgentError("LA-TOOL", "boom", details="disk full"))
    assert ours.startswith("[LA-TOOL] boom") and ours.endswith("Details: disk full")
    assert format_lightagent_error(ValueError("x"), default_code="LA-VALIDATION").startswith(
        "[LA-VALIDATION] "
    )
