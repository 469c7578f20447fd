"""Maintenance windows and fire-and-confirm (docs/ledger.md).

    maintenance_windows        the inline projection of the ``maintenance`` stream: one-off
                               (``starts_at``/``ends_at``) or recurring (``schedule``,
                               ``timezone``, ``duration_seconds``) windows over jobs, monitors
                               and tags (all empty: the whole team); ``released_until`` is the
                               end of the last closing the release service handled
    notifications.status       gains ``suppressed``: an alert held by a window (never sent)
    jobs.confirm_timeout_seconds  a job's ``confirm.timeout_seconds`` (``NULL``: no confirmation)
    runs.status                gains ``awaiting_confirmation`` (a 2xx was received, the
                               confirmation URL not pinged yet)
    run_confirmations          per run that asks for confirmation: the hash of the attempt's
                               one-time token, its deadline, and the confirmation once received
                               (a transient claim like the lease: the outcome is in the events)
    reporting.runs             gains the confirmation columns
"""

from __future__ import annotations

from alembic import op

revision = "0012"
down_revision = "0010"
branch_labels = None
depends_on = None

_RUNS_VIEW = """
    CREATE VIEW reporting.runs AS
    SELECT r.id AS run_id, r.team_id, r.job_id, j.name AS job_name, r.scheduled_for, r.trigger,
           r.status, r.attempt AS attempts, r.max_attempts, r.started_at, r.finished_at,
           r.lateness_ms, r.duration_ms, r.response_status, r.error_class, r.error, r.reason,
           r.created_at{extra}
    FROM runs r
    JOIN jobs j ON j.id = r.job_id{join};
"""


def upgrade() -> None:
    op.execute("""
    CREATE TABLE maintenance_windows (
        id                uuid        NOT NULL,
        team_id           uuid        NOT NULL,
        starts_at         timestamptz,
        ends_at           timestamptz,
        schedule          text,
        timezone          text,
        duration_seconds  integer,
        jobs              uuid[]      NOT NULL DEFAULT '{}',
        monitors          uuid[]      NOT NULL DEFAULT '{}',
        tags              text[]      NOT NULL DEFAULT '{}',
        suppress          text        NOT NULL,
        comment           text,
        ended_at          timestamptz,
        released_until    timestamptz,
        version           integer     NOT NULL,
        created_at        timestamptz NOT NULL,
        updated_at        timestamptz NOT NULL,
        CONSTRAINT maintenance_windows_pkey PRIMARY KEY (id),
        CONSTRAINT maintenance_windows_team_id_fkey FOREIGN KEY (team_id) REFERENCES teams (id),
        CONSTRAINT maintenance_windows_suppress_check CHECK (suppress IN ('alerts', 'runs')),
        CONSTRAINT maintenance_windows_kind_check CHECK (
            (schedule IS NULL AND starts_at IS NOT NULL AND ends_at IS NOT NULL
             AND ends_at > starts_at)
            OR (schedule IS NOT NULL AND duration_seconds > 0 AND timezone IS NOT NULL))
    );
    CREATE INDEX maintenance_windows_team_idx ON maintenance_windows (team_id, created_at, id);

    ALTER TABLE notifications DROP CONSTRAINT notifications_status_check;
    ALTER TABLE notifications ADD CONSTRAINT notifications_status_check CHECK
        (status IN ('pending', 'sending', 'sent', 'failed', 'cancelled', 'suppressed'));
    CREATE INDEX notifications_subject_idx ON notifications (subject_id, created_at);

    ALTER TABLE jobs ADD COLUMN confirm_timeout_seconds integer;
    ALTER TABLE jobs ADD CONSTRAINT jobs_confirm_timeout_seconds_check
        CHECK (confirm_timeout_seconds > 0);

    ALTER TABLE runs DROP CONSTRAINT runs_status_check;
    ALTER TABLE runs ADD CONSTRAINT runs_status_check CHECK (status IN
        ('queued', 'running', 'awaiting_confirmation', 'succeeded', 'failed', 'skipped',
         'missed'));

    CREATE TABLE run_confirmations (
        run_id           uuid        NOT NULL,
        team_id          uuid        NOT NULL,
        attempt          integer     NOT NULL,
        token_hash       bytea       NOT NULL,
        timeout_seconds  integer     NOT NULL,
        deadline_at      timestamptz,
        confirmed_at     timestamptz,
        outcome          text,
        exit_status      integer,
        CONSTRAINT run_confirmations_pkey PRIMARY KEY (run_id),
        CONSTRAINT run_confirmations_run_id_fkey FOREIGN KEY (run_id) REFERENCES runs (id)
            ON DELETE CASCADE,
        CONSTRAINT run_confirmations_token_hash_key UNIQUE (token_hash),
        CONSTRAINT run_confirmations_outcome_check CHECK
            (outcome IN ('succeeded', 'failed', 'unconfirmed'))
    );
    CREATE INDEX run_confirmations_deadline_idx ON run_confirmations (deadline_at)
        WHERE confirmed_at IS NULL AND deadline_at IS NOT NULL;

    DROP VIEW reporting.runs;
    """ + _RUNS_VIEW.format(
        extra=",\n           c.deadline_at AS confirm_deadline_at, c.confirmed_at,"
              "\n           c.outcome AS confirmation, c.exit_status AS confirm_exit_status,"
              "\n           (extract(epoch FROM c.confirmed_at - r.started_at) * 1000)::integer"
              " AS confirm_duration_ms",
        join="\n    LEFT JOIN run_confirmations c ON c.run_id = r.id"))


def downgrade() -> None:
    op.execute("""
    DROP VIEW reporting.runs;
    """ + _RUNS_VIEW.format(extra="", join="") + """
    DROP TABLE run_confirmations;
    DELETE FROM runs WHERE status = 'awaiting_confirmation';
    ALTER TABLE runs DROP CONSTRAINT runs_status_check;
    ALTER TABLE runs ADD CONSTRAINT runs_status_check CHECK (status IN
        ('queued', 'running', 'succeeded', 'failed', 'skipped', 'missed'));
    ALTER TABLE jobs DROP CONSTRAINT jobs_confirm_timeout_seconds_check;
    ALTER TABLE jobs DROP COLUMN confirm_timeout_seconds;
    DROP INDEX notifications_subject_idx;
    DELETE FROM notifications WHERE status = 'suppressed';
    ALTER TABLE notifications DROP CONSTRAINT notifications_status_check;
    ALTER TABLE notifications ADD CONSTRAINT notifications_status_check CHECK
        (status IN ('pending', 'sending', 'sent', 'failed', 'cancelled'));
    DROP TABLE maintenance_windows;
    """)
