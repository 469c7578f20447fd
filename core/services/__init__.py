"""The background-service machinery: the :class:`~core.services.base.Service` base the worker,
checker, notifier and projector run on (:mod:`core.services.base`), LISTEN wake-ups
(:mod:`core.services.listen`), the heartbeat (:mod:`core.services.health`), keeping the garbage
collector out of the latency path (:mod:`core.services.heap`), quiet windows
(:mod:`core.services.quiet`) and database outages (:mod:`core.services.outage`)."""
