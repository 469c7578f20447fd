"""Reading the times of day of a phrase (:mod:`core.schedule.words`): ``9am``, ``17:30``,
``9h30``, ``noon``, and a window of the day (``between 9am and 5pm``)."""

from __future__ import annotations

from core.schedule.words.dates import DateReader
from core.schedule.words.reading import PhraseError


class TimeReader(DateReader):
    """The times of day of a phrase, read into the
    :class:`~core.schedule.words.reading.Reading`'s ``times`` and ``window``."""

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
