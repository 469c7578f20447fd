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
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any

from core.schedule.model import MAX_EXPRESSION_LENGTH, InvalidSchedule
from core.schedule.vocab import LANGUAGES, Vocabulary
from core.schedule.windows import WindowError, window_fields

__all__ = ["Phrase", "PhraseError", "looks_like_words", "parse_phrase"]

_UNIT_SECONDS = {"second": 1, "minute": 60, "hour": 3600, "day": 86400, "week": 7 * 86400}
_SUB_DAY = ("second", "minute", "hour")
#: cron's names and letters, which a canonical expression may contain (docs/schedules.md).
_CRON_WORDS = frozenset(("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT",
                         "NOV", "DEC", "SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT", "L",
                         "W", "LW"))
_CRON_FIELD = re.compile(r"[\d*?/,-]+")
_INTERVAL = re.compile(r"(?:\d+d)?(?:\d+h)?(?:\d+m)?(?:\d+s)?|[\d.,+-]+", re.IGNORECASE)
_TIME_LIKE = re.compile(r"\d{1,2}\s*(?:h\d{0,2}|[ap]\.?m\.?|:\d{2})(?![a-z])", re.IGNORECASE)
_TOKEN = re.compile(r"\d{1,9}:\d{1,2}(?::\d{1,2})?|\d{1,9}|[a-z]+|[,&@-]")


class PhraseError(InvalidSchedule):
    """A phrase could not be read.

    Attributes:
        word: the word (as written, accents kept) that was not understood or is impossible.
        suggestion: the phrase with a misspelt word corrected, when the nearest words all give
            one reading (:meth:`_Reader.misspelling`); else None - never a guess between
            meanings.
    """

    def __init__(self, message: str, word: str, suggestion: str | None = None) -> None:
        super().__init__(message)
        self.word = word
        self.suggestion = suggestion


@dataclass(frozen=True)
class Phrase:
    """A phrase read: the canonical schedule string and the language that read it."""

    canonical: str
    language: str


@dataclass
class _Token:
    text: str  # normalised
    word: str  # the whitespace-separated word of the input it comes from


@dataclass
class _Reading:
    periods: list[tuple[int, str, str]] = field(default_factory=list)  # (n, unit, word)
    times: list[tuple[int, int, int, str]] = field(default_factory=list)  # (h, m, s, word)
    minutes_past: list[int] = field(default_factory=list)
    dows: set[int] = field(default_factory=set)
    nth: set[tuple[int, int]] = field(default_factory=set)  # (dow, k), k = -1: last
    doms: set[int] = field(default_factory=set)
    last_dom: bool = False
    months: set[int] = field(default_factory=set)
    #: the time window (between … and …): start and end as (h, m, s, word)
    window: tuple[tuple[int, int, int, str], tuple[int, int, int, str]] | None = None
    said_or: bool = False
    #: whether an "and" joins a day of the month and a weekday ("the 1st and every monday"),
    #: rather than the two being side by side ("friday the 13th": days that are both)
    days_joined: bool = False
    #: days ("D") and times ("T") in the order the phrase gives them, consecutive ones of a
    #: kind together: (kind, what was added, the first word)
    segments: list[tuple[str, frozenset[Any], str]] = field(default_factory=list)
    said_past: bool = False
    dow_word: str = ""
    #: long units said with "every" ("every day", "of every month", "daily"): unit -> word
    every_units: dict[str, str] = field(default_factory=dict)
    month_word: str = ""


def normalise(text: str) -> str:
    """Lower case, accents removed (NFKD, combining marks dropped), ``a.m.`` as ``am``."""
    decomposed = unicodedata.normalize("NFKD", text)
    plain = "".join(ch for ch in decomposed if not unicodedata.combining(ch)).lower()
    plain = plain.replace("\u2019", "'").replace("'", " ")
    return re.sub(r"\b([ap])\.\s?m\b\.?", r"\1m", plain)


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
        if len(word) >= 2 and any(word in v.words or _in_term(word, v) for v in LANGUAGES):
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
    vocab, tokens = _tokenise(stripped)
    reading = _Reader(vocab, tokens, stripped).read()
    return Phrase(_build(reading, stripped, vocab.language), vocab.language)


def _reads(text: str) -> bool:
    """Whether ``text`` reads (without looking for suggestions of its own)."""
    try:
        vocab, tokens = _tokenise(text)
        _build(_Reader(vocab, tokens, text, suggest=False).read(), text, vocab.language,
               suggest=False)
    except InvalidSchedule:
        return False
    return True


def _reading(text: str) -> str:
    """The canonical form ``text`` reads as (it reads)."""
    vocab, tokens = _tokenise(text)
    return _build(_Reader(vocab, tokens, text, suggest=False).read(), text, vocab.language,
                  suggest=False)


def _in_term(word: str, vocab: Vocabulary) -> bool:
    return any(word in term for term in vocab.terms)


def _tokenise(text: str) -> tuple[Vocabulary, list[_Token]]:
    raw: list[_Token] = []
    if text.endswith(".") and not text.endswith(".."):
        text = text[:-1]  # a full stop ends a sentence; any other '.' must be read
    for word in text.split():
        norm = normalise(word)
        pieces = _TOKEN.findall(norm)
        leftover = _TOKEN.sub("", norm).strip()
        if leftover:
            raise PhraseError(f"could not read the schedule at {word!r}: the character "
                              f"{leftover[0]!r} is not understood", word)
        raw += [_Token(piece, word) for piece in pieces]
    if not raw:
        raise PhraseError("schedule is empty", text)
    best = max(LANGUAGES, key=lambda v: sum(_known(t.text, v) for t in raw))
    return best, _join_terms(raw, best)


def _known(word: str, vocab: Vocabulary) -> bool:
    return word in vocab.words or _in_term(word, vocab) or word[0].isdigit()


def _join_terms(tokens: list[_Token], vocab: Vocabulary) -> list[_Token]:
    out: list[_Token] = []
    i = 0
    while i < len(tokens):
        for term, joined in sorted(vocab.terms.items(), key=lambda item: -len(item[0])):
            n = len(term)
            if tuple(t.text for t in tokens[i:i + n]) == term:
                out.append(_Token(joined, " ".join(dict.fromkeys(t.word for t in tokens[i:i + n]))))
                i += n
                break
        else:
            out.append(tokens[i])
            i += 1
    return out


