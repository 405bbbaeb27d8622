"""The caller's identity, taken from the validated access token (never from the request body)."""

from __future__ import annotations

from dataclasses import dataclass

from fastapi import Header, HTTPException

from .auth import verify_token


@dataclass(frozen=True)
class Identity:
    user_id: str
    group_ids: tuple[str, ...]


def current_identity(authorization: str = Header(...)) -> Identity:
    """FastAPI dependency: the identity behind the bearer token, or 401."""
    claims = verify_token(authorization.removeprefix("Bearer "))
    if claims is None:
        raise HTTPException(status_code=401, detail="invalid token")
    return Identity(user_id=claims["oid"], group_ids=tuple(claims.get("groups", ())))
