"""The log read as history: an object as it was at an instant (:mod:`core.history.as_of`) and
its definition changes with field-level diffs (:mod:`core.history.changes`). Both fold the
stream with the fold of the inline projection (:mod:`core.jobs.state`,
:mod:`core.monitors.state`): docs/ledger.md, *Time travel and history*."""
