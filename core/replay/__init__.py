"""What-if replay: a proposed definition run over a job's or monitor's recorded history.

:mod:`core.replay.proposal` validates the ``changes`` (the one table of what may be proposed),
:mod:`core.replay.window` the replayed interval, :mod:`core.replay.monitors` replays recorded
pings through the monitor rules and the checker's decision, :mod:`core.replay.jobs` replays
recorded run outcomes through the job alert rules, and :mod:`core.replay.compare` sets the
proposal's alerts next to those that happened. Nothing is written: docs/ledger.md, *What-if
replay*.
"""
