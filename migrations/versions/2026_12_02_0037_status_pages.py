"""Public status pages (docs/status-pages.md): the ``status_pages`` inline row of the
``status_page`` stream, and the notes a person writes on an incident (``alert_notes``, the
``alert.noted`` events of the alert's own stream).

    status_pages  id, team_id, title, tags (components by tag) or components (by id), names
                  (display names by component id, jsonb), path (a custom public path, unique
                  over every team), key_hash (SHA-256 of the public key: what a visitor's URL
                  is looked up by), key_id/nonce/ciphertext (the key sealed with the server's
                  key ring, team and page bound as associated data, as ping tokens are; NULL
                  without a secret key: the URL is then shown once), version, created_at,
                  updated_at. A deleted page's row goes; its stream stays.
    alert_notes   alert_id, team_id, note, version (the alert stream's version after the
                  note's event), updated_at

Revision ID: 0037
Revises: 0036
Create Date: 2026-12-02
"""

from __future__ import annotations

from alembic import op

revision = "0037"
down_revision = "0036"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("""
    CREATE TABLE status_pages (
        id          uuid        NOT NULL,
        team_id     uuid        NOT NULL,
        title       text        NOT NULL,
        tags        text[]      NOT NULL DEFAULT '{}',
        components  uuid[]      NOT NULL DEFAULT '{}',
        names       jsonb       NOT NULL DEFAULT '{}',
        path        text,
        key_hash    bytea       NOT NULL,
        key_id      text,
        nonce       bytea,
        ciphertext  bytea,
        version     integer     NOT NULL,
        created_at  timestamptz NOT NULL,
        updated_at  timestamptz NOT NULL,
        CONSTRAINT status_pages_pkey PRIMARY KEY (id),
        CONSTRAINT status_pages_team_id_fkey FOREIGN KEY (team_id) REFERENCES teams (id),
        CONSTRAINT status_pages_key_hash_key UNIQUE (key_hash),
        CONSTRAINT status_pages_path_key UNIQUE (path),
        CONSTRAINT status_pages_nonce_check CHECK (nonce IS NULL OR octet_length(nonce) = 12)
    );
    CREATE INDEX status_pages_team_idx ON status_pages (team_id, created_at, id);
    CREATE TABLE alert_notes (
        alert_id    uuid        NOT NULL,
        team_id     uuid        NOT NULL,
        note        text        NOT NULL,
        version     integer     NOT NULL,
        updated_at  timestamptz NOT NULL,
        CONSTRAINT alert_notes_pkey PRIMARY KEY (alert_id),
        CONSTRAINT alert_notes_alert_id_fkey FOREIGN KEY (alert_id) REFERENCES alerts (id)
            ON DELETE CASCADE
    );
    """)


def downgrade() -> None:
    op.execute("""
    DROP TABLE alert_notes;
    DROP TABLE status_pages;
    """)
