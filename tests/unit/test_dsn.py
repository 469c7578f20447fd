"""Connection strings: what libpq accepts passes unchanged (several hosts,
``target_session_attrs``, sockets); what libpq rejects is a ConfigError naming the variable
(exit 2, docs/operations.md, "Configuration"), never echoing the password."""

from __future__ import annotations

import pytest

from core.config import ConfigError, load_settings
from core.dsn import InvalidDsn, check_dsn, libpq_dsn
from core.services.outage import describe

ACCEPTED = [
    "postgresql://u@h1:5432,h2:5433/db?target_session_attrs=read-write",
    "postgresql://u:pw@h1,h2/db?target_session_attrs=primary&connect_timeout=3",
    "host=h1,h2 port=5432,5433 dbname=db target_session_attrs=read-write",
    "host=h1,h2,h3 port=5432 dbname=db",  # one port for every host
    "postgresql://[::1]:5432,127.0.0.1:5433/db",
    "postgresql://postgres@/cronledger?host=/srv/my%20data/run&port=5433",
    "postgresql:///db?host=/run/pg,/run/pg2&port=5432,5433&load_balance_hosts=random",
]
REJECTED = {
    "postgresql://u:s3cr3t@h1,h2/db?target_session_attrs=bogus":
        'invalid target_session_attrs value: "bogus"',
    "host=a,b,c port=1,2": "could not match 2 port numbers to 3 hosts",
    "postgresql://u:s3cr3t@h1:5432:7/db": 'invalid integer value "5432:7"',
    "host=h password=s3cr3t sslmode=sometimes": 'invalid sslmode value: "sometimes"',
    "postgresql://u:s3cr3t@h/db?nosuchoption=1": 'invalid URI query parameter: "nosuchoption"',
    "user=u password=s3cr3t bogus": 'missing "=" after "bogus"',
}


@pytest.mark.parametrize("dsn", ACCEPTED)
def test_what_libpq_accepts_passes_unchanged(dsn: str) -> None:
    assert check_dsn(dsn) == dsn
    assert load_settings({"DATABASE_URL": dsn}).database_url == dsn


def test_a_sqlalchemy_driver_suffix_is_dropped() -> None:
    dsn = "postgresql+psycopg://u@h1:5432,h2:5433/db?target_session_attrs=read-write"
    assert check_dsn(dsn) == libpq_dsn(dsn) == dsn.replace("+psycopg", "")


@pytest.mark.parametrize(("dsn", "reason"), REJECTED.items())
def test_what_libpq_rejects_names_the_variable(dsn: str, reason: str) -> None:
    with pytest.raises(InvalidDsn, match=reason):
        check_dsn(dsn)
    for variable in ("DATABASE_URL", "CRONLEDGER_LISTEN_DATABASE_URL",
                     "CRONLEDGER_READ_DATABASE_URL"):
        with pytest.raises(ConfigError) as caught:
            load_settings({variable: dsn})
        message = str(caught.value)
        assert message.startswith(f"{variable} is not a connection string libpq accepts: ")
        assert reason in message and "s3cr3t" not in message and "\n" not in message


def test_log_lines_pair_each_host_with_its_port() -> None:
    assert describe("postgresql://u:pw@h1:5432,h2:5433/db") == "h1:5432,h2:5433/db"
    assert describe("host=h1,h2 port=6432 dbname=db") == "h1:6432,h2:6432/db"
    assert describe("postgresql://u@h/db") == "h:5432/db"