class _Reader:
    """Reads tokens left to right into a :class:`_Reading`; every token must be consumed."""

    def __init__(self, vocab: Vocabulary, tokens: list[_Token], text: str,
                 suggest: bool = True) -> None:
        self.text = text
        self.suggest = suggest
        self.vocab = vocab
        self.tokens = tokens
        self.i = 0
        self.r = _Reading()
        self.day_items: list[tuple[str, frozenset[Any]]] = []  # every day word read, in order

    # -- token helpers --------------------------------------------------------------------
    def kind(self, offset: int = 0) -> str | None:
        j = self.i + offset
        if not 0 <= j < len(self.tokens):
            return None
        text = self.tokens[j].text
        if text[0].isdigit():
            return "clocktime" if ":" in text else "digits"
        entry = self.vocab.words.get(text)
        return entry[0] if entry else "unknown"

    def value(self, offset: int = 0) -> Any:
        text = self.tokens[self.i + offset].text
        if text[0].isdigit():
            return int(text) if ":" not in text else text
        return self.vocab.words[text][1]

    def word(self, offset: int = 0) -> str:
        j = min(self.i + offset, len(self.tokens) - 1)
        return self.tokens[j].word

    def is_number(self, offset: int = 0) -> bool:
        return self.kind(offset) in ("digits", "number")

    def previous(self) -> str | None:
        return self.kind(-1) if self.i > 0 else None

    def fail(self, message: str, offset: int = 0, suggestion: str | None = None) -> PhraseError:
        word = self.word(offset)
        hint = f"; did you mean {suggestion!r}?" if suggestion else ""
        return PhraseError(f"could not read the schedule at {word!r}: {message}{hint}", word,
                           suggestion)

    # -- the reading ----------------------------------------------------------------------
    def read(self) -> _Reading:
        ands: list[int] = []  # how many day words were read before each "and"
        while self.i < len(self.tokens):
            before = self.days_and_times()
            word = self.word()
            if self.kind() == "and":
                ands.append(len(self.day_items))
            start = self.i
            try:
                self.step()
            except PhraseError:
                self.blame_unknown(start)
                raise
            self.note_segment(before, word)
        sides = [{"dom": "dom", "last": "dom", "dow": "dow", "nth": "dow"}.get(kind)
                 for kind, _ in self.day_items]
        self.r.days_joined = any(0 < a < len(sides) and {sides[a - 1], sides[a]} == {"dom", "dow"}
                                 for a in ands)
        return self.r

    def days_and_times(self) -> tuple[int, int]:
        return len(self.day_items), len(self.r.times)

    def note_segment(self, before: tuple[int, int], word: str) -> None:
        """Days and times are kept in the order given, so that "at 9am on mondays and 5pm on
        fridays" is seen as two groups (one schedule cannot hold them)."""
        days = frozenset(self.day_items[before[0]:])
        times = frozenset((h, m, s) for h, m, s, _ in self.r.times[before[1]:])
        for kind, new in (("D", days), ("T", times)):
            if new:
                segments = self.r.segments
                if kind == "T" and segments and segments[-1][0] == "T" \
                        and new & segments[-1][1] or len(times) < self.days_and_times()[1] \
                        - before[1]:
                    said = self.r.times[-1][3]
                    raise PhraseError(f"could not read the schedule at {said!r}: this time is "
                                      "said twice", said)
                if segments and segments[-1][0] == kind:
                    segments[-1] = (kind, segments[-1][1] | new, segments[-1][2])
                else:
                    segments.append((kind, new, word))

    def step(self) -> None:  # noqa: C901 - one branch per kind of word, kept side by side
        kind = self.kind()
        if kind in ("digits", "number", "clocktime"):
            self.number()
        elif kind == "clock":
            h, m = self.value()
            self.r.times.append((h, m, 0, self.word()))
            self.i += 1
        elif kind == "unit":
            self.unit()
        elif kind == "every_unit":
            self.r.periods.append((1, self.value(), self.word()))
            self.said_every(self.value(), self.word())
            self.i += 1
        elif kind == "single":  # "every single day": "every", said with weight
            if self.previous() != "every":
                raise self.fail("'single' is read after 'every' only ('every single day')")
            self.i += 1
        elif kind == "part_of_day":
            raise self.fail("a part of the day is not a time the reader can place: give the "
                            "time ('every day at 9am', 'tous les jours à 19h')")
        elif kind == "dow":
            self.weekdays()
        elif kind == "days":
            self.no_adjacent_days()
            self.r.dows |= self.value()
            self.day_items.append(("dow", frozenset(self.value())))
            self.r.dow_word = self.word()
            self.i += 1
        elif kind == "month":
            self.months()
        elif kind == "ordinal":
            self.ordinal(self.value())
        elif kind == "between":
            self.between()
        elif kind == "or":
            self.attached()
            self.r.said_or = True
            self.i += 1
        elif kind == "other":
            self.other()
        elif kind == "sur":
            self.sur()
        elif kind in ("and", "at", "the", "every", "filler"):
            self.attached()
            self.i += 1
        elif kind == "past" and self.r.minutes_past:
            self.i += 1
        else:
            self.unknown()

    def attached(self) -> None:
        """A word that only links others must have one to link: "every day at" and "at 9am
        and" are refused, not read as if the word were not there."""
        kind, nxt = self.kind(), self.kind(1)
        if nxt is None or kind in ("and", "or") and self.i == 0:
            raise self.fail("this word needs something after it" if nxt is None
                            else "this word needs something before it")
        if kind == "at" and nxt not in ("digits", "number", "clocktime", "clock", "unit",
                                        "the"):
            raise self.fail("'at' needs a time after it (9am, 17:30, noon)")
        if kind == "every" and self.vocab.language == "en" and nxt in (
                "the", "and", "or", "at", "every", "filler"):
            raise self.fail("'every' needs a period, a weekday or a number after it")

    def other(self) -> None:
        """``every other day``, ``every other tuesday``, ``every other week``: a period of 2."""
        if self.previous() != "every":
            raise self.fail("'other' is read after 'every' only ('every other day')")
        word = " ".join(t.word for t in self.tokens[self.i - 1:self.i + 2])
        self.i += 1
        if self.kind() == "unit" and self.value() in ("day", "week", "month", "year", "hour",
                                                      "minute", "second"):
            self.r.periods.append((2, self.value(), word))
            self.i += 1
        elif self.kind() == "dow":
            self.r.periods.append((2, "week", word))
            self.r.dows.add(self.value())
            self.day_items.append(("dow", frozenset({self.value()})))
            self.r.dow_word = self.word()
            self.i += 1
        else:
            raise self.fail("'every other' needs a period or a weekday after it ('every other "
                            "day', 'every other tuesday')", -1)

    def sur(self) -> None:
        """French ``un jour sur deux``, ``un mardi sur trois``: a period of N of the unit."""
        periods = self.r.periods
        if not periods or periods[-1][0] != 1 or not self.is_number(1):
            raise self.fail("'sur' se lit après 'un jour', 'un lundi' … et avant un nombre "
                            "('un jour sur deux')")
        n = self.value(1)
        if n < 2:
            raise self.fail(f"a period of {n} is impossible here: it must be at least 2", 1)
        _, unit, word = periods[-1]
        periods[-1] = (n, unit, f"{word} {self.word()} {self.word(1)}")
        self.i += 2

    def blame_unknown(self, start: int) -> None:
        """A word that needs another after it ("last", "at", "every 5") failed because the
        next word is not understood ("the last fridya", "at noom", "every 5 minuts"): the
        misspelt word is blamed, with its correction when it has one reading."""
        for j in range(start, min(start + 3, len(self.tokens))):
            if self.tokens[j].text[0].isalpha() and self.tokens[j].text not in self.vocab.words:
                self.i = j
                self.unknown()

    def unknown(self) -> None:
        text = self.tokens[self.i].text
        kind = self.kind()
        if kind in ("ampm", "hour_mark", "suffix", "past", "range"):
            raise self.fail("this word needs a number or a time in front of it")
        vocabulary = [w for w in self.vocab.words if len(w) > 1 and "_" not in w]
        vocabulary += [" ".join(term) for term in self.vocab.terms]
        suggestion = None
        if self.suggest:
            suggestion = self.misspelling(text, vocabulary)
        raise self.fail("this word is not understood", suggestion=suggestion)

    def misspelling(self, text: str, vocabulary: list[str]) -> str | None:
        """The phrase with ``text`` corrected, when it is a misspelling of one word: the
        nearest words (fewest edits) whose phrases read must all read the same schedule -
        "onday" is "monday", but a word as near to two readings is not guessed."""
        near = [w for w in difflib.get_close_matches(text, vocabulary, n=10, cutoff=0.6)
                if _is_typo(text, w)]
        if not near:
            return None
        fewest = min(_edits(text, w) for w in near)
        readings: dict[str, str] = {}
        for close in (w for w in near if _edits(text, w) == fewest):
            candidate = self.corrected(close)
            if _reads(candidate):
                readings.setdefault(_reading(candidate), candidate)
        return next(iter(readings.values())) if len(readings) == 1 else None

    def corrected(self, replacement: str) -> str:
        """The whole phrase with the word not understood replaced."""
        word = re.escape(self.word())
        return re.sub(rf"(?<!\S){word}(?!\S)", lambda _: replacement, self.text, count=1)

    def number(self) -> None:
        """A number: a time, an ordinal day, a period, minutes past the hour, a date; read by
        the word after it first (``9am``, ``2nd``, ``5 minutes``, ``3 march``), else by the
        word before it (``the 15``, ``at 9``)."""
        nxt, prev = self.kind(1), self.previous()
        if self.kind() == "clocktime" or nxt == "ampm" \
                or nxt == "hour_mark" and prev not in ("every", "the"):
            self.clock_time()
        elif not self.number_by_next(self.value(), nxt):
            self.number_by_previous(self.value(), prev)

    def number_by_next(self, n: int, nxt: str | None) -> bool:
        """Read the number ``n`` by the word after it; False when that word does not say."""
        if n == 1 and nxt == "dow" and self.kind(2) == "sur":  # "un lundi sur deux"
            self.i += 1
            word = self.word()
            self.weekdays()
            self.r.periods.append((1, "week", word))
        elif nxt == "suffix":
            every = self.after_every()  # "every 2nd day", "tous les 2e mardis"
            self.i += 2
            self.ordinals(n, every, offset=-2)
        elif nxt == "unit" and self.is_past_after() and not self.after_every():
            self.minutes_after()
        elif nxt in ("unit", "every_unit"):
            self.period(n)
        elif nxt == "hour_mark":  # "every 2h", "toutes les 2h": a period of hours
            self.period(n, unit="hour")
        elif nxt == "and" and self.number_list_then_past():
            self.minutes_after()
        elif nxt == "month":
            self.day_of_month(n)
            self.i += 1
            self.months()
        else:
            return False
        return True

    def number_by_previous(self, n: int, prev: str | None) -> None:
        """Read the number ``n`` by the word before it: a day of the month or a time."""
        if prev == "month" or (prev in ("the", "and") and not self.r.times) \
                or self.after_day_word():
            self.day_of_month(n)
            self.i += 1
        elif prev in ("at", "and", "between", "range"):
            self.clock_time()
        else:
            raise self.fail("a number here should be a time (9am, 17:30), a day (the 15th) "
                            "or a period (every 5 minutes)")

    def after_day_word(self) -> bool:
        """Whether this number continues ``day 1, 15 and 20 (of the month)``."""
        j = self.i - 1
        while j >= 0 and (self.tokens[j].text[0].isdigit()
                          or self.vocab.words.get(self.tokens[j].text, ("",))[0] == "and"):
            j -= 1
        return j >= 0 and self.vocab.words.get(self.tokens[j].text) == ("unit", "day") \
            and self.tokens[j + 1].text[0].isdigit()

    def is_past_after(self) -> bool:
        return self.value(1) == "minute" and self.kind(2) == "past"

    def number_list_then_past(self) -> bool:
        j = self.i
        while self.kind(j - self.i) in ("digits", "number", "and"):
            j += 1
        offset = j - self.i
        return self.kind(offset) == "unit" and self.value(offset) == "minute" \
            and self.kind(offset + 1) == "past"

    def minutes_after(self) -> None:
        """``15 minutes past``, ``0 and 30 minutes past the hour``, ``15 minutes apres``."""
        while True:
            n = self.value()
            if not 0 <= n <= 59:
                raise self.fail(f"minute {n} does not exist (0-59)")
            self.r.minutes_past.append(n)
            self.i += 1
            while self.kind() == "and":
                self.i += 1
            if not self.is_number():
                break
        self.i += 2  # "minutes past"
        self.r.said_past = True
        if self.kind() in ("the", "every") and self.kind(1) == "unit" and self.value(1) == "hour":
            self.i += 2

    def unit(self) -> None:
        value, nxt = self.value(), self.kind(1)
        if value == "second" and self.tokens[self.i].text == "second" and (
                not self.after_every() or self.kind(1) in ("dow", "and", "or")
                or nxt == "unit" and self.value(1) == "day"):
            # "second" is the unit only as a period ("every second"): "the second of every
            # month", "the second and fourth tuesday", "on the second" are ordinals
            self.ordinal(2)
            return
        if value == "second" and not self.after_every() and self.previous() == "the":
            raise self.fail(f"{self.word()!r} here is neither a period ('every second', "
                            "'toutes les secondes') nor a day ('the 2nd', 'le 2'); say which")
        if value == "minute" and self.is_number(1):  # "at minute 15", "a la minute 15"
            self.i += 1
            n = self.value()
            if not 0 <= n <= 59:
                raise self.fail(f"minute {n} does not exist (0-59)")
            self.r.minutes_past.append(n)
            self.i += 1
            return
        if value == "day" and self.is_number(1):  # "day 1 and 15 of the month"
            self.i += 1
            return
        if self.previous() not in ("every", "the", "filler", "single", None):
            raise self.fail(f"{self.word()!r} needs 'every' or 'of' before it ('every "
                            f"{value}', 'of the {value}')")
        if self.after_every():
            self.said_every(value, self.word())
        self.r.periods.append((1, value, self.word()))
        self.i += 1

    def after_every(self) -> bool:
        """Whether the word here follows "every" ("every day", "tous les jours", "of every
        month"), articles between."""
        j = self.i - 1
        while j >= 0 and self.vocab.words.get(self.tokens[j].text, ("",))[0] in ("the",
                                                                                 "single"):
            j -= 1
        return j >= 0 and self.vocab.words.get(self.tokens[j].text, ("",))[0] == "every"

    def said_every(self, unit: str, word: str) -> None:
        """A long period said with "every": two of them cannot both hold ("every day at 9am
        yearly"), nor one twice ("monthly monthly")."""
        if unit in _SUB_DAY:
            return
        if self.r.every_units:
            (other, said), = list(self.r.every_units.items())[:1]
            raise self.fail(f"{said!r} and {word!r} are two periods; one schedule has one"
                            if other != unit else f"{word!r} is said twice")
        self.r.every_units[unit] = word

    def period(self, n: int, unit: str | None = None) -> None:
        word = self.word()
        unit = unit or self.value(1)
        if n < 1:
            singular = {"second": "second", "minute": "minute", "hour": "hour"}.get(unit, unit)
            raise self.fail(f"a period of {n} is impossible: it must be at least 1 (every "
                            f"{singular}, every 2 {singular}s …)")
        self.r.periods.append((n, unit, word))
        self.i += 2

    def clock_time(self) -> None:
        """``9am``, ``9:30 pm``, ``17:30``, ``9h``, ``9h30``, ``17 h 30``, ``at 9``."""
        begin = self.i
        hour, minute, second = self.clock_digits()
        if self.i - begin == 2 and self.is_number() and self.kind(1) == "unit" \
                and self.value(1) in ("minute", "second"):
            both = " ".join(dict.fromkeys(t.word for t in self.tokens[begin:self.i + 2]))
            raise PhraseError(f"could not read the schedule at {both!r}: a duration is written "
                              f"in one piece ('{both.replace(' ', '')}', every so long) and a "
                              "time of day with 'at' ('at 1:30')", both)
        meridiem = self.value() if self.kind() == "ampm" else None
        self.i += meridiem is not None
        word = " ".join(dict.fromkeys(t.word for t in self.tokens[begin:self.i]))
        self.r.times.append((*_time_of_day(hour, minute, second, meridiem, word), word))

    def clock_digits(self) -> tuple[int, int, int]:
        """``(hour, minute, second)`` as written (``17:30``, ``9h30``, ``17 h 30 minutes``,
        ``9``), before any am/pm; the reader moves past them."""
        text = self.tokens[self.i].text
        if ":" in text:
            self.i += 1
            parts = [int(p) for p in text.split(":")]
            return parts[0], parts[1], parts[2] if len(parts) > 2 else 0
        hour, minute = self.value(), 0
        self.i += 1
        if self.kind() == "hour_mark":
            self.i += 1
            if self.is_number() and self.kind(1) not in ("unit", "suffix"):
                minute = self.value()
                self.i += 1
                if self.kind() == "unit" and self.value() == "minute":
                    self.i += 1
        return hour, minute, 0

    def day_of_month(self, n: int, offset: int = 0) -> None:
        if not 1 <= n <= 31:
            raise self.fail(f"day {n} of the month does not exist (1-31)", offset)
        self.r.doms.add(n)
        self.day_items.append(("dom", frozenset({n})))

    def every_nth(self, k: int, offset: int) -> None:
        """``every 2nd day``, ``every third day``: a period of k days. ``every 2nd tuesday``
        could be every other Tuesday or the 2nd Tuesday of each month: refused unless "of
        the month" follows (then it is the 2nd Tuesday of each month)."""
        j = 1
        while self.kind(j) in ("filler", "the", "every") and j < 4:
            j += 1
        of_month = self.kind(j) == "unit" and self.value(j) == "month"
        kind = self.kind()
        unit = self.value() if kind == "unit" else None
        first = self.i + offset - 1  # the "every"
        nth = _ordinal_en(k)
        if unit in ("day", "week") and not of_month:
            word = " ".join(dict.fromkeys(t.word for t in self.tokens[first:self.i + 1]))
            self.r.periods.append((k, unit, word))
            self.i += 1
        elif kind == "dow" and of_month:
            self.nth_weekdays([k], offset)
        elif kind == "dow" or unit == "day":
            what = self.word()
            other = (f"every {k} weeks on {what}", f"the {nth} {what} of every month") \
                if kind == "dow" else (f"every {k} days", f"the {nth} of every month")
            raise self.fail(f"'every {nth} {what}' could mean {other[0]!r} or "
                            f"{other[1]!r}; say which")
        else:
            raise self.fail("'every' and an ordinal need 'day', 'week' or a weekday after them",
                            offset)

    def ordinal(self, k: int) -> None:
        every = self.after_every()  # "every", and French "tous les" (the same rule)
        self.i += 1
        self.ordinals(k, every, offset=-1)

    def is_ordinal(self, offset: int = 0) -> bool:
        """Whether an ordinal starts here: ``first``, ``last``, English ``second``, ``4th``,
        ``3e``."""
        kind = self.kind(offset)
        return kind == "ordinal" or kind == "digits" and self.kind(offset + 1) == "suffix" \
            or self.vocab.language == "en" and kind == "unit" \
            and self.tokens[self.i + offset].text == "second"

    def more_ordinals(self) -> list[int]:
        """The ordinals joined to one just read: ``the 2nd and 4th``, ``le 1er ou le 3e``,
        ``the first or last``, ``the second and fourth`` (consumed)."""
        found: list[int] = []
        while self.kind() in ("and", "or"):
            j = 2 if self.kind(1) == "the" else 1
            if not self.is_ordinal(j):
                break
            self.i += j
            kind = self.kind()
            if kind == "digits":
                found.append(self.value())
                self.i += 2
            else:
                found.append(2 if kind == "unit" else self.value())
                self.i += 1
        return found

    def ordinals(self, k: int, every: bool, offset: int) -> None:
        """What one or more ordinals (the first read, ``self.i`` just after it) are ordinals
        of: every ordinal applies to every weekday that follows (``the last monday and
        friday``: ``1L,5L``; ``the 2nd or 4th tuesday``: ``2#2,2#4``), to ``day`` (days of
        the month), or, alone, they are days of the month (``the second of every month``)."""
        start = self.i
        ks = [k, *self.more_ordinals()]
        if every and k != -1 and len(ks) == 1:
            self.every_nth(k, offset=offset)
            return
        offset -= self.i - start
        kind = self.kind()
        if every and len(ks) > 1 and not (kind == "dow" and self.of_month_after_days()):
            raise self.fail("'every' and several ordinals: say 'the 2nd and 4th tuesday of "
                            "the month'", offset)
        if kind == "dow":
            self.nth_weekdays(ks, offset)
        elif kind == "days":
            raise self.fail(f"{self.word()!r} after an ordinal would be the first (or last) "
                            "working day of the month, which is not read: name the weekday "
                            "('the first monday of the month')")
        elif kind == "unit" and self.value() == "day":
            self.i += 1
            for n in ks:
                if n == -1:
                    self.r.last_dom = True
                    self.day_items.append(("last", frozenset()))
                else:
                    self.day_of_month(n, -1)
        elif -1 in ks:
            raise self.fail("'last' needs a weekday or 'day' after it", offset)
        else:  # "the first of the month", "le premier de chaque mois", "on the second"
            for n in ks:
                self.day_of_month(n, offset)

    def of_month_after_days(self) -> bool:
        j = 0
        while self.kind(j) in ("dow", "and", "or", "range"):
            j += 1
        while self.kind(j) in ("filler", "the", "every") and j < 12:
            j += 1
        return self.kind(j) == "unit" and self.value(j) == "month"

    def nth_weekdays(self, ks: list[int], offset: int) -> None:
        """The weekdays after ordinals, each of them: ``monday``, ``monday and friday``,
        ``monday to friday``."""
        for k in ks:
            if k != -1 and not 1 <= k <= 5:
                raise self.fail(f"a month has no weekday number {k} (1-5, or last)", offset)
        days = self.weekday_set()
        while self.kind() in ("and", "or") and self.kind(1) == "dow":
            self.i += 1
            days |= self.weekday_set()
        nth = {(day, k) for day in days for k in ks}
        self.r.nth |= nth
        self.day_items.append(("nth", frozenset(nth)))

    def weekdays(self) -> None:
        self.no_adjacent_days()
        days = self.weekday_set()
        self.r.dows |= days
        self.day_items.append(("dow", frozenset(days)))

    def no_adjacent_days(self) -> None:
        """Two weekday words are a list only when 'and', ',' or 'or' joins them: "weekday
        friday" and "every weekday on saturday" are refused, not read as their union."""
        if not self.r.dows:
            return
        j = self.i - 1
        while j >= 0 and self.vocab.words.get(self.tokens[j].text, ("",))[0] not in (
                "dow", "days"):
            if self.vocab.words.get(self.tokens[j].text, ("",))[0] in ("and", "or"):
                return
            j -= 1
        if j >= 0:
            raise self.fail("two day words need 'and', ',' or 'or' between them")

    def weekday_set(self) -> set[int]:
        """One weekday or a range of them (``monday through friday``, ``du lundi au
        vendredi``, ``mon-fri``; ranges may wrap: ``friday to monday``)."""
        start = self.value()
        self.r.dow_word = self.word()
        self.i += 1
        if not (self.kind() in ("range", "at", "between") and self.kind(1) == "dow"):
            return {start}
        end = self.value(1)
        self.i += 2
        read, day = {start}, start
        while day != end:
            day = (day + 1) % 7
            read.add(day)
        return read

    def months(self) -> None:
        if self.previous() not in (None, "filler", "the", "digits", "number", "range", "and",
                                   "at", "between", "suffix", "every") \
                and not self.is_number(1):
            raise self.fail("a month here needs 'in' before it or a day after it ('in "
                            "March', 'March 3')")
        start = self.value()
        self.r.month_word = self.r.month_word or self.word()
        self.i += 1
        if self.kind() in ("range", "at") and self.kind(1) == "month":
            end = self.value(1)
            self.i += 2
            if end < start:
                raise self.fail("a range of months may not wrap past December", -1)
            self.r.months |= set(range(start, end + 1))
            self.day_items.append(("month", frozenset(range(start, end + 1))))
        else:
            self.r.months.add(start)
            self.day_items.append(("month", frozenset({start})))
        if self.is_number() and self.kind(1) not in ("ampm", "hour_mark", "unit"):
            n = self.value()  # "March 3", "March 3rd"
            self.day_of_month(n)
            self.i += 2 if self.kind(1) == "suffix" else 1

    def between(self) -> None:
        """``between 9am and 5pm``, ``from 9:00 to 17:00``, ``entre 9h et 17h``: a window of
        the day, both ends included (:mod:`core.schedule.windows`)."""
        if not (self.is_number(1) or self.kind(1) in ("clocktime", "clock")):
            self.i += 1  # French "de", "des": a filler when no time follows
            return
        self.i += 1
        before = len(self.r.times)
        self.time_or_clock()
        if self.kind() not in ("and", "range", "at"):
            raise self.fail("expected 'and' or 'to' and the end of the time window")
        self.i += 1
        self.time_or_clock()
        start, end = self.r.times[before:]
        del self.r.times[before:]
        if self.r.window is not None:
            raise self.fail("a schedule has one time window", -1)
        if end[:3] < start[:3]:
            raise self.fail("the time window ends before it starts", -1)
        self.r.window = (start, end)

    def time_or_clock(self) -> None:
        if self.kind() == "clock":
            h, m = self.value()
            self.r.times.append((h, m, 0, self.word()))
            self.i += 1
        elif self.is_number() or self.kind() == "clocktime":
            self.clock_time()
        else:
            raise self.fail("expected a time such as 9am, 17:30 or 9h")


