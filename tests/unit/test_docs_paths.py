"""Every repository path the docs and the code's comments name exists, and every named function
is defined where they say.

- A backquoted ``core/…``, ``api/…``, ``tests/…``, ``migrations/…`` or ``bench/…`` path in
  docs/*.md and README.md, with any ``:function`` suffix stripped, must be a file or folder of
  the repository (a glob such as ``core/sql/*.sql`` must match one).
- A path named in a comment or docstring of the code (``core``, ``api``, ``tests``,
  ``migrations``, ``bench``: ``#`` comments and docstrings of ``.py`` files, ``--`` comments of
  ``.sql`` files), ``docs/…`` pages included, must exist too.
- A ``file.py:name`` or ``file.py:Class.member`` in either must name a function, class or
  assignment of that file (``core/runs/worker.py:Worker._open_gate``).
- A dotted Sphinx reference into ``core`` or ``api`` in the code (a ``:func:``, ``:meth:``,
  ``:class:``, ``:mod:`` … role whose target starts ``core.`` or ``api.``) must resolve: its
  longest importable prefix imported, each further part an attribute (or, last, a field).
- A section cited as ``docs/<page>.md, "Heading"`` (or ``*Heading*``) in either must begin a
  heading or a bold lead of that page.

So moving or renaming a module or a function without updating what points at it fails here.
"""

from __future__ import annotations

import ast
import importlib
import io
import re
import tokenize
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

# The repository root, wherever under tests/ this file lives.
ROOT = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").exists())
DOCS = sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]
CODE = sorted(p for top in ("core", "api", "tests", "migrations", "bench")
              for p in (ROOT / top).rglob("*") if p.suffix in (".py", ".sql"))
# A path inside single or double backquotes: `core/runs/worker.py:Worker._gate`, `core/jobs/`.
PATH = re.compile(r"`+((?:core|api|tests|migrations|bench)/[^`\s]*)`+")
# A path in a comment: core/runs/claim.py, docs/operations.md, core/sql/*.sql (no backquotes).
COMMENT_PATH = re.compile(r"(?<![\w/.-])((?:core|api|tests|migrations|bench|docs)/[\w./*-]*\w)")
# A section cited by its page: docs/operations.md, "Poison items"; docs/ledger.md, *Replay*
SECTION = re.compile(r'docs/([\w-]+\.md), (?:"([^"]+)"|\*([^*]+)\*)')
# A function named by its file: core/db.py:Pool.getconn
NAMED = re.compile(r"((?:core|api|tests|migrations|bench)/[\w./-]*\.py):([A-Za-z_]\w*(?:\.\w+)?)")

# A Sphinx role naming a dotted target in core or api: :meth:`core.db.Pool.getconn`.
ROLE = re.compile(r":(?:func|meth|class|mod|attr|data|exc|obj):`~?((?:core|api)\.[\w.]+)`")


def _exists(path: str) -> bool:
    return any(ROOT.glob(path)) if "*" in path else (ROOT / path).exists()


# A ``#`` with a path prefix after it on the same line: a file without one has no comment a
# check here reads (each comment is one line), so it is not tokenized (the slow part).
HASH_PATH = re.compile(r"#[^\n]*(?:core|api|tests|migrations|bench|docs)/")


def _definitions(body: list[ast.stmt]) -> Iterator[ast.ClassDef | ast.FunctionDef
                                                     | ast.AsyncFunctionDef]:
    """Every class and function defined in ``body`` at any depth: definitions are statements,
    so only the statement lists (bodies, branches, handlers, cases) are walked, not the
    expressions (``ast.walk`` over every node took most of the time)."""
    for node in body:
        if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            yield node
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            for child in getattr(node, field, ()):
                if isinstance(child, ast.excepthandler | ast.match_case):
                    yield from _definitions(child.body)
                elif isinstance(child, ast.stmt):
                    yield from _definitions([child])


