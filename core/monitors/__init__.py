"""Heartbeat monitors (DESIGN 3.3): definition, state, timing rules, commands, pings, reads."""
