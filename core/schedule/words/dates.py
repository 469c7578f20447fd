"""Reading the days of a phrase (:mod:`core.schedule.words`): days of the month, ordinals
(``the 2nd and 4th tuesday``, ``the last day``), weekdays and their ranges, months."""

from __future__ import annotations

from core.schedule.words.cursor import Cursor


class DateReader(Cursor):
    """The day words of a phrase, read into the :class:`~core.schedule.words.reading.Reading`
    (its ``doms``, ``last_dom``, ``nth``, ``dows``, ``months``) and ``day_items``."""

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


def _ordinal_en(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"