Period = tuple[int, str]  # (n, unit): "every 15 minutes" is (15, "minute")


def _ambiguous(message: str, word: str, suggestion: str | None = None) -> PhraseError:
    hint = f"; did you mean {suggestion!r}?" if suggestion else ""
    return PhraseError(f"could not read the schedule at {word!r}: {message}{hint}", word,
                       suggestion)


def _build(r: _Reading, text: str, language: str = "en", suggest: bool = True) -> str:
    """The canonical schedule string of a reading: an anchored calendar period (``every 3
    days``), an interval (a period of several units, or one that does not divide its cycle),
    a stepped period (``every 15 minutes``), minutes past the hour, or times of day, each with
    the days they hold on (:func:`_day_fields`).

    Raises:
        PhraseError: the reading cannot be one schedule (naming the word at fault).
    """
    _check_groups(r)
    _check_frames(r)
    # a fortnight is two weeks
    r.periods = [(2 * n, "week", w) if u == "fortnight" else (n, u, w) for n, u, w in r.periods]
    periods = {(n, unit) for n, unit, _ in r.periods}
    words = {(n, unit): w for n, unit, w in r.periods}
    sub_day = sorted((p for p in periods if p[1] in _SUB_DAY), key=lambda p: -_UNIT_SECONDS[p[1]])
    calendar = _calendar_periods(r, periods)
    if calendar:
        return _day_period(r, calendar, sub_day, words, language)
    if len(sub_day) > 1:
        return _compound_period(r, sub_day, words)
    if sub_day:
        return _sub_day_period(r, sub_day[0], periods, words)
    if r.minutes_past:
        return _minutes_past(r, periods, words)
    return _times_of_day(r, periods, words)


