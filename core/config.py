"""Configuration from environment variables (all ``CRONLEDGER_*`` except ``DATABASE_URL``).

Every variable, its default and its unit are listed in ``docs/operations.md``.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping
from dataclasses import dataclass, field

from core.dsn import InvalidDsn, check_dsn


class ConfigError(ValueError):
    """An environment variable holds a value that cannot be used."""


def _int(env: Mapping[str, str], name: str, default: int, low: int, high: int) -> int:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ConfigError(f"{name} must be an integer, got {raw!r}") from None
    if not low <= value <= high:
        raise ConfigError(f"{name} must be between {low} and {high}, got {value}")
    return value


def _float(env: Mapping[str, str], name: str, default: float, low: float, high: float) -> float:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ConfigError(f"{name} must be a number, got {raw!r}") from None
    if not low <= value <= high:
        raise ConfigError(f"{name} must be between {low} and {high}, got {value}")
    return value


def _bool(env: Mapping[str, str], name: str, default: bool) -> bool:
    raw = env.get(name, "").strip().lower()
    if raw == "":
        return default
    if raw in ("1", "true", "yes", "on"):
        return True
    if raw in ("0", "false", "no", "off"):
        return False
    raise ConfigError(f"{name} must be true or false, got {raw!r}")


@dataclass(frozen=True)
class Settings:
    """Runtime settings. Durations are in seconds, sizes in bytes."""

    database_url: str | None = None
    data_dir: str = ".cronledger"
    host: str = "127.0.0.1"
    port: int = 8000
    public_url: str = ""
    max_concurrency: int = 200
    claim_batch: int = 100
    claim_lookahead_seconds: float = 1.0
    response_body_limit: int = 1024 * 1024
    lease_margin_seconds: float = 30.0
    shutdown_grace_seconds: float = 30.0
    db_pool_size: int = 10
    # How long an API request (or a ping) waits for a database connection before it is
    # answered 503 with Retry-After (docs/operations.md, "Database outages").
    db_wait_seconds: float = 1.5
    # Base64 keys, current first; never printed (repr=False). See core/crypto.py.
    secret_key: str = field(default="", repr=False)
    secret_key_file: str = ""
    block_private_targets: bool = False
    # How job attempts are sent: "connection" or "session"; empty: the default of
    # core/http/exchange.py (DEFAULT_SEND_PATH).
    send_path: str = ""
    # Notifications (docs/notifications.md).
    telegram_api_url: str = "https://api.telegram.org"
    notify_timeout_seconds: float = 10.0
    notify_max_attempts: int = 8
    notify_retry_delay_seconds: float = 30.0
    notify_max_retry_delay_seconds: float = 3600.0
    smtp_host: str = ""
    smtp_port: int = 587
    smtp_security: str = "starttls"
    smtp_username: str = ""
    smtp_password: str = field(default="", repr=False)
    smtp_from: str = ""
    smtp_ca_file: str = ""
    ping_body_limit: int = 10_000
    ping_pool_size: int = 1
    ping_synchronous_commit: bool = True
    projector_interval_seconds: float = 1.0
    projector_batch: int = 20_000
    # Bearer token /metrics requires; empty: /metrics is public (docs/operations.md).
    metrics_token: str = field(default="", repr=False)
    # Peers whose X-Forwarded-For is believed, as uvicorn's --forwarded-allow-ips
    # (core/http/proxies.py; docs/heartbeats.md).
    trusted_proxies: str = "127.0.0.1,::1"
    worker_id: str = field(default_factory=lambda: f"{socket.gethostname()}:{os.getpid()}")
    # A monitor created by a ``?create=1`` ping (docs/healthchecks.md): its schedule and grace,
    # and the most live monitors a team may have when a ping creates one.
    ping_create_schedule: str = "1d"
    ping_create_grace_seconds: int = 3600
    team_monitor_limit: int = 1000
    # Retention in days per kind of history (docs/operations.md, "Retention"); definitions and
    # their history are kept forever.
    retention_pings_days: int = 30
    retention_runs_days: int = 90
    retention_attempt_bodies_days: int = 14
    retention_deliveries_days: int = 90
    # Daily partitions created this many days ahead; the retention pass runs this often.
    partitions_ahead_days: int = 3
    retention_interval_seconds: float = 3600.0
    # LISTEN connections go direct, never through a transaction pooler (docs/operations.md,
    # "PgBouncer"); empty: DATABASE_URL.
    listen_database_url: str = ""
    # A read replica for the reporting reads (docs/operations.md, "Read replica"); empty: none.
    read_database_url: str = ""

    @property
    def base_url(self) -> str:
        """The externally visible base URL (``CRONLEDGER_PUBLIC_URL`` or ``http://host:port``)."""
        return self.public_url.rstrip("/") or f"http://{self.host}:{self.port}"


def load_settings(env: Mapping[str, str] | None = None) -> Settings:
    """Read :class:`Settings` from ``env`` (default ``os.environ``).

    Raises:
        ConfigError: naming the variable whose value is unusable.
    """
    env = os.environ if env is None else env
    identity = {"worker_id": env["CRONLEDGER_WORKER_ID"]} if env.get("CRONLEDGER_WORKER_ID") else {}
    return Settings(
        **identity,
        database_url=_dsn(env, "DATABASE_URL") or None,
        data_dir=env.get("CRONLEDGER_DATA_DIR") or ".cronledger",
        host=env.get("CRONLEDGER_HOST") or "127.0.0.1",
        port=_int(env, "CRONLEDGER_PORT", 8000, 1, 65535),
        public_url=env.get("CRONLEDGER_PUBLIC_URL", ""),
        max_concurrency=_int(env, "CRONLEDGER_MAX_CONCURRENCY", 200, 1, 10_000),
        claim_batch=_int(env, "CRONLEDGER_CLAIM_BATCH", 100, 1, 1_000),
        claim_lookahead_seconds=_float(env, "CRONLEDGER_CLAIM_LOOKAHEAD", 1.0, 0.0, 5.0),
        response_body_limit=_int(
            env, "CRONLEDGER_RESPONSE_BODY_LIMIT", 1024 * 1024, 0, 64 * 1024 * 1024
        ),
        lease_margin_seconds=_float(env, "CRONLEDGER_LEASE_MARGIN", 30.0, 1.0, 3600.0),
        shutdown_grace_seconds=_float(env, "CRONLEDGER_SHUTDOWN_GRACE", 30.0, 0.0, 3600.0),
        db_pool_size=_int(env, "CRONLEDGER_DB_POOL_SIZE", 10, 2, 200),
        db_wait_seconds=_float(env, "CRONLEDGER_DB_WAIT_SECONDS", 1.5, 0.1, 60.0),
        secret_key=_secret_keys(env),
        secret_key_file=env.get("CRONLEDGER_SECRET_KEY_FILE", ""),
        block_private_targets=_bool(env, "CRONLEDGER_BLOCK_PRIVATE_TARGETS", False),
        send_path=_choice(env, "CRONLEDGER_SEND_PATH", "session", ("connection", "session"))
        if env.get("CRONLEDGER_SEND_PATH", "").strip() else "",
        telegram_api_url=(env.get("CRONLEDGER_TELEGRAM_API_URL")
                          or "https://api.telegram.org").rstrip("/"),
        notify_timeout_seconds=_float(env, "CRONLEDGER_NOTIFY_TIMEOUT", 10.0, 0.1, 300.0),
        notify_max_attempts=_int(env, "CRONLEDGER_NOTIFY_MAX_ATTEMPTS", 8, 1, 50),
        notify_retry_delay_seconds=_float(env, "CRONLEDGER_NOTIFY_RETRY_DELAY", 30.0, 0.0,
                                          86400.0),
        notify_max_retry_delay_seconds=_float(env, "CRONLEDGER_NOTIFY_MAX_RETRY_DELAY", 3600.0,
                                              0.0, 86400.0),
        smtp_host=env.get("CRONLEDGER_SMTP_HOST", ""),
        smtp_port=_int(env, "CRONLEDGER_SMTP_PORT", 587, 1, 65535),
        smtp_security=_choice(env, "CRONLEDGER_SMTP_SECURITY", "starttls",
                              ("starttls", "tls", "none")),
        smtp_username=env.get("CRONLEDGER_SMTP_USERNAME", ""),
        smtp_password=env.get("CRONLEDGER_SMTP_PASSWORD", ""),
        smtp_from=env.get("CRONLEDGER_SMTP_FROM", ""),
        smtp_ca_file=env.get("CRONLEDGER_SMTP_CA_FILE", ""),
        ping_body_limit=_int(env, "CRONLEDGER_PING_BODY_LIMIT", 10_000, 0, 10 * 1024 * 1024),
        ping_pool_size=_int(env, "CRONLEDGER_PING_POOL_SIZE", 1, 1, 200),
        ping_synchronous_commit=_bool(env, "CRONLEDGER_PING_SYNCHRONOUS_COMMIT", True),
        projector_interval_seconds=_float(env, "CRONLEDGER_PROJECTOR_INTERVAL", 1.0, 0.05,
                                          3600.0),
        projector_batch=_int(env, "CRONLEDGER_PROJECTOR_BATCH", 20_000, 1, 100_000),
        metrics_token=_metrics_token(env),
        trusted_proxies=_trusted_proxies(env),
        ping_create_schedule=env.get("CRONLEDGER_PING_CREATE_SCHEDULE") or "1d",
        ping_create_grace_seconds=_int(env, "CRONLEDGER_PING_CREATE_GRACE", 3600, 1,
                                       366 * 86400),
        team_monitor_limit=_int(env, "CRONLEDGER_TEAM_MONITOR_LIMIT", 1000, 1, 1_000_000),
        retention_pings_days=_int(env, "CRONLEDGER_RETENTION_PINGS_DAYS", 30, 1, 36_500),
        retention_runs_days=_int(env, "CRONLEDGER_RETENTION_RUNS_DAYS", 90, 1, 36_500),
        retention_attempt_bodies_days=_int(env, "CRONLEDGER_RETENTION_ATTEMPT_BODIES_DAYS", 14,
                                           1, 36_500),
        retention_deliveries_days=_int(env, "CRONLEDGER_RETENTION_DELIVERIES_DAYS", 90, 1,
                                       36_500),
        partitions_ahead_days=_int(env, "CRONLEDGER_PARTITIONS_AHEAD_DAYS", 3, 1, 365),
        retention_interval_seconds=_float(env, "CRONLEDGER_RETENTION_INTERVAL", 3600.0, 1.0,
                                            86_400.0),
        listen_database_url=_dsn(env, "CRONLEDGER_LISTEN_DATABASE_URL"),
        read_database_url=_dsn(env, "CRONLEDGER_READ_DATABASE_URL"),
    )


def _dsn(env: Mapping[str, str], name: str) -> str:
    """The connection string in ``name`` (``""`` when unset), as libpq reads it
    (:func:`core.dsn.check_dsn`): several hosts, ``target_session_attrs`` and every other
    libpq option pass unchanged.

    Raises:
        ConfigError: libpq rejects it (its message, never the password).
    """
    raw = env.get(name, "")
    if not raw:
        return ""
    try:
        check_dsn(raw)
    except InvalidDsn as exc:
        raise ConfigError(f"{name} is not a connection string libpq accepts: {exc}") from None
    return raw


def _choice(env: Mapping[str, str], name: str, default: str, allowed: tuple[str, ...]) -> str:
    raw = env.get(name, "").strip().lower() or default
    if raw not in allowed:
        raise ConfigError(f"{name} must be one of {', '.join(allowed)}, got {raw!r}")
    return raw


def _metrics_token(env: Mapping[str, str]) -> str:
    """``CRONLEDGER_METRICS_TOKEN`` (surrounding whitespace dropped; empty: no token)."""
    token = env.get("CRONLEDGER_METRICS_TOKEN", "").strip()
    if token and (len(token) > 1000 or not token.isprintable() or " " in token):
        raise ConfigError("CRONLEDGER_METRICS_TOKEN must be at most 1000 printable characters "
                          "without spaces")
    return token


def _trusted_proxies(env: Mapping[str, str]) -> str:
    """``CRONLEDGER_TRUSTED_PROXIES``, checked now so a typo stops the process at start."""
    from core.http.proxies import TrustedProxies

    raw = env.get("CRONLEDGER_TRUSTED_PROXIES", "").strip() or "127.0.0.1,::1"
    try:
        TrustedProxies.parse(raw)
    except ValueError as exc:
        raise ConfigError(f"CRONLEDGER_TRUSTED_PROXIES: {exc}") from None
    return raw


def _secret_keys(env: Mapping[str, str]) -> str:
    """``CRONLEDGER_SECRET_KEY``, checked now so a bad key stops the process at start."""
    from core.crypto import KeyConfigError, parse_keys

    raw = env.get("CRONLEDGER_SECRET_KEY", "")
    try:
        parse_keys(raw, "CRONLEDGER_SECRET_KEY")
    except KeyConfigError as exc:
        raise ConfigError(str(exc)) from None
    return raw
