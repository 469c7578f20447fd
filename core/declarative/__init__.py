"""Jobs, monitors and channels as code (docs/config.md): a declarative document, its plan
against a team's current objects, and the apply of that plan in one transaction.

    document.py  the document's shape: the keys of each kind, name uniqueness, the warnings
                 about literal secrets (pure)
    plan.py      the field-level diff and the plan: create / update / delete / unchanged (pure)
    apply.py     load a team's objects, resolve ``${secrets.NAME}``, plan, and apply through
                 the job, monitor and channel commands on one connection
    bound.py     :class:`BoundPool`: a "pool" of one connection already in a transaction, so
                 the commands' own transactions become savepoints of the apply's
    export.py    a team's current definitions as a document that applies as a no-op
    render.py    a document as TOML text (tomli-w)
    lines.py     where each key of a TOML file is: errors and warnings name file and line
    crontab.py   ``cronledger import crontab``: a crontab as a document and a report (pure)
"""
