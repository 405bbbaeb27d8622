"""A secret read from a named environment variable: present, stripped; absent or blank, a located exit-2 error."""

from __future__ import annotations

import pytest

from ragdiag.env_secret import secret_from_env
from ragdiag.errors import ConfigError, exit_code_for


def test_value_is_read_and_stripped(monkeypatch):
    monkeypatch.setenv("RAGDIAG_TEST_KEY", "  k-123\n")
    assert secret_from_env("RAGDIAG_TEST_KEY", "export it") == "k-123"


@pytest.mark.parametrize("value", [None, "", "   \n"])
def test_unset_or_blank_names_the_variable_and_the_remedy(monkeypatch, value):
    if value is None:
        monkeypatch.delenv("RAGDIAG_TEST_KEY", raising=False)
    else:
        monkeypatch.setenv("RAGDIAG_TEST_KEY", value)
    with pytest.raises(ConfigError) as err:
        secret_from_env("RAGDIAG_TEST_KEY", "export the key clients must send")
    assert "RAGDIAG_TEST_KEY" in str(err.value) and "export the key clients must send" in str(err.value)
    assert exit_code_for(err.value) == 2


@pytest.mark.parametrize("argv", [
    ["serve", "--api-key-env", "RAGDIAG_TEST_KEY"],
    ["record", "--upstream", "http://127.0.0.1:9", "--api-key-env", "RAGDIAG_TEST_KEY"],
])
def test_commands_refuse_a_blank_key_variable_before_listening(monkeypatch, capsys, argv):
    import ragdiag.cli as cli

    monkeypatch.setenv("RAGDIAG_TEST_KEY", " ")
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert "RAGDIAG_TEST_KEY is empty or unset" in err and err.count("\n") == 1
