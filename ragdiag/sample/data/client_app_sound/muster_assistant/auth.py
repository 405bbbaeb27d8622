"""Token validation against Entra ID (signature, audience, expiry)."""

from __future__ import annotations

import os

import jwt

AUDIENCE = os.environ.get("MUSTER_API_AUDIENCE", "api://muster-assistant")
ISSUER = os.environ.get("MUSTER_TOKEN_ISSUER", "https://login.microsoftonline.com/muster/v2.0")
_jwks = jwt.PyJWKClient(f"{ISSUER}/discovery/v2.0/keys")


def verify_token(token: str) -> dict | None:
    try:
        key = _jwks.get_signing_key_from_jwt(token)
        return jwt.decode(token, key.key, algorithms=["RS256"], audience=AUDIENCE, issuer=ISSUER)
    except jwt.PyJWTError:
        return None
