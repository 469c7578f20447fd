"""Failure tolerance of monitors (docs/notifications.md, *Failure tolerance*): alert after
``alert_after_failures`` failed pings or missed slots in a row, say ``up`` again after
``recover_after_successes`` good pings in a row (core/alerting.py, ``tolerate``, the rule jobs
share).

    monitors      alert_after_failures int NOT NULL DEFAULT 1 (1 to 1000),
                  recover_after_successes int NOT NULL DEFAULT 1 (1 to 1000)
    alert_states  consecutive_successes int NOT NULL DEFAULT 0 (good ones since the last
                  failure while an alert is open), next_miss_at timestamptz (a down monitor's
                  next slot deadline, counted as a failure by the checker when no ping came:
                  core/monitors/checker.py), miss_slot_at timestamptz (the expected instant of
                  that slot)

And the ping function of migration 0023, ``monitor_ping_batch``, with one more kind of monitor
left to the alerting transaction (``deferred``): one with channels and
``recover_after_successes`` above 1 whose down alert is still open, so that each good ping
counts towards the recovery. Nothing else in the statement changes; its specification is
core/monitors/rules.py. Downgrade puts 0023's function back.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

from alembic import op

revision = "0027"
down_revision = "0026"
branch_labels = None
depends_on = None

_DEFER = """                                    WHERE kind = 'success')))))"""
_DEFER_NOW = """                                    WHERE kind = 'success')))
                    -- a down alert still open, counting good pings to recovery (0027)
                    OR (recover_after_successes > 1 AND EXISTS (
                        SELECT FROM alert_states a
                        WHERE a.subject_type = 'monitor' AND a.subject_id = monitors.id
                          AND a.last_alert_at IS NOT NULL))))"""


def _previous() -> ModuleType:
    path = Path(__file__).with_name("2026_12_02_0023_ping_keywords.py")
    spec = importlib.util.spec_from_file_location("cronledger_migration_0023", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def function() -> str:
    """0023's statement with the deferral of this revision."""
    previous: str = _previous().FUNCTION
    assert previous.count(_DEFER) == 1, "migration 0023's function changed"
    return previous.replace(_DEFER, _DEFER_NOW)


def upgrade() -> None:
    op.execute("""
    ALTER TABLE monitors
        ADD COLUMN alert_after_failures int NOT NULL DEFAULT 1,
        ADD COLUMN recover_after_successes int NOT NULL DEFAULT 1,
        ADD CONSTRAINT monitors_alert_after_failures_check
            CHECK (alert_after_failures BETWEEN 1 AND 1000),
        ADD CONSTRAINT monitors_recover_after_successes_check
            CHECK (recover_after_successes BETWEEN 1 AND 1000);
    ALTER TABLE alert_states
        ADD COLUMN consecutive_successes int NOT NULL DEFAULT 0,
        ADD COLUMN next_miss_at timestamptz,
        ADD COLUMN miss_slot_at timestamptz;
    CREATE INDEX alert_states_miss_idx ON alert_states (next_miss_at)
        WHERE next_miss_at IS NOT NULL;
    """)
    op.execute("DROP FUNCTION monitor_ping_batch(json, boolean);")
    op.execute(function())


def downgrade() -> None:
    op.execute("DROP FUNCTION monitor_ping_batch(json, boolean);")
    op.execute(_previous().FUNCTION)
    op.execute("""
    DROP INDEX alert_states_miss_idx;
    ALTER TABLE alert_states
        DROP COLUMN consecutive_successes,
        DROP COLUMN next_miss_at,
        DROP COLUMN miss_slot_at;
    ALTER TABLE monitors
        DROP COLUMN alert_after_failures,
        DROP COLUMN recover_after_successes;
    """)
