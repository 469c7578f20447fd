"""Public status pages (docs/status-pages.md): a team's page of chosen jobs and monitors that
anyone with its URL may read, with no key and no session.

Each page is a ``status_page`` stream (``status_page.created`` / ``.updated`` / ``.deleted``)
with its ``status_pages`` row written in the same transaction (:mod:`.commands`); its public
key is minted, hashed and kept sealed by :mod:`.keys`; what a visitor sees is assembled by
:mod:`.public` from the read models (uptime: :mod:`core.projections.queries`) and the alerts
(incidents: :mod:`.incidents`, notes: :mod:`.notes`), and cached by :mod:`.cache`.
"""
