"""Tools of the test server's ``--mode client``: each asks the client something back
(sampling, elicitation, roots) and reports what it got, or that it was refused."""

import json

from mcp import types
from pydantic import BaseModel


class Contact(BaseModel):
    name: str
    age: int = 0


def add_client_tools(app: object) -> None:
    """``ask_model``, ``ask_user`` and ``roots``."""
    from mcp.server.mcpserver import Context

    @app.tool()  # type: ignore[attr-defined,misc]
    async def ask_model(prompt: str, ctx: Context, max_tokens: int = 50) -> str:
        """Ask the client's model to answer ``prompt``."""
        try:
            result = await ctx.session.create_message(
                [
                    types.SamplingMessage(
                        role="user", content=types.TextContent(type="text", text=prompt)
                    )
                ],
                max_tokens=max_tokens,
                system_prompt="Answer briefly.",
            )
        except Exception as exc:
            return f"refused: {exc}"
        return f"{result.model}: {result.content.text}"

    @app.tool()  # type: ignore[attr-defined,misc]
    async def ask_user(question: str, ctx: Context) -> str:
        """Ask the user for a contact."""
        try:
            result = await ctx.elicit(question, Contact)
        except Exception as exc:
            return f"refused: {exc}"
        data = getattr(result, "data", None)
        return f"{result.action}: {data.model_dump() if data is not None else None}"

    @app.tool()  # type: ignore[attr-defined,misc]
    async def roots(ctx: Context) -> str:
        """The client's roots, as JSON."""
        try:
            listed = await ctx.session.list_roots()
        except Exception as exc:
            return f"refused: {exc}"
        return json.dumps([str(r.uri) for r in listed.roots])
