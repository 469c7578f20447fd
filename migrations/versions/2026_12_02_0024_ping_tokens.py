"""Ping tokens kept sealed, so a monitor's ping URL can be read again (docs/heartbeats.md).

``monitors.ping_token_hash`` stays the one thing a ping is looked up by. Beside it,
``monitor_ping_tokens`` holds the token itself sealed with the server's key ring (AES-256-GCM,
team id and monitor id bound as associated data, as channel URLs and team secrets are:
``core/crypto.py``), with the SHA-256 it was minted with: a row whose ``token_hash`` is not the
monitor's current ``ping_token_hash`` is a rotated token and is never shown.

Like ``secrets`` and ``job_signing_secrets`` the table is not a projection (events carry the
hash only, never the token), so it has no foreign key to ``monitors``: a projection rebuild's
``TRUNCATE monitors CASCADE`` must leave it alone. Monitors created before this revision, or
on a server without a secret key, have no row: their URL is readable after their next
rotation.

Revision ID: 0024
Revises: 0023
Create Date: 2026-12-02
"""

from alembic import op

revision = "0024"
down_revision = "0023"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("""
    CREATE TABLE monitor_ping_tokens (
        monitor_id  uuid        NOT NULL,
        team_id     uuid        NOT NULL,
        token_hash  bytea       NOT NULL,
        key_id      text        NOT NULL,
        nonce       bytea       NOT NULL,
        ciphertext  bytea       NOT NULL,
        updated_at  timestamptz NOT NULL,
        CONSTRAINT monitor_ping_tokens_pkey PRIMARY KEY (monitor_id),
        CONSTRAINT monitor_ping_tokens_team_id_fkey FOREIGN KEY (team_id) REFERENCES teams (id),
        CONSTRAINT monitor_ping_tokens_nonce_check CHECK (octet_length(nonce) = 12)
    );
    """)


def downgrade() -> None:
    op.execute("DROP TABLE monitor_ping_tokens;")
