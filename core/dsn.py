"""Conversions between the DSN forms that psycopg, libpq and SQLAlchemy accept."""

from __future__ import annotations

from psycopg.conninfo import conninfo_to_dict
from sqlalchemy.engine import URL


def libpq_dsn(url: str) -> str:
    """Return ``url`` without a SQLAlchemy driver suffix, so psycopg can connect with it."""
    scheme, sep, rest = url.partition("://")
    if sep and scheme.startswith("postgresql+"):
        # Not urlunsplit: it would turn an empty host ("postgresql:///db") into "postgresql:/db".
        return f"postgresql://{rest}"
    return url


def sqlalchemy_url(dsn: str) -> str:
    """Return ``dsn`` (a libpq URI or ``key=value`` string) as a psycopg 3 SQLAlchemy URL.

    Unix-socket hosts and other libpq options travel in the query string.

    Raises:
        psycopg.ProgrammingError: ``dsn`` is not a valid connection string.
    """
    params = {k: str(v) for k, v in conninfo_to_dict(libpq_dsn(dsn)).items()}
    host = params.pop("host", None)
    port = params.pop("port", None)
    url = URL.create(
        "postgresql+psycopg",
        username=params.pop("user", None),
        password=params.pop("password", None),
        host=None if host is None or host.startswith("/") else host,
        port=int(port) if port and host and not host.startswith("/") else None,
        database=params.pop("dbname", None),
        query={**params, **({"host": host} if host and host.startswith("/") else {}),
               **({"port": port} if port and host and host.startswith("/") else {})},
    )
    return url.render_as_string(hide_password=False)
