"""cronledger's Python client: what a job imports to report to a cronledger (or healthchecks)
server. It imports nothing of the server (``core``, the rest of ``api``): the standard library
and httpx (``tests/unit/test_imports.py``). It lives under ``api/`` because the repo's top
level is fixed (docs/architecture.md, "Layers"); a job imports it as ``api.client``.

- :mod:`api.client.pings`: ping URLs (a slug or a full URL) and sending a ping with retries,
  shared with ``cronledger exec`` (``api/cli_exec.py``).
- :mod:`api.client.monitoring`: ``monitor``, a context manager and a decorator that ping start,
  success and failure around a block, and ``upsert`` of a monitor's definition (docs/exec.md).
"""
from api.client.monitoring import ClientError, Monitor, Upserted, monitor
from api.client.pings import BadTarget

__all__ = ["BadTarget", "ClientError", "Monitor", "Upserted", "monitor"]
