"""The running version, from the installed distribution's metadata."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

try:
    VERSION = version("cronledger")
except PackageNotFoundError:  # pragma: no cover - running from a bare source tree
    VERSION = "0.0.0"

USER_AGENT = f"cronledger/{VERSION}"
