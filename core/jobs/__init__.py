"""Jobs: an HTTP request plus a schedule, event-sourced on the ``job`` stream."""
