"""Correcting a misspelt word of a phrase (:mod:`core.schedule.words`), only when the
correction is sure: one letter away from a known word, and every such word reads the same."""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable

from core.schedule.vocab import Vocabulary

#: a phrase's canonical schedule string, None when it does not read (no suggestion of its own)
Canonical = Callable[[str], str | None]


def correction(phrase: str, word: str, text: str, vocab: Vocabulary,
               canonical: Canonical) -> str | None:
    """The phrase with ``word`` (``text`` normalised) corrected, when it is a misspelling of
    one word: the nearest words of ``vocab`` (fewest edits) whose phrases read must all read
    the same schedule - "onday" is "monday", but a word as near to two readings is not
    guessed.

    Args:
        phrase: the whole phrase, as written.
        word: the word not understood, as written (whitespace-separated).
        text: its normalised token.
        vocab: the vocabulary reading the phrase.
        canonical: reads a corrected phrase (:data:`Canonical`).

    Returns:
        The corrected phrase, or None when there is no sure correction.
    """
    vocabulary = [w for w in vocab.words if len(w) > 1 and "_" not in w]
    vocabulary += [" ".join(term) for term in vocab.terms]
    near = [w for w in difflib.get_close_matches(text, vocabulary, n=10, cutoff=0.6)
            if _is_typo(text, w)]
    if not near:
        return None
    fewest = min(_edits(text, w) for w in near)
    readings: dict[str, str] = {}
    for close in (w for w in near if _edits(text, w) == fewest):
        candidate = _corrected(phrase, word, close)
        reading = canonical(candidate)
        if reading is not None:
            readings.setdefault(reading, candidate)
    return next(iter(readings.values())) if len(readings) == 1 else None


def _corrected(phrase: str, word: str, replacement: str) -> str:
    """The whole phrase with the word not understood replaced."""
    escaped = re.escape(word)
    return re.sub(rf"(?<!\S){escaped}(?!\S)", lambda _: replacement, phrase, count=1)


def _is_typo(word: str, close: str) -> bool:
    """Whether ``close`` is ``word`` misspelt: one letter wrong, missing, extra or two
    swapped (two for words of eight letters or more), and not a shorter word inside a longer
    one ("matin" is not "mai", "soirs" not "mois"): a correction keeps the meaning the user
    typed, it never picks another word that happens to be near."""
    limit = 2 if len(word) >= 8 else 1
    return len(close) >= 3 and abs(len(word) - len(close)) <= limit \
        and _edits(word, close) <= limit


def _edits(a: str, b: str) -> int:
    """Optimal string alignment distance (Damerau-Levenshtein, adjacent swaps)."""
    rows = [list(range(len(b) + 1))]
    for i in range(1, len(a) + 1):
        row = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            row[j] = min(rows[-1][j] + 1, row[j - 1] + 1,
                         rows[-1][j - 1] + (a[i - 1] != b[j - 1]))
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                row[j] = min(row[j], rows[-2][j - 2] + 1)
        rows.append(row)
    return rows[-1][-1]
