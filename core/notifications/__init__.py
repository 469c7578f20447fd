"""Notifications: the transactional outbox, job and monitor alert rules, messages and their
per-provider formatting, delivery, the notifier and a channel's test send (``probe``).

The channels themselves (definition, commands, reads, sealed secrets) are :mod:`core.channels`.
"""