def _calendar_periods(r: _Reading, periods: set[Period]) -> list[Period]:
    """The periods of several days or weeks, and "every week" when no weekday or day of the
    month is given: those are anchored calendar periods (:func:`_day_period`)."""
    weekday_given = bool(r.dows or r.nth or r.doms or r.last_dom)
    return [p for p in periods if p[1] in ("day", "week") and (
        p[0] > 1 or p[1] == "week" and not weekday_given)]


def _days_given(r: _Reading) -> bool:
    return bool(r.dows or r.nth or r.doms or r.last_dom or r.months)


def _compound_period(r: _Reading, sub_day: list[Period], words: dict[Period, str]) -> str:
    """``every 1 hour 30 minutes``: an interval of their sum, alone."""
    if _days_given(r) or r.times or r.window or r.minutes_past:
        raise _ambiguous("a period of several units cannot be combined with days or times",
                         words[sub_day[0]])
    return "@every " + _duration(sum(n * _UNIT_SECONDS[u] for n, u in sub_day))


def _sub_day_period(r: _Reading, period: Period, periods: set[Period],
                    words: dict[Period, str]) -> str:
    """One period of seconds, minutes or hours (``every 15 minutes``, ``every 2 hours``):
    a step of its cron field, an interval when it does not divide its cycle, within the
    window and on the days given."""
    n, unit = period
    word = words[period]
    if r.times:
        raise _ambiguous(f"'every {n} {unit}{'s' if n > 1 else ''}' and a time of day "
                         f"({r.times[0][3]!r}) cannot "
                         "both hold; use 'between ... and ...' for a window", r.times[0][3])
    cycle = 24 if unit == "hour" else 60
    if n > 1 and cycle % n:
        if _days_given(r) or r.window or r.minutes_past:
            raise _ambiguous(f"every {n} {unit}s does not divide the {_cycle_name(unit)}, "
                             "so it can only be an interval, which cannot be limited to days "
                             "or hours", word)
        return "@every " + _duration(n * _UNIT_SECONDS[unit])
    if r.minutes_past and unit != "hour":
        raise _ambiguous(f"'every {n} {unit}s' and 'minutes past the hour' cannot both hold",
                         word)
    if unit == "hour" and n > 1 and r.window is None:
        return _every_n_hours(r, n, periods, words)
    if r.window is not None:
        fields = _windowed(r, unit, n)
    else:
        step = "*" if n == 1 else f"*/{n}"
        fields = {"second": [step, "*", "*"], "minute": [step, "*"],
                  "hour": [_list(sorted(set(r.minutes_past or [0]))), step]}[unit]
    return " ".join([*fields, *_day_fields(r, periods, words)])


