"""Projections of the event log: inline ones rebuilt from it, asynchronous ones fed by it.

docs/architecture.md, "An event". The inline projections (``jobs``,
``due_jobs``, ``runs``) are written by the
commands in the transaction that appends their events; :mod:`core.projections.jobs` and
:mod:`core.projections.runs` derive the same rows from the log for ``cronledger projections
rebuild`` (:mod:`core.rebuild`). The asynchronous read models behind the dashboard
and the ``reporting`` schema (:mod:`core.projections.job_stats`,
:mod:`core.projections.job_health`, :mod:`core.projections.monitors`) are applied in batches by
:mod:`core.projections.projector`, which advances a forward-only checkpoint in the same
transaction. :mod:`core.projections.queries` reads them for the API.
"""
