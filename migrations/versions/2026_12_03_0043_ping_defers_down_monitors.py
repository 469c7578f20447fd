"""The ping function ``monitor_ping_batch`` leaves every down monitor to the alerting
transaction (``deferred``), not only those with channels: a down monitor that comes back
releases, in the transaction of its ``monitor.up``, the alerts it held of its dependents
(core/notifications/released.py, ``release_dependents``; docs/notifications.md,
*Dependencies*), so the owed alert is dated at the parent's recovery, as the what-if replay
dates it. A ping to a down monitor is rare; the statement stays one round trip for the
others. Nothing else in the statement changes; downgrade puts 0027's function back.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

from alembic import op

revision = "0043"
down_revision = "0042"
branch_labels = None
depends_on = None

_DEFER = """      AND NOT (monitor_ping_batch.defer AND channels <> '{}'
               AND (status = 'down'"""
_DEFER_NOW = """      AND NOT (monitor_ping_batch.defer AND (channels <> '{}' OR status = 'down')
               AND (status = 'down'"""


def _previous() -> ModuleType:
    path = Path(__file__).with_name("2026_12_02_0027_failure_tolerance.py")
    spec = importlib.util.spec_from_file_location("cronledger_migration_0027", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def function() -> str:
    """0027's statement with the deferral of this revision."""
    previous: str = _previous().function()
    assert previous.count(_DEFER) == 1, "migration 0027's function changed"
    return previous.replace(_DEFER, _DEFER_NOW)


def upgrade() -> None:
    op.execute("DROP FUNCTION monitor_ping_batch(json, boolean);")
    op.execute(function())


def downgrade() -> None:
    op.execute("DROP FUNCTION monitor_ping_batch(json, boolean);")
    op.execute(_previous().function())
