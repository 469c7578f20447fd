"""Environments of their own for the published healthchecks client packages
(docs/healthchecks.md, *The client packages*; tests/e2e/test_hc_clients.py).

Each ``<name>.txt`` beside this file is a hashed requirement file compiled from ``<name>.in``
(``uv pip compile --python-version 3.11 --generate-hashes <name>.in -o <name>.txt``). Its
environment is made with ``uv venv`` and ``uv pip install --require-hashes`` in
``$XDG_CACHE_HOME/cronledger-tests/clients/<name>-<digest of the file>`` (``~/.cache`` by
default), never beside the project's own pins, and kept there: a second run reuses it, a
changed file makes a new one. ``.ci/run`` makes them before the tests
(``python -m tests.clients.venvs``): packages come from PyPI at install time only.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
NAMES = ("healthchecks-io", "healthchecks-manager", "ping-helpers")
PYTHON = "3.11"
READY = ".ready"  # written last: a half-made environment is made again


class VenvUnavailable(RuntimeError):
    """An environment could not be made (no ``uv``, or PyPI not reachable)."""


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "cronledger-tests" / "clients"


def venv_dir(name: str) -> Path:
    """Where the environment of ``<name>.txt`` is (its digest in the folder's name)."""
    digest = hashlib.sha256((HERE / f"{name}.txt").read_bytes()).hexdigest()[:12]
    return cache_root() / f"{name}-{digest}"


def _uv() -> str:
    found = shutil.which("uv") or str(Path.home() / ".local" / "bin" / "uv")
    if not Path(found).exists():
        raise VenvUnavailable("uv is not installed (pip install uv)")
    return found


def ensure(name: str) -> Path:
    """The Python interpreter of ``name``'s environment, made first when missing.

    Raises:
        VenvUnavailable: ``uv`` is missing or the install failed (its output in the message).
    """
    folder = venv_dir(name)
    python = folder / "bin" / "python"
    if (folder / READY).exists() and python.exists():
        return python
    shutil.rmtree(folder, ignore_errors=True)
    folder.parent.mkdir(parents=True, exist_ok=True)
    uv = _uv()
    steps = [[uv, "venv", "--quiet", "--python", PYTHON, str(folder)],
             [uv, "pip", "install", "--quiet", "--python", str(python), "--require-hashes",
              "-r", str(HERE / f"{name}.txt")]]
    for step in steps:
        done = subprocess.run(step, capture_output=True, text=True, timeout=600,
                              env={**os.environ, "VIRTUAL_ENV": str(folder)}, check=False)
        if done.returncode != 0:
            raise VenvUnavailable(f"{' '.join(step[:3])} failed: {done.stderr[-2000:]}")
    (folder / READY).write_text("")
    return python


def main() -> int:
    for name in NAMES:
        print(f"{name}: {ensure(name)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
