"""Dashboard sign-in (docs/dashboard-code.md): sessions and one-time sign-in links.

    ui_sessions          one row per signed-in browser: only the SHA-256 of the session id
                         (the cookie's value) is stored, with the API key it was opened with
                         (its team and scope are the key's) and when it expires
    ui_signin_tokens     one-time sign-in links (`cronledger serve`'s first-run link): the
                         SHA-256 of the token, the key it signs in with, its expiry and when it
                         was used (a used token signs nobody in again)
"""

from __future__ import annotations

from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("""
    CREATE TABLE ui_sessions (
        id_hash     bytea       NOT NULL,
        key_id      uuid        NOT NULL,
        created_at  timestamptz NOT NULL,
        expires_at  timestamptz NOT NULL,
        CONSTRAINT ui_sessions_pkey PRIMARY KEY (id_hash),
        CONSTRAINT ui_sessions_key_id_fkey FOREIGN KEY (key_id)
            REFERENCES api_keys (id) ON DELETE CASCADE
    );
    CREATE INDEX ui_sessions_expires_at_idx ON ui_sessions (expires_at);

    CREATE TABLE ui_signin_tokens (
        token_hash  bytea       NOT NULL,
        key_id      uuid        NOT NULL,
        created_at  timestamptz NOT NULL,
        expires_at  timestamptz NOT NULL,
        used_at     timestamptz,
        CONSTRAINT ui_signin_tokens_pkey PRIMARY KEY (token_hash),
        CONSTRAINT ui_signin_tokens_key_id_fkey FOREIGN KEY (key_id)
            REFERENCES api_keys (id) ON DELETE CASCADE
    );
    """)


def downgrade() -> None:
    op.execute("""
    DROP TABLE ui_signin_tokens;
    DROP TABLE ui_sessions;
    """)
