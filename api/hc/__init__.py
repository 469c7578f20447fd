"""healthchecks' Management API v3 at ``/api/v3/`` (and v1, v2; docs/healthchecks.md): a thin
translation of its requests onto the same core commands and queries as ``/v1`` (every change
an event).

``shapes.py`` translates checks (monitors) both ways, ``routes.py`` holds the routes and their
``X-Api-Key`` authentication and ``{"error": ...}`` answers. It is kept out of the ``/v1``
OpenAPI document: its shapes are healthchecks', not this API's.
"""
