"""``--mode oauth``: the test server behind OAuth, as its own authorization server.

Clients register themselves (dynamic registration), every authorization is granted at
once (the redirect carries the code), and the access token is the ``TOKEN_PREFIX`` plus a
random part; ``whoami`` says which client the token belongs to.
"""

import secrets
import time

#: Every access token this server issues starts with this (the tests look for it in logs).
TOKEN_PREFIX = "oat-"


def build_oauth(port: int) -> object:
    from mcp.server.auth.provider import (
        AccessToken,
        AuthorizationCode,
        RefreshToken,
        construct_redirect_uri,
    )
    from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
    from mcp.server.mcpserver import MCPServer
    from mcp.shared.auth import OAuthToken

    class Grants:
        """An in-memory authorization server that grants whatever it is asked."""

        def __init__(self) -> None:
            self.clients: dict = {}
            self.codes: dict = {}
            self.tokens: dict = {}

        async def get_client(self, client_id):  # type: ignore[no-untyped-def]
            return self.clients.get(client_id)

        async def register_client(self, client_info):  # type: ignore[no-untyped-def]
            self.clients[client_info.client_id] = client_info

        async def authorize(self, client, params):  # type: ignore[no-untyped-def]
            code = secrets.token_urlsafe(16)
            self.codes[code] = AuthorizationCode(
                code=code,
                scopes=params.scopes or [],
                expires_at=time.time() + 300,
                client_id=client.client_id,
                code_challenge=params.code_challenge,
                redirect_uri=params.redirect_uri,
                redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
                resource=params.resource,
            )
            return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

        async def load_authorization_code(self, client, code):  # type: ignore[no-untyped-def]
            return self.codes.get(code)

        async def exchange_authorization_code(self, client, code):  # type: ignore[no-untyped-def]
            self.codes.pop(code.code, None)
            token = TOKEN_PREFIX + secrets.token_hex(16)
            self.tokens[token] = AccessToken(
                token=token, client_id=client.client_id, scopes=code.scopes, resource=code.resource
            )
            return OAuthToken(access_token=token, token_type="Bearer", expires_in=3600)

        async def load_refresh_token(self, client, refresh_token):  # type: ignore[no-untyped-def]
            return None

        async def exchange_refresh_token(self, client, refresh_token, scopes):  # type: ignore[no-untyped-def]
            raise NotImplementedError

        async def load_access_token(self, token):  # type: ignore[no-untyped-def]
            return self.tokens.get(token)

        async def revoke_token(self, token):  # type: ignore[no-untyped-def]
            self.tokens.pop(getattr(token, "token", None), None)

    base = f"http://127.0.0.1:{port}"
    app = MCPServer(
        "lightagent-test-oauth",
        auth_server_provider=Grants(),
        auth=AuthSettings(
            issuer_url=base,
            resource_server_url=f"{base}/mcp",
            client_registration_options=ClientRegistrationOptions(enabled=True),
        ),
    )

    @app.tool()  # type: ignore[misc]
    def echo(text: str) -> str:
        """Echo the text."""
        return text

    _ = RefreshToken  # the provider's refresh tokens are not used here
    return app