def _every_n_hours(r: _Reading, n: int, periods: set[Period], words: dict[Period, str]) -> str:
    """``every N hours`` (N dividing the day) without a window."""
    if not (_days_given(r) or r.minutes_past):
        # elapsed time, as systemd's OnUnitActiveSec= and Cloud Scheduler's "every N
        # hours": exactly N hours apart across DST changes, anchored like intervals
        return f"@every {n}h"
    # limited to days (or at minutes past): those wall-clock times of those days,
    # fixed times (DST as for "at 9am"): 0-22/2 starts with a digit
    fields = [_list(sorted(set(r.minutes_past or [0]))), f"0-{24 - n}/{n}"]
    return " ".join([*fields, *_day_fields(r, periods, words)])


def _minutes_past(r: _Reading, periods: set[Period], words: dict[Period, str]) -> str:
    """``at 15 minutes past the hour``: every hour (of the window) at those minutes."""
    if r.times:
        raise _ambiguous("minutes past the hour and a time of day cannot both hold",
                         r.times[0][3])
    fields = [_list(sorted(set(r.minutes_past))), "*"] if r.window is None \
        else _windowed(r, None, 1)
    return " ".join([*fields, *_day_fields(r, periods, words)])


def _times_of_day(r: _Reading, periods: set[Period], words: dict[Period, str]) -> str:
    """``at 7am and 7pm``: the times (midnight when none), which one cron expression holds
    only when they share their minutes or their hour."""
    if r.window is not None:
        raise _ambiguous("a time window needs a period inside it, such as 'every 15 minutes'",
                         r.window[0][3])
    times = sorted({(h, m, s) for h, m, s, _ in r.times}) or [(0, 0, 0)]
    seconds = {s for _, _, s in times}
    minutes = {m for _, m, _ in times}
    hours = {h for h, _, _ in times}
    if len(seconds) > 1 or (len(minutes) > 1 and len(hours) > 1):
        shown = ", ".join(f"{h:02d}:{m:02d}" for h, m, _ in times)
        raise _ambiguous(f"one cron expression cannot hold the times {shown}: they must share "
                         "their minutes (7:00 and 19:00) or their hour (9:00 and 9:30)",
                         r.times[-1][3])
    fields = [_list(sorted(minutes)), _list(sorted(hours))]
    if seconds != {0}:
        fields.insert(0, str(next(iter(seconds))))
    return " ".join([*fields, *_day_fields(r, periods, words)])