@cache
def comments(path: Path) -> list[tuple[int, str]]:
    """``(line, text)`` of the comments and docstrings of a ``.py`` or ``.sql`` file (the
    ``#`` comments only of a file where one names a path, ``HASH_PATH``)."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".sql":
        return [(n, line.partition("--")[2]) for n, line in enumerate(text.splitlines(), 1)
                if "--" in line]
    found = []
    if HASH_PATH.search(text):
        tokens = tokenize.generate_tokens(io.StringIO(text).readline)
        found = [(tok.start[0], tok.string) for tok in tokens if tok.type == tokenize.COMMENT]
    module = ast.parse(text, filename=str(path))
    for node in [module, *_definitions(module.body)]:
        doc = ast.get_docstring(node, clean=False)
        if doc is not None:
            found.append((node.body[0].lineno, doc))
    return found


@cache
def defined(path: str) -> frozenset[str]:
    """The names a module defines at its top level and in its classes (``Class.member``)."""
    names: set[str] = set()

    def collect(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(prefix + node.name)
                if isinstance(node, ast.ClassDef):
                    collect(node.body, f"{node.name}.")
            elif isinstance(node, ast.Assign | ast.AnnAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names.update(prefix + n.id for t in targets for n in ast.walk(t)
                             if isinstance(n, ast.Name))
            elif isinstance(node, ast.If | ast.Try):
                collect(node.body, prefix)

    collect(ast.parse((ROOT / path).read_text(encoding="utf-8")).body, "")
    return frozenset(names)


@cache
def named_paths() -> list[tuple[str, str]]:
    found = []
    for doc in DOCS:
        for match in PATH.finditer(doc.read_text(encoding="utf-8")):
            path = match.group(1).split(":", 1)[0]
            found.append((doc.relative_to(ROOT).as_posix(), path))
    return sorted(set(found))


@cache
def commented_paths() -> list[tuple[str, str]]:
    return sorted({(f"{p.relative_to(ROOT).as_posix()}:{line}", m.group(1))
                   for p in CODE for line, text in comments(p)
                   for m in COMMENT_PATH.finditer(text)})


@cache
def named_functions() -> list[tuple[str, str, str]]:
    texts = [(d.relative_to(ROOT).as_posix(), d.read_text(encoding="utf-8")) for d in DOCS]
    texts += [(f"{p.relative_to(ROOT).as_posix()}:{line}", text)
              for p in CODE for line, text in comments(p)]
    return sorted({(where, m.group(1), m.group(2)) for where, text in texts
                   for m in NAMED.finditer(text)})


@cache
def dotted_references() -> list[tuple[str, str]]:
    """``(file, target)`` of every dotted role into ``core``/``api`` in the ``.py`` files."""
    return sorted({(p.relative_to(ROOT).as_posix(), m.group(1)) for p in CODE
                   if p.suffix == ".py" for m in ROLE.finditer(p.read_text(encoding="utf-8"))})


def resolves(target: str) -> bool:
    """Whether ``core.a.b.Name.member`` names something: the longest importable module prefix,
    then each part an attribute of the last; the final part may be a field a class only
    annotates (a dataclass or msgspec field without a default)."""
    parts = target.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        rest = parts[cut:]
        for n, name in enumerate(rest):
            if hasattr(found, name):
                found = getattr(found, name)
            elif n == len(rest) - 1 and isinstance(found, type):
                return name in getattr(found, "__annotations__", {})
            else:
                return False
        return True
    return False


@cache
def headings(page: str) -> tuple[str, ...]:
    """The headings and bold leads (``**Snapshots.**``) of ``docs/<page>``, without markup."""
    text = (ROOT / "docs" / page).read_text(encoding="utf-8")
    found = [line.lstrip("#") for line in text.splitlines() if line.startswith("#")]
    found += re.findall(r"\*\*([^*]+)\*\*", text)
    return tuple(re.sub(r"[`*]", "", h).strip() for h in found)


@cache
def cited_sections() -> list[tuple[str, str, str]]:
    texts = [(d.relative_to(ROOT).as_posix(), d.read_text(encoding="utf-8")) for d in DOCS]
    texts += [(f"{p.relative_to(ROOT).as_posix()}:{line}", text)
              for p in CODE for line, text in comments(p)]
    found = set()
    for where, text in texts:
        flat = re.sub(r"\s*\n\s*(?:#|--)?\s*", " ", text)  # a citation wrapped over lines
        found |= {(where, m.group(1), m.group(2) or m.group(3)) for m in SECTION.finditer(flat)}
    return sorted(found)


def test_docs_name_paths() -> None:
    assert len(named_paths()) > 20
    assert len(commented_paths()) > 100
    assert len(named_functions()) > 30
    assert len(cited_sections()) > 30


@pytest.mark.parametrize(("doc", "path"), named_paths())
def test_named_path_exists(doc: str, path: str) -> None:
    assert _exists(path), f"{doc} names `{path}`, which does not exist"


def test_every_path_in_a_comment_exists() -> None:
    missing = [f"{where}: {path}" for where, path in commented_paths() if not _exists(path)]
    assert missing == [], "comments name paths that do not exist"


def test_every_named_function_is_defined_there() -> None:
    wrong = [f"{where}: {path}:{name}" for where, path, name in named_functions()
             if not _exists(path) or name not in defined(path)]
    assert wrong == [], "file:name references whose file does not define the name"


def test_every_dotted_reference_resolves() -> None:
    refs = dotted_references()
    assert len(refs) > 300
    wrong = [f"{where}: {target}" for where, target in refs if not resolves(target)]
    assert wrong == [], "Sphinx references to names that do not exist"


def test_a_dotted_reference_is_resolved_by_import() -> None:
    assert resolves("core.db.translate_errors") and resolves("core.runs.state.RunState.status")
    assert resolves("core.http.exchange.ConnectionPath.build")
    assert not resolves("core.http.exchange.build") and not resolves("core.nothing_here")


def test_every_cited_section_exists() -> None:
    wrong = [f"{where}: docs/{page}, {section!r}" for where, page, section in cited_sections()
             if not (ROOT / "docs" / page).exists()
             or not any(h.startswith(re.sub(r"[`*]", "", section).strip())
                        for h in headings(page))]
    assert wrong == [], "citations of sections that their page does not have"


def test_the_scan_reads_comments_and_docstrings(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text('"""See core/db.py."""\nx = "core/not/a/comment.py"  # core/clock.py\n\n\n'
                      'def f():\n    """core/events.py:append_events"""\n')
    assert sorted(comments(module)) == [(1, "See core/db.py."), (2, "# core/clock.py"),
                                        (6, "core/events.py:append_events")]
    assert "Pool.getconn" in defined("core/db.py") and "transaction" in defined("core/db.py")
