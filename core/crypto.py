"""The key ring: AES-256-GCM encryption of secrets at rest, with several keys for rotation.

Keys come from ``CRONLEDGER_SECRET_KEY`` (one or more base64-encoded 32-byte keys separated by
commas or whitespace, the **first** being the current one, as in ``cryptography``'s
MultiFernet) or from a key file (``CRONLEDGER_SECRET_KEY_FILE``; in embedded mode
``$CRONLEDGER_DATA_DIR/secret.key`` is generated with mode 0600 on first start). Each sealed
value records the id of the key that encrypted it, so old keys keep decrypting until
``cronledger secrets rotate-key`` re-encrypts everything under the current key.

A key id is a fingerprint (16 hex characters of SHA-256 over a fixed label and the key): stable,
needs no naming by the operator, and reveals nothing about a 256-bit random key.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import logging
import os
import re
import secrets as random_source
import threading
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from core.errors import Unavailable

log = logging.getLogger("cronledger.crypto")

KEY_BYTES = 32
NONCE_BYTES = 12
KEY_FILE_NAME = "secret.key"
_SEPARATORS = re.compile(r"[\s,]+")


class KeyConfigError(ValueError):
    """A key source holds something that is not a list of base64 32-byte keys.

    The message names the source, never the key material.
    """


class SecretUnavailable(Exception):
    """A sealed value cannot be opened: its key is not configured, or it was tampered with."""


@dataclass(frozen=True)
class Sealed:
    """An encrypted value as stored: ``key_id``, a random 96-bit ``nonce``, and the ciphertext
    with its 16-byte GCM tag appended."""

    key_id: str
    nonce: bytes
    ciphertext: bytes


def key_id(key: bytes) -> str:
    """The fingerprint that identifies ``key`` in stored rows (16 hex characters)."""
    return hashlib.sha256(b"cronledger-key-id\0" + key).hexdigest()[:16]


def new_key() -> str:
    """A fresh random key, base64-encoded (what ``CRONLEDGER_SECRET_KEY`` takes)."""
    return base64.b64encode(random_source.token_bytes(KEY_BYTES)).decode()


def parse_keys(text: str, source: str) -> list[bytes]:
    """Decode a key list: base64 keys separated by commas or whitespace, current key first.

    Raises:
        KeyConfigError: a key is not base64 or not 32 bytes long (the message names ``source``
            and the key's position, never its value).
    """
    keys: list[bytes] = []
    for position, item in enumerate(filter(None, _SEPARATORS.split(text.strip())), start=1):
        try:
            raw = base64.b64decode(item + "=" * (-len(item) % 4), altchars=b"-_", validate=True)
        except (binascii.Error, ValueError):
            raw = b""
        if len(raw) != KEY_BYTES:
            raise KeyConfigError(f"{source}: key #{position} is not a base64-encoded 32-byte key "
                            "(generate one with `cronledger secrets new-key`)")
        if raw not in keys:
            keys.append(raw)
    return keys


def ensure_key_file(data_dir: str | os.PathLike[str]) -> Path:
    """Create ``<data_dir>/secret.key`` (mode 0600) holding a new key unless it exists.

    Safe against concurrent first starts: the file is written under a temporary name and
    linked into place, so a reader never sees a partial key.

    Returns:
        The key file's path.

    Raises:
        KeyConfigError: the existing file is readable by group or others.
    """
    folder = Path(data_dir).resolve()
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    path = folder / KEY_FILE_NAME
    if not path.exists():
        tmp = folder / f".{KEY_FILE_NAME}.{os.getpid()}.{random_source.token_hex(4)}"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(fd, "w") as out:
                out.write(new_key() + "\n")
                out.flush()
                os.fsync(out.fileno())
            try:
                os.link(tmp, path)
                log.info("generated the secret key file %s (mode 0600): back it up, secrets "
                         "cannot be decrypted without it", path)
            except FileExistsError:
                pass  # another process won the race; use its key
        finally:
            tmp.unlink(missing_ok=True)
    mode = path.stat().st_mode & 0o777
    if mode & 0o077:
        raise KeyConfigError(f"{path} is readable by other users (mode {mode:o}): "
                        f"run `chmod 600 {path}`")
    return path


def prepend_key_file(path: Path) -> str:
    """Add a new current key at the top of a key file; returns the new key's id."""
    old = path.read_text()
    key = new_key()
    tmp = path.with_name(f".{path.name}.{os.getpid()}.new")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(key + "\n" + old)
        out.flush()
        os.fsync(out.fileno())
    os.replace(tmp, path)
    return key_id(base64.b64decode(key))


class KeyRing:
    """Encrypts with the current key, decrypts with any configured key.

    Args:
        keys: raw 32-byte keys, current first. Empty: secrets are disabled, and
            :meth:`seal` raises :class:`core.errors.Unavailable` (HTTP 503).
        key_file: when the keys came from a file, it is read again when a sealed value names
            an unknown key id (after ``rotate-key --new-key`` another process may have added
            one), at most once per unknown id.
    """

    def __init__(self, keys: Sequence[bytes], key_file: Path | None = None) -> None:
        self._lock = threading.Lock()
        self._key_file = key_file
        self._tried: set[str] = set()
        self._load(keys)

    def _load(self, keys: Sequence[bytes]) -> None:
        self._ciphers = {key_id(k): AESGCM(k) for k in keys}
        self.current_id: str | None = key_id(keys[0]) if keys else None

    @classmethod
    def from_sources(cls, env_keys: str, key_file: str) -> KeyRing:
        """The ring from ``CRONLEDGER_SECRET_KEY`` if set, else from the key file, else empty.

        Raises:
            KeyConfigError: malformed keys (naming the source, not the key).
        """
        if env_keys.strip():
            return cls(parse_keys(env_keys, "CRONLEDGER_SECRET_KEY"))
        if key_file:
            path = Path(key_file)
            try:
                text = path.read_text()
            except OSError as exc:
                raise KeyConfigError(
                    f"cannot read the secret key file {path}: {exc.strerror}") from None
            return cls(parse_keys(text, str(path)), key_file=path)
        return cls([])

    @property
    def enabled(self) -> bool:
        return self.current_id is not None

    @property
    def key_ids(self) -> list[str]:
        """Configured key ids, current first."""
        return list(self._ciphers)

    def seal(self, plaintext: bytes, aad: bytes) -> Sealed:
        """Encrypt under the current key with a fresh random nonce.

        Raises:
            Unavailable: no key is configured (set ``CRONLEDGER_SECRET_KEY``).
        """
        if self.current_id is None:
            raise Unavailable("secrets are disabled on this server: set CRONLEDGER_SECRET_KEY "
                              "(see docs/operations.md, Secrets and key rotation)")
        nonce = random_source.token_bytes(NONCE_BYTES)
        cipher = self._ciphers[self.current_id]
        return Sealed(self.current_id, nonce, cipher.encrypt(nonce, plaintext, aad))

    def open(self, sealed: Sealed, aad: bytes) -> bytes:
        """Decrypt a sealed value bound to ``aad``.

        Raises:
            SecretUnavailable: its key is not configured, or the ciphertext, nonce or associated
                data do not match (tampering, or a value copied to another team or name).
        """
        cipher = self._cipher(sealed.key_id)
        try:
            return cipher.decrypt(bytes(sealed.nonce), bytes(sealed.ciphertext), aad)
        except InvalidTag:
            raise SecretUnavailable("it does not authenticate (tampered with, or moved to "
                                    "another team or name)") from None

    def _cipher(self, kid: str) -> AESGCM:
        cipher = self._ciphers.get(kid)
        if cipher is None and self._key_file is not None:
            with self._lock:
                if kid not in self._tried:
                    self._tried.add(kid)
                    try:
                        self._load(parse_keys(self._key_file.read_text(), str(self._key_file)))
                    except (OSError, KeyConfigError) as exc:
                        log.warning("could not reload %s: %s", self._key_file, exc)
            cipher = self._ciphers.get(kid)
        if cipher is None:
            raise SecretUnavailable(f"it was encrypted with key {kid}, which is not configured "
                                    "(CRONLEDGER_SECRET_KEY)")
        return cipher


def secret_aad(team_id: bytes, name: str) -> bytes:
    """Associated data of a team secret: a sealed value only opens for its own team and name."""
    return b"cronledger/secret/v1\0" + team_id + name.encode()


def signing_aad(team_id: bytes, job_id: bytes) -> bytes:
    """Associated data of a job's signing secret."""
    return b"cronledger/signing/v1\0" + team_id + job_id


def token_aad(team_id: uuid.UUID, monitor_id: uuid.UUID) -> bytes:
    """Associated data of a monitor's sealed ping token (core/monitors/tokens.py): it only
    opens for its own team and monitor."""
    return b"cronledger/ping-token/v1\0" + team_id.bytes + monitor_id.bytes


def status_page_aad(team_id: uuid.UUID, page_id: uuid.UUID) -> bytes:
    """Associated data of a status page's sealed public key (core/statuspages/keys.py): it
    only opens for its own team and page."""
    return b"cronledger/status-page-key/v1\0" + team_id.bytes + page_id.bytes
