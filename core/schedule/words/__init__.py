"""Schedules in words: read an English or French phrase into the canonical grammar.

``"every weekday at 9:30 am"`` becomes ``"30 9 * * 1-5"``, ``"toutes les 5 minutes"`` becomes
``"*/5 * * * *"``, ``"every 90 minutes"`` becomes ``"@every 1h30m"``. The result is an ordinary
schedule string of docs/schedules.md (*Grammar*), which :func:`core.schedule.parse_schedule`
then validates and evaluates as if the user had typed it: the words add no rule of their own
to evaluation, DST included. The rules of the reading (which periods become cron and which
intervals, what "between 9am and 5pm" covers, the default time of day) are in
docs/schedules.md, *Schedules in words*.

Public API: :func:`looks_like_words` (whether a string is a phrase rather than canonical
grammar; canonical strings are never read as words), :func:`parse_phrase` (phrase -> canonical
string) and :class:`PhraseError` (an :class:`~core.schedule.model.InvalidSchedule` naming the
word that was not understood, with a misspelling corrected when the correction is sure).

The reading, by concept: :mod:`core.schedule.vocab` (the English and French words),
:mod:`~core.schedule.words.tokens` (a phrase's tokens, in the language that knows most of
them), :mod:`~core.schedule.words.reader` with :mod:`~core.schedule.words.times` and
:mod:`~core.schedule.words.dates` (tokens -> :class:`~core.schedule.words.reading.Reading`),
:mod:`~core.schedule.words.builder` with :mod:`~core.schedule.words.day_fields` (reading ->
canonical string) and :mod:`~core.schedule.words.spelling` (a misspelt word's correction).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from core.schedule.model import MAX_EXPRESSION_LENGTH, InvalidSchedule
from core.schedule.vocab import LANGUAGES
from core.schedule.words.builder import build
from core.schedule.words.reader import Reader
from core.schedule.words.reading import PhraseError
from core.schedule.words.tokens import in_term, normalise, tokenise

__all__ = ["Phrase", "PhraseError", "looks_like_words", "parse_phrase"]

_CRON_WORDS = frozenset(("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT",
                         "NOV", "DEC", "SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT", "L",
                         "W", "LW"))
_CRON_FIELD = re.compile(r"[\d*?/,-]+")
_INTERVAL = re.compile(r"(?:\d+d)?(?:\d+h)?(?:\d+m)?(?:\d+s)?|[\d.,+-]+", re.IGNORECASE)
_TIME_LIKE = re.compile(r"\d{1,2}\s*(?:h\d{0,2}|[ap]\.?m\.?|:\d{2})(?![a-z])", re.IGNORECASE)


@dataclass(frozen=True)
class Phrase:
    """A phrase read: the canonical schedule string and the language that read it."""

    canonical: str
    language: str


def looks_like_words(expression: object) -> bool:
    """Whether ``expression`` is a phrase to read with :func:`parse_phrase`.

    Canonical strings are never phrases: anything starting with ``@``, a single token shaped
    like an interval (``90s``, ``1h30m``, ``9h``), anything with a ``*``, five or more fields
    whose first two are numeric cron fields, and any string whose words are all cron's
    (``0 9 * * MON-FRI``, ``0 0 L * *``). A phrase has a word of at least two letters that a
    vocabulary knows (other than cron's names) or a time of day such as ``9h30``, ``9am`` or
    ``17:30``; anything else stays with the canonical grammar and its messages.
    """
    if not isinstance(expression, str):
        return False
    text = expression.strip()
    if not text or text.startswith("@"):
        return False
    fields = text.split()
    if len(fields) == 1 and _INTERVAL.fullmatch(text):
        return False
    if "*" in text or len(fields) >= 5 and all(_CRON_FIELD.fullmatch(f) for f in fields[:2]):
        return False  # cron fields, even misspelt ones ("0 0 * * MONDAY"): cron's messages
    if _TIME_LIKE.search(text):
        return True
    for run in re.findall(r"[^\W\d_]+", text):
        if run.upper() in _CRON_WORDS or (run.upper().endswith("L") and run.upper()[:-1]
                                          in _CRON_WORDS):
            continue
        word = normalise(run)
        if len(word) >= 2 and any(word in v.words or in_term(word, v) for v in LANGUAGES):
            return True
    return False


def parse_phrase(text: str) -> Phrase:
    """Read an English or French phrase into a canonical schedule string.

    Args:
        text: the phrase; case, accents and surrounding spaces do not matter. At most 200
            characters, like every schedule.

    Returns:
        The :class:`Phrase`: cron (5 fields, or 6 with seconds first), ``@every <duration>``.

    Raises:
        PhraseError: a word is not understood, a value is impossible (``25h``, ``every 0
            minutes``, ``the 32nd``) or the phrase is ambiguous (a day of the month and a
            weekday without "or"; times that one cron expression cannot hold).
    """
    stripped = text.strip()
    if len(stripped) > MAX_EXPRESSION_LENGTH:
        raise InvalidSchedule(
            f"schedule is {len(stripped)} characters long; the limit is {MAX_EXPRESSION_LENGTH}")
    vocab, tokens = tokenise(stripped)
    reading = Reader(vocab, tokens, stripped, canonical=_canonical).read()
    return Phrase(build(reading, vocab.language), vocab.language)


def _canonical(text: str) -> str | None:
    """The canonical form ``text`` reads as, None when it does not read (a correction's
    check: no correction of its own is looked for)."""
    try:
        vocab, tokens = tokenise(text)
        return build(Reader(vocab, tokens, text).read(), vocab.language)
    except InvalidSchedule:
        return None
