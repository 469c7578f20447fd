"""The database connection string: libpq's, handed to every connection unchanged.

cronledger accepts whatever libpq accepts in ``DATABASE_URL`` (and
``CRONLEDGER_LISTEN_DATABASE_URL``, ``CRONLEDGER_READ_DATABASE_URL``): a URI or a
``key=value`` string, several hosts (``postgresql://u@h1:5432,h2:5432/db`` or
``host=h1,h2 port=5432,5432``) with ``target_session_attrs``, Unix-socket folders, a service
file entry. Every connection - the pools, LISTEN, the migrations (alembic is handed a psycopg
connection, never a SQLAlchemy URL, which cannot hold two ports) - connects with that string
itself, so libpq picks whichever host answers as asked (docs/operations.md, "High
availability"). The one rewrite is :func:`libpq_dsn`: a SQLAlchemy driver suffix
(``postgresql+psycopg://``) is dropped.
"""

from __future__ import annotations

import os
import re

import psycopg
from psycopg import pq
from psycopg.conninfo import conninfo_to_dict, make_conninfo

# A socket folder that does not exist: check_dsn connects there instead of to the real hosts,
# so libpq validates every option and reaches no server.
_NOWHERE = "/nonexistent/cronledger-dsn-check"


class InvalidDsn(ValueError):
    """A connection string libpq rejects; the message is libpq's (no password in it)."""


def libpq_dsn(url: str) -> str:
    """Return ``url`` without a SQLAlchemy driver suffix, so psycopg can connect with it."""
    scheme, sep, rest = url.partition("://")
    if sep and scheme.startswith("postgresql+"):
        # Not urlunsplit: it would turn an empty host ("postgresql:///db") into "postgresql:/db".
        return f"postgresql://{rest}"
    return url


def check_dsn(dsn: str) -> str:
    """Check ``dsn`` the way libpq reads it, without connecting anywhere; return its libpq form.

    Two steps, both libpq's own: the string is parsed (``PQconninfoParse``: syntax, unknown
    keywords), then a connection is started with every host replaced by a socket folder that
    does not exist (``PQconnectStart`` validates the option values - ports, the number of
    ports against hosts, ``target_session_attrs``, ``sslmode``, a service name - before it
    connects). A start that fails on anything but that folder was rejected by libpq.

    Raises:
        InvalidDsn: libpq rejects the string; the message is libpq's first line, with any
            password in it masked.
    """
    dsn = libpq_dsn(dsn)
    try:
        params = conninfo_to_dict(dsn)
    except psycopg.Error as exc:
        raise InvalidDsn(_masked(_first_line(str(exc)), dsn)) from None
    hosts = str(params.get("host") or os.environ.get("PGHOST") or "")
    probe = dict(params, host=",".join([_NOWHERE] * max(1, len(hosts.split(",")))))
    conn = pq.PGconn.connect_start(make_conninfo("", **probe).encode())
    try:
        if conn.status == pq.ConnStatus.BAD:
            message = conn.get_error_message()
            if _NOWHERE not in message:
                raise InvalidDsn(_masked(_first_line(message), dsn))
    finally:
        conn.finish()
    return dsn


def _first_line(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else "invalid connection string"
    return line.removeprefix("connection is bad: ").strip()


def _masked(message: str, dsn: str) -> str:
    """``message`` without the password of ``dsn`` (URI ``user:password@`` or ``password=``)."""
    secrets = re.findall(r"://[^:/@?#]*:([^@/?#]+)@", dsn)
    secrets += re.findall(r"password\s*=\s*('(?:[^'\\]|\\.)*'|\S+)", dsn)
    for secret in sorted(set(secrets), key=len, reverse=True):
        if secret:
            message = message.replace(secret, "***")
    return message
