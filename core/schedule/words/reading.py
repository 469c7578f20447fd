"""The typed state of a phrase being read (:mod:`core.schedule.words`): its tokens, what the
reader found in them (:class:`Reading`), and the error that names the word at fault."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from core.schedule.model import InvalidSchedule

#: the units a period may have below a month, in seconds (their order is the frames' order)
UNIT_SECONDS = {"second": 1, "minute": 60, "hour": 3600, "day": 86400, "week": 7 * 86400}
SUB_DAY = ("second", "minute", "hour")

Period = tuple[int, str]  # (n, unit): "every 15 minutes" is (15, "minute")


class PhraseError(InvalidSchedule):
    """A phrase could not be read.

    Attributes:
        word: the word (as written, accents kept) that was not understood or is impossible.
        suggestion: the phrase with a misspelt word corrected, when the nearest words all give
            one reading (:func:`core.schedule.words.spelling.correction`); else None - never
            a guess between meanings.
    """

    def __init__(self, message: str, word: str, suggestion: str | None = None) -> None:
        super().__init__(message)
        self.word = word
        self.suggestion = suggestion


@dataclass
class Token:
    """One token of a phrase: a number, a word or a sign, normalised, or a joined term."""

    text: str  # normalised
    word: str  # the whitespace-separated word of the input it comes from


@dataclass
class Reading:
    """What a phrase says, as the reader found it: periods, times, days, a time window, and
    the words that said them (for the messages)."""

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


def ambiguous(message: str, word: str, suggestion: str | None = None) -> PhraseError:
    hint = f"; did you mean {suggestion!r}?" if suggestion else ""
    return PhraseError(f"could not read the schedule at {word!r}: {message}{hint}", word,
                       suggestion)
