"""Notifications: channels, the transactional outbox, alert rules and the notifier."""
