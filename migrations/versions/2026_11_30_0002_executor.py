"""Executor: encrypted secrets, per-job signing secrets, success statuses, attempt details.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30

``secrets`` and ``job_signing_secrets`` are not projections: they hold the only copy of the
encrypted values (events carry names and flags, never values or ciphertexts, so the log never
pins an old key). A projection rebuild must leave them alone; for that reason neither has a
foreign key to ``jobs`` (a ``TRUNCATE jobs CASCADE`` would otherwise empty them).
"""

from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("""
    ALTER TABLE jobs
        ADD COLUMN success_statuses integer[],
        ADD COLUMN secret_names     text[]  NOT NULL DEFAULT '{}',
        ADD COLUMN signing          boolean NOT NULL DEFAULT false;

    ALTER TABLE run_attempts
        ADD COLUMN lateness_ms integer,
        ADD COLUMN worker_id   text;

    -- A team's secrets, AES-256-GCM encrypted (team id and name bound as associated data).
    CREATE TABLE secrets (
        id          uuid        NOT NULL,
        team_id     uuid        NOT NULL,
        name        text        NOT NULL,
        key_id      text        NOT NULL,
        nonce       bytea       NOT NULL,
        ciphertext  bytea       NOT NULL,
        version     integer     NOT NULL,
        created_at  timestamptz NOT NULL,
        updated_at  timestamptz NOT NULL,
        CONSTRAINT secrets_pkey PRIMARY KEY (id),
        CONSTRAINT secrets_team_id_fkey FOREIGN KEY (team_id) REFERENCES teams (id),
        CONSTRAINT secrets_team_name_key UNIQUE (team_id, name),
        CONSTRAINT secrets_name_check CHECK (name ~ '^[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}$'),
        CONSTRAINT secrets_nonce_check CHECK (octet_length(nonce) = 12)
    );

    -- The signing secret of a job (team id and job id bound as associated data).
    CREATE TABLE job_signing_secrets (
        job_id      uuid        NOT NULL,
        team_id     uuid        NOT NULL,
        key_id      text        NOT NULL,
        nonce       bytea       NOT NULL,
        ciphertext  bytea       NOT NULL,
        updated_at  timestamptz NOT NULL,
        CONSTRAINT job_signing_secrets_pkey PRIMARY KEY (job_id),
        CONSTRAINT job_signing_secrets_team_id_fkey FOREIGN KEY (team_id) REFERENCES teams (id),
        CONSTRAINT job_signing_secrets_nonce_check CHECK (octet_length(nonce) = 12)
    );
    """)


def downgrade() -> None:
    op.execute("""
    DROP TABLE job_signing_secrets;
    DROP TABLE secrets;
    ALTER TABLE run_attempts DROP COLUMN worker_id, DROP COLUMN lateness_ms;
    ALTER TABLE jobs DROP COLUMN signing, DROP COLUMN secret_names,
        DROP COLUMN success_statuses;
    """)
