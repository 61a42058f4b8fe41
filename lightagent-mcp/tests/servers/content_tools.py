"""Tools of the test server's ``--mode content``: annotated, structured, large, linked and
image results, and a parameter whose schema sits in ``$defs``."""

import base64
from enum import Enum
from typing import Any

from mcp import types
from pydantic import BaseModel

#: The size of ``big``'s text (over the default output limit of 100,000 characters).
BIG_CHARS = 300_000
#: A 1x1 PNG.
PIXEL = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360000002000001e221bc330000000049454e44ae426082"
    )
).decode()


class Shade(str, Enum):
    LIGHT = "light"
    DARK = "dark"


class Paint(BaseModel):
    shade: Shade
    coats: int = 1


def add_content_tools(app: Any) -> None:
    """Register the content tools on ``app`` (an SDK ``MCPServer``)."""

    @app.tool()
    def paint(job: Paint) -> str:
        """Paint with a shade (the schema of Paint and Shade sits in $defs)."""
        return f"painted {job.shade.value} x{job.coats}"

    @app.tool()
    def report() -> types.CallToolResult:
        """A note for the user only and a summary for the assistant."""
        return types.CallToolResult(
            content=[
                types.TextContent(
                    type="text",
                    text="USER-ONLY: your invoice is attached",
                    annotations=types.Annotations(audience=["user"], priority=0.2),
                ),
                types.TextContent(
                    type="text",
                    text="summary: 3 items, 42 EUR",
                    annotations=types.Annotations(audience=["assistant"], priority=0.9),
                ),
                types.TextContent(type="text", text="plain note"),
            ]
        )

    @app.tool()
    def user_only() -> types.CallToolResult:
        """Content for the user only, nothing for the assistant."""
        return types.CallToolResult(
            content=[
                types.TextContent(
                    type="text",
                    text="USER-ONLY: a receipt",
                    annotations=types.Annotations(audience=["user"]),
                )
            ]
        )

    @app.tool()
    def weather() -> types.CallToolResult:
        """Structured content only, no text."""
        return types.CallToolResult(content=[], structured_content={"city": "Oslo", "temp": -3})

    @app.tool()
    def big() -> str:
        """A text of BIG_CHARS characters."""
        return "0123456789" * (BIG_CHARS // 10)

    @app.tool()
    def link() -> types.CallToolResult:
        """A resource link."""
        return types.CallToolResult(
            content=[
                types.ResourceLink(
                    type="resource_link",
                    name="report.csv",
                    uri="file:///data/report.csv",
                    mime_type="text/csv",
                    description="The monthly report",
                    size=2048,
                )
            ]
        )

    @app.tool()
    def picture() -> types.CallToolResult:
        """A one-pixel image and a caption."""
        return types.CallToolResult(
            content=[
                types.TextContent(type="text", text="a pixel"),
                types.ImageContent(type="image", data=PIXEL, mime_type="image/png"),
            ]
        )
