"""Maintenance windows (docs/ledger.md): spans of time during which a team's jobs and
monitors keep running and being recorded but do not alert (``suppress: "alerts"``), or during
which jobs skip their slots (``suppress: "runs"``).

Each window is its own ``maintenance`` stream, folded into the ``maintenance_windows`` row:
    ``maintenance.created``  the definition (:mod:`core.maintenance.definition`)
    ``maintenance.updated``  ``{"changes": {field: new value, ...}}``
    ``maintenance.ended``    ``{"ended_at"}``: ended early (``POST .../end`` or ``DELETE``)

Modules: :mod:`core.maintenance.definition` (validation), :mod:`core.maintenance.windows` (the
rules: when a window is in effect, what it covers, when it closes; the one place of each),
:mod:`core.maintenance.state` (the row, a frozen ``WindowState``, and its fold),
:mod:`core.maintenance.decide` (what a command decides, pure),
:mod:`core.maintenance.commands`, :mod:`core.maintenance.queries` and
:mod:`core.maintenance.release` (the service that sends the one held alert when a window closes).
"""
