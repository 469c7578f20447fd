"""The phrase reader (:mod:`core.schedule.words`): tokens, left to right, into a
:class:`~core.schedule.words.reading.Reading` - periods, times of day, minutes past the hour,
a time window (:mod:`core.schedule.words.times`) and the days
(:mod:`core.schedule.words.dates`). Every token must be consumed."""

from __future__ import annotations

from core.schedule.vocab import Vocabulary
from core.schedule.words.reading import SUB_DAY, PhraseError, Reading, Token
from core.schedule.words.spelling import Canonical, correction
from core.schedule.words.times import TimeReader


class Reader(TimeReader):
    """Reads a phrase's tokens into a :class:`Reading` (:meth:`read`).

    Args:
        vocab: the vocabulary that reads the phrase.
        tokens: its tokens (:func:`core.schedule.words.tokens.tokenise`).
        text: the phrase as written, for the corrections of misspelt words.
        canonical: reads a corrected phrase (:data:`~core.schedule.words.spelling.Canonical`);
            None: a word not understood is refused without looking for a correction.
    """

    def __init__(self, vocab: Vocabulary, tokens: list[Token], text: str,
                 canonical: Canonical | None = None) -> None:
        super().__init__(vocab, tokens)
        self.text = text
        self.canonical = canonical

    def read(self) -> Reading:
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
        suggestion = None
        if self.canonical is not None:
            suggestion = correction(self.text, self.word(), text, self.vocab, self.canonical)
        raise self.fail("this word is not understood", suggestion=suggestion)

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

    def said_every(self, unit: str, word: str) -> None:
        """A long period said with "every": two of them cannot both hold ("every day at 9am
        yearly"), nor one twice ("monthly monthly")."""
        if unit in SUB_DAY:
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