def _check_frames(r: _Reading) -> None:
    """A period said with "every" and the days given must agree: "every day" is every day
    (not "every day and every monday"), "every year" needs a month for its day, "every
    month" names no month and needs to say which of its weekdays."""
    days = r.dows or r.nth or r.doms or r.last_dom
    every = r.every_units
    if "day" in every and days:
        raise _ambiguous(f"{every['day']!r} and the days given cannot both hold: every day is "
                         "every day; name only the days ('every monday', 'on the 1st')",
                         every["day"])
    if "year" in every and days and not r.months:
        raise _ambiguous(f"{every['year']!r} needs the month of its day ('every year on March "
                         "3', 'every year on the first monday of march')", every["year"])
    if "month" in every and r.months:
        raise _ambiguous(f"{every['month']!r} and the month {r.month_word!r} cannot both hold",
                         r.month_word)
    if "month" in every and r.dows and not (r.nth or r.doms or r.last_dom):
        raise _ambiguous(f"{every['month']!r} and {r.dow_word!r}: which one of the month? "
                         f"('the first {r.dow_word} of every month', 'every {r.dow_word}')",
                         r.dow_word)


def _check_groups(r: _Reading) -> None:
    """Days and times given in several groups ("at 9am on mondays and 5pm on fridays") hold
    in one schedule only when every group has the same times or the same days."""
    segments = r.segments
    if len(segments) <= 2:
        return
    if len(segments) % 2:
        kind, _, word = segments[-1]
        what = "days" if kind == "T" else "times"
        raise _ambiguous(f"it is not clear which {what} {word!r} belongs with; give the days and "
                         "the times once each ('at 9am and 5pm on mondays and fridays')", word)
    groups = [(segments[i][1], segments[i + 1][1]) for i in range(0, len(segments), 2)]
    if all(g == groups[0] for g in groups):
        return
    if len({g[0] for g in groups}) == 1 or len({g[1] for g in groups}) == 1:
        return  # the same times on several day groups, or several times on the same days
    word = segments[2][2]
    raise _ambiguous("different times on different days: one schedule cannot hold them; make "
                     "one job or monitor for each", word)


