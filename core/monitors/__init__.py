"""Heartbeat monitors (docs/heartbeats.md): definition, state, rules, commands, pings, reads, and
the checker service that notices monitors that stopped pinging (:mod:`core.monitors.checker`)."""
