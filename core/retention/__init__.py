"""Bounded storage: the kinds of history, their daily partitions, pruning and the maintenance
service (docs/operations.md, "Retention"; docs/storage.md).

``policy.py``      the kinds, their tables and retention (from :class:`core.config.Settings`)
``partitions.py``  the daily leaves: list, create ahead, what is past its horizon
``prune.py``       one prune: projection rows past their horizon, snapshot, kept pings,
                   DETACH + DROP a leaf at a time, the outbox, ``log.pruned``
``maintenance.py`` the background service running both, one process at a time
``size.py``        the database size per kind (``cronledger db-size``)
"""
