"""The advisor: suggestions for a job's or monitor's alert settings from its recorded history.

It suggests and never changes (docs/advice.md): :mod:`core.advice.rules` holds the one rule
(which candidate value wins, what counts as a real outage and as a false alarm) and the pure
reading of the observed figures (lateness, durations, gaps between check-ins);
:mod:`core.advice.schedules` the schedule a monitor's check-ins fit;
:mod:`core.advice.monitors` and :mod:`core.advice.jobs` read the history and replay each
candidate with the what-if replay (:mod:`core.replay`). Nothing is written.
"""
