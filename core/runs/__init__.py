"""Runs: one execution of a job for one slot (or a manual trigger), on its own ``run`` stream.

Statuses (``runs.status``): ``queued`` (waiting for ``available_at``; ``null`` while buffered
behind a running run), ``running`` (an attempt is in flight under a lease),
``awaiting_confirmation`` (a 2xx was received, the confirmation URL not pinged yet), and the final
``succeeded``, ``failed``, ``skipped``, ``missed``. Triggers: ``schedule`` (a slot on time),
``catchup`` (a late slot fired by the catch-up policy), ``manual`` (``POST /v1/jobs/{id}/trigger``).

Modules: :mod:`core.runs.events` (the only place ``run.*`` events are built),
:mod:`core.runs.state` (a run's frozen ``RunState`` and its fold), :mod:`core.runs.slots`
(catch-up and overlap decisions), :mod:`core.runs.claim` (claiming due jobs and ready runs),
:mod:`core.runs.dispatch` (an attempt to send and its result), :mod:`core.runs.recorder`
(recording results), :mod:`core.runs.queries` (team-scoped reads), :mod:`core.runs.worker` (the
worker service: claim loop, dispatch, batched recording) and :mod:`core.runs.executor` (the
sender of one attempt, over the clients of :mod:`core.http.clients`).

Run stream events. ``data`` always carries what the ``runs`` row needs to be rebuilt (see
:mod:`core.runs.state`), and every event names its run's ``job_id``, ``scheduled_for`` and
``trigger`` so read models need no lookup:
    ``run.queued``           manual trigger or buffered overlap (``max_attempts``,
                             ``available_at``: ``null`` while buffered, ``reason``)
    ``run.released``         a buffered run became ready (``available_at``)
    ``run.started``          an attempt was dispatched (``attempt``, ``max_attempts``,
                             ``worker_id``; on a lease take-over ``redispatch: true``)
    ``run.retry_scheduled``  a failed attempt will be retried at ``available_at`` (attempt,
                             ``started_at``, ``duration_ms``, ``lateness_ms``, response status,
                             ``error_class``, ``error``)
    ``run.awaiting_confirmation``  a 2xx of a job asking for confirmation: the same fields
                             and ``confirm_deadline_at`` (:mod:`core.runs.confirm`)
    ``run.succeeded`` / ``run.failed``   final outcome: the same fields and ``finished_at``
                                         (after a confirmation or its timeout also
                                         ``confirmation``: ``{"at", "outcome", "exit_status"}``)
    ``run.skipped`` / ``run.missed``     a slot that did not run: ``reason``, ``finished_at``
                                         (the first event of its stream, or a queued run
                                         cancelled because its job was deleted)
    ``run.overran``          still going past the job's ``max_duration``: ``started_at``,
                             ``max_duration`` (seconds), ``deadline`` (:mod:`core.runs.bounds`)
The first event of a slot of a job with a spread also names ``fire_at``, the slot plus the
job's offset (core/schedule/spread.py), when the slot was to fire.
The lease (``lease_token``, ``lease_expires_at``) is deliberately not in the log: it is a
transient claim, not history.
"""