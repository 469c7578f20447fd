"""Heartbeat monitors (DESIGN 3.3): definition, state, rules, commands, pings, reads."""
