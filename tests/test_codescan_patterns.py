"""What an expression looks like (`ragdiag.codescan.patterns`): the caller's identity as a filter value.

A clause trims by identity when the value it compares with is the signed-in caller's id, whatever
the field is called (`user`, `owner`, `createdBy`); a clause on any other value is no trimming.
"""

from __future__ import annotations

import pytest

from ragdiag.codescan.patterns import identity_clauses, is_identity_value, security_offsets


@pytest.mark.parametrize("expr", ["await userHashedId()", "get_current_user_id()", "current_user.id", "auth.uid()",
                                  "session.user.email", "user_oid", "getCurrentUser()"])
def test_values_that_are_the_callers_identity(expr: str) -> None:
    assert is_identity_value(expr)


@pytest.mark.parametrize("expr", ["chatThread.id", "cat", "document_id", "userMessage", "users.count()",
                                  "active_group_id", "username_filter"])
def test_values_that_are_not(expr: str) -> None:
    assert not is_identity_value(expr)


def test_a_clause_on_the_callers_identity_is_found_whatever_the_field_name() -> None:
    ts = "user eq '${await userHashedId()}' and chatThreadId eq '${chatThread.id}'"
    py = "owner eq '{current_user.id}' and kind eq '{kind}'"
    assert identity_clauses(ts) == [(0, "user")]
    assert identity_clauses(py) == [(0, "owner")]
    assert security_offsets(f"f = `{ts}`\n") == [5]


def test_a_clause_on_another_value_is_no_identity_clause() -> None:
    assert identity_clauses("category eq '${cat}' and chatThreadId eq '${chatThread.id}'") == []
    assert security_offsets("f = `category eq '${cat}'`\n") == []
