"""cronledger's Python client: what a job imports to report to a cronledger (or healthchecks)
server. It imports nothing of the server (``core``, ``api``): the standard library and httpx.

- :mod:`cronledger.pings`: ping URLs (a slug or a full URL) and sending a ping with retries,
  shared with ``cronledger exec`` (``api/cli_exec.py``).
- :mod:`cronledger.client`: ``monitor``, a context manager and a decorator that ping start,
  success and failure around a block, and ``upsert`` of a monitor's definition (docs/exec.md).
"""
