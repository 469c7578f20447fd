"""A PostgreSQL server for the test suite and the benchmarks: ``DATABASE_URL`` or a throwaway one.

Used by ``tests/conftest.py`` (the session fixture) and ``bench/*.py``.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator

from core.embedded import EmbeddedPostgres


@contextlib.contextmanager
def server_dsn(prefix: str = "cronledger-scratch-") -> Iterator[str]:
    """``DATABASE_URL`` when it is set, else a throwaway embedded server for the duration.

    Used by the test suite and the benchmarks. The throwaway server lives in a new temporary
    folder and is destroyed afterwards (as root its cluster lives outside that folder, so
    :meth:`EmbeddedPostgres.destroy` removes it too).

    Raises:
        EmbeddedPostgresError: the embedded server could not be started.
    """
    url = os.environ.get("DATABASE_URL")
    if url:
        yield url
        return
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        os.chmod(tmp, 0o755)  # harmless; as root the cluster lives under the root base anyway
        embedded = EmbeddedPostgres(os.path.join(tmp, "data"))
        try:
            yield embedded.start()
        finally:
            embedded.destroy()
