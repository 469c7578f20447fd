"""Heartbeat monitors (docs/heartbeats.md): definition, state, rules, commands, pings, reads."""