def _day_period(r: _Reading, calendar: list[Period], sub_day: list[Period],
                words: dict[Period, str], language: str) -> str:
    """``every 3 days at 9am``, ``every other tuesday``: an anchored calendar period
    (:mod:`core.schedule.days`), ``@every <N>d [on <day>] at HH:MM[,…]``."""
    n, unit = calendar[0]
    _check_day_period(r, calendar, sub_day, words)
    days = n * (7 if unit == "week" else 1)
    if language == "fr" and unit == "day" and n in (8, 15):
        days = n - 1  # "tous les quinze jours" is every two weeks, "huit jours" one week
    if days > 366:
        raise _ambiguous(f"every {n} {unit}s is longer than the longest period, 366 days",
                         words[(n, unit)])
    on = _period_weekday(r, n, unit)
    times = sorted({(h, m, s) for h, m, s, _ in r.times}) or [(0, 0, 0)]
    shown = ",".join(f"{h:02d}:{m:02d}" + (f":{s:02d}" if s else "") for h, m, s in times)
    return f"@every {days}d{on} at {shown}"


def _check_day_period(r: _Reading, calendar: list[Period], sub_day: list[Period],
                      words: dict[Period, str]) -> None:
    """A calendar period stands alone: no other period, no minutes past the hour, no time
    window, no day of the month or month; "every week" needs its weekday."""
    n, unit = calendar[0]
    word = words[(n, unit)]
    if unit == "week" and n == 1:
        raise _ambiguous("a week has no first day everyone agrees on (Sunday for cron, Monday "
                         "for systemd): say which day ('every monday', 'every sunday')", word)
    others = [p for p in words if p != (n, unit)]
    what = f"every {n} {unit}s"
    if len(calendar) > 1 or sub_day or others or r.minutes_past or r.window:
        raise _ambiguous(f"{what} is a period of whole days and cannot be combined with "
                         "another period, minutes past the hour or a time window", word)
    if r.doms or r.last_dom or r.nth or r.months:
        raise _ambiguous(f"{what} fires whatever the date, and cannot be "
                         "limited to days of the month or months", word)


def _period_weekday(r: _Reading, n: int, unit: str) -> str:
    """`` on <day>`` of a period of weeks given one weekday (``""``: none given)."""
    if not r.dows:
        return ""
    if unit != "week" or len(r.dows) > 1:
        raise _ambiguous(f"every {n} {unit}{'s' if n > 1 else ''} and "
                         f"{'these weekdays' if unit == 'week' else 'a weekday'} cannot "
                         "both hold: a weekday goes with a period of weeks, one weekday at "
                         "a time ('every 2 weeks on monday')", r.dow_word)
    return " on " + ("sun", "mon", "tue", "wed", "thu", "fri", "sat")[next(iter(r.dows))]


def _windowed(r: _Reading, unit: str | None, n: int) -> list[str]:
    assert r.window is not None
    (h1, m1, s1, w1), (h2, m2, s2, w2) = r.window
    try:
        fields = window_fields(unit, n, sorted(set(r.minutes_past)), (h1, m1, s1),
                               (h2, m2, s2))
    except WindowError as exc:
        raise _ambiguous(str(exc), w1 if exc.start is not None else w2) from None
    return ([fields.seconds] if fields.seconds is not None else []) + [fields.minutes,
                                                                        fields.hours]


