"""Alerts as records: the list of alerts the rules raised and the explanation of one, built
from the log (docs/notifications.md, *Alerts and why*)."""