def _day_fields(r: _Reading, periods: set[Period], words: dict[Period, str]) -> list[str]:
    """The day-of-month, month and day-of-week fields of the days a reading gives, in the
    frame of its period of a month or a year (``every 3 months on the 1st``), if any."""
    unit, n = _frame(r, periods, words)
    dom_items = ([_list(sorted(r.doms))] if r.doms else []) + (["L"] if r.last_dom else [])
    dow_items = [_list(sorted(r.dows))] if r.dows else []
    dow_items += [f"{d}L" if k == -1 else f"{d}#{k}" for d, k in sorted(r.nth)]
    month_items = _framed_months(unit, n, [_list(sorted(r.months))] if r.months else [], words)
    if unit in ("month", "year") and not (dom_items or dow_items):
        dom_items = ["1"]
    if dom_items and dow_items and not r.said_or:
        raise _both_days(r)
    return [",".join(dom_items) or "*", ",".join(month_items) or "*",
            ",".join(dow_items) or "*"]


def _frame(r: _Reading, periods: set[Period], words: dict[Period, str]) -> tuple[str, int]:
    """``(unit, n)`` of the period of days or longer that frames the days given (``("", 1)``:
    none). Two of them hold only as one in the other, each once: "every day of the month",
    "the last day of every month" (the longer unit frames days of the month, weekdays or
    months; the shorter one frames none)."""
    long: dict[str, int] = {}
    for n, unit in sorted(periods):  # "day 1 of the month, every 2 months": the larger n wins
        if unit not in _SUB_DAY:
            long[unit] = n
    if len(long) > 1:
        units = sorted(long, key=lambda u: list(_UNIT_SECONDS).index(u)
                       if u in _UNIT_SECONDS else 9)
        if set(long) == {"day", "month"} and long["day"] == 1 and long["month"] == 1:
            long = {"month": 1} if (r.doms or r.last_dom or r.nth) else {"day": 1}
        elif set(long) in ({"week", "day"}, {"day", "year"}, {"week", "month"},
                           {"month", "year"}) and all(v == 1 for v in long.values()):
            long = {units[-1]: 1} if (r.doms or r.last_dom or r.nth or r.months) \
                else {units[0]: 1}
        else:
            first = next(iter(long))
            raise _ambiguous("two different periods cannot both hold", words[(long[first], first)])
    (unit, n), = long.items() if long else [("", 1)]
    return unit, n


def _framed_months(unit: str, n: int, month_items: list[str], words: dict[Period, str]
                   ) -> list[str]:
    """The month field's items in the frame ``(unit, n)``: a step for every N months, January
    for a year without a named month. Periods of days and weeks are calendar periods
    (:func:`_day_period`): "every week" comes here only with its days; named months alone
    ("in March") are every day of those months."""
    if unit == "month" and n > 1:
        return [_month_step(n, month_items, words[(n, "month")])]
    if unit == "year" and n > 1:
        raise _ambiguous(f"every {n} years cannot be written in cron", words[(n, "year")])
    if unit == "year" and not month_items:
        return ["1"]
    return month_items


def _month_step(n: int, month_items: list[str], word: str) -> str:
    """The month field of ``every N months``: ``*/N``, N dividing the year, no month named."""
    if month_items:
        raise _ambiguous(f"every {n} months cannot be combined with named months", word)
    if n > 12:
        raise _ambiguous(f"every {n} months is longer than a year", word)
    if 12 % n:
        months = ", ".join(str(m) for m in range(1, 13, n))
        raise _ambiguous(f"every {n} months does not divide the year: cron's month step "
                         f"restarts each January (months {months}, then 1 again), so "
                         "the months would not be that far apart", word)
    return f"*/{n}"


def _both_days(r: _Reading) -> PhraseError:
    """Days of the month and weekdays given together without 'or'."""
    if r.days_joined:  # "the 1st and every monday": both sets of days, which 'or' says
        return _ambiguous("a day of the month and a weekday together fire on either (cron's "
                          "OR rule); say 'or' if that is what you mean", r.dow_word)
    # "friday the 13th": days that are both, which 'or' would not say
    return _ambiguous(f"{r.dow_word!r} and a day of the month side by side would be the days "
                      "that are both, which one schedule cannot hold (cron fires on a day of "
                      "the month or a weekday, never only on days that are both)", r.dow_word)


def _time_of_day(hour: int, minute: int, second: int, meridiem: str | None, word: str
                 ) -> tuple[int, int, int]:
    """``(hour, minute, second)`` on the 24-hour clock of a time written ``word``, with
    ``meridiem`` (``am`` | ``pm``) when said.

    Raises:
        PhraseError: an hour, minute or second that does not exist.
    """
    def impossible(message: str) -> PhraseError:
        return PhraseError(f"could not read the schedule at {word!r}: {message}", word)

    if meridiem is not None:
        if not 1 <= hour <= 12:
            raise impossible(f"hour {hour} does not exist on a 12-hour clock (1-12)")
        hour = hour % 12 + (12 if meridiem == "pm" else 0)
    if hour > 23:
        raise impossible(f"hour {hour} does not exist (0-23)")
    if minute > 59:
        raise impossible(f"minute {minute} does not exist (0-59)")
    if second > 59:
        raise impossible(f"second {second} does not exist (0-59)")
    return hour, minute, second


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


def _list(values: list[int]) -> str:
    """``[1, 2, 3, 4, 5]`` as ``1-5``: runs of three or more become ranges, as people write."""
    items: list[str] = []
    run: list[int] = []
    for v in [*values, None]:
        if v is not None and run and v == run[-1] + 1:
            run.append(v)
            continue
        if run:
            items += [f"{run[0]}-{run[-1]}"] if len(run) >= 3 else [str(x) for x in run]
        run = [] if v is None else [v]
    return ",".join(items)


def _ordinal_en(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _cycle_name(unit: str) -> str:
    return "day" if unit == "hour" else ("hour" if unit == "minute" else "minute")


def _duration(seconds: int) -> str:
    parts = []
    for suffix, size in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        if seconds >= size:
            parts.append(f"{seconds // size}{suffix}")
            seconds %= size
    return "".join(parts)

