"""Vocabularies of the schedule phrase reader (:mod:`core.schedule.words`): English and French.

Each vocabulary maps a *normalised* word (lower case, accents removed: ``"ouvrés"`` is
``"ouvres"``, ``"à"`` is ``"a"``) to a ``(kind, value)`` pair; the reader only ever looks at
kinds, so one grammar serves both languages. Several-word terms (``"jours ouvres"``) are listed
in :data:`Vocabulary.terms` and joined into one token with ``_`` before reading. Which
vocabulary reads a phrase is decided by which knows more of its words (docs/schedules.md,
*Schedules in words*).

Kinds:

* ``unit`` (``"second" | "minute" | "hour" | "day" | "week" | "month" | "year"``), with
  ``every`` words in front (``every``, ``toutes les``) it is a period; ``every_unit`` is a
  word that is already a period (``daily``, ``hourly``);
* ``dow`` 0-6 (0 = Sunday, as in cron), ``days`` a set of weekdays (``weekdays``, ``weekend``);
* ``month`` 1-12; ``ordinal`` 1-5 or -1 (last); ``suffix`` the ``st``/``er`` of ``1st``/``1er``;
* ``number`` a number spelled out; ``ampm`` ``"am" | "pm"``; ``clock`` a named time
  ``(hour, minute)``; ``hour_mark`` the ``h`` of ``9h30``;
* ``other`` (``every other day``: a period of 2), ``sur`` (``un jour sur deux``: of N);
* ``past`` (``past``, ``apres``), ``range`` (``through``, ``au``), ``between``, ``and``, ``or``,
  ``at`` (a following bare number is an hour), ``the`` (a following bare number is a day of
  the month), ``every``, ``filler`` (read and ignored: ``on``, ``of``, ``du``);
* ``single`` (``every single day``: read after ``every`` only), ``part_of_day``
  (``morning``, ``soir``: known, so that they are refused as what they are - not times - and
  never "corrected" into a word of another meaning).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

WEEKDAYS = frozenset({1, 2, 3, 4, 5})
WEEKEND = frozenset({0, 6})


@dataclass(frozen=True)
class Vocabulary:
    """One language: its words and its several-word terms (tuples of normalised words)."""

    language: str
    words: dict[str, tuple[str, Any]]
    terms: dict[tuple[str, ...], str] = field(default_factory=dict)


def _plural(names: dict[str, Any], kind: str, suffix: str = "s") -> dict[str, tuple[str, Any]]:
    out: dict[str, tuple[str, Any]] = {}
    for name, value in names.items():
        out[name] = (kind, value)
        out[name + suffix] = (kind, value)
    return out


_EN_UNITS = {"second": "second", "sec": "second", "minute": "minute", "min": "minute",
             "hour": "hour", "hr": "hour", "day": "day", "week": "week", "month": "month",
             "year": "year", "fortnight": "fortnight"}
_EN_DAYS = {"sunday": 0, "monday": 1, "tuesday": 2, "wednesday": 3, "thursday": 4, "friday": 5,
            "saturday": 6, "sun": 0, "mon": 1, "tue": 2, "tues": 2, "wed": 3, "thu": 4,
            "thur": 4, "thurs": 4, "fri": 5, "sat": 6}
_EN_MONTHS = {"january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6,
              "july": 7, "august": 8, "september": 9, "october": 10, "november": 11,
              "december": 12, "jan": 1, "feb": 2, "mar": 3, "apr": 4, "jun": 6, "jul": 7,
              "aug": 8, "sep": 9, "sept": 9, "oct": 10, "nov": 11, "dec": 12}
_EN_NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
               "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "fifteen": 15,
               "twenty": 20, "thirty": 30}

ENGLISH = Vocabulary(
    language="en",
    words={
        **_plural(_EN_UNITS, "unit"),
        "s": ("unit", "second"), "m": ("unit", "minute"), "mins": ("unit", "minute"),
        "hrs": ("unit", "hour"), "d": ("unit", "day"),
        "secondly": ("every_unit", "second"), "minutely": ("every_unit", "minute"),
        "hourly": ("every_unit", "hour"), "daily": ("every_unit", "day"),
        "nightly": ("every_unit", "day"), "everyday": ("every_unit", "day"),
        "weekly": ("every_unit", "week"), "monthly": ("every_unit", "month"),
        "fortnightly": ("every_unit", "fortnight"),
        "yearly": ("every_unit", "year"), "annually": ("every_unit", "year"),
        **_plural(_EN_DAYS, "dow"),
        "weekday": ("days", WEEKDAYS), "weekdays": ("days", WEEKDAYS),
        "workday": ("days", WEEKDAYS), "workdays": ("days", WEEKDAYS),
        "weekend": ("days", WEEKEND), "weekends": ("days", WEEKEND),
        "business_days": ("days", WEEKDAYS), "working_days": ("days", WEEKDAYS),
        **{name: ("month", value) for name, value in _EN_MONTHS.items()},
        "first": ("ordinal", 1), "third": ("ordinal", 3), "fourth": ("ordinal", 4),
        "fifth": ("ordinal", 5), "last": ("ordinal", -1), "final": ("ordinal", -1),
        # "second" is a unit; followed by a weekday or "day" it is read as the ordinal
        "st": ("suffix", None), "nd": ("suffix", None), "rd": ("suffix", None),
        "th": ("suffix", None),
        **{name: ("number", value) for name, value in _EN_NUMBERS.items()},
        "am": ("ampm", "am"), "pm": ("ampm", "pm"),
        "noon": ("clock", (12, 0)), "midday": ("clock", (12, 0)),
        "midnight": ("clock", (0, 0)),
        "h": ("hour_mark", None), "oclock": ("hour_mark", None),
        "past": ("past", None), "after": ("past", None),
        "through": ("range", None), "thru": ("range", None), "to": ("range", None),
        "until": ("range", None), "till": ("range", None), "-": ("range", None),
        "between": ("between", None), "from": ("between", None),
        "and": ("and", None), ",": ("and", None), "&": ("and", None), "plus": ("and", None),
        "or": ("or", None),
        "at": ("at", None), "@": ("at", None),
        "the": ("the", None), "on": ("the", None),
        "every": ("every", None), "each": ("every", None), "all": ("every", None),
        "of": ("filler", None), "in": ("filler", None), "only": ("filler", None),
        "a": ("filler", None), "per": ("every", None), "other": ("other", None),
        "alternate": ("other", None), "single": ("single", None),
        **{w: ("part_of_day", None) for w in ("morning", "mornings", "evening", "evenings",
                                              "afternoon", "afternoons", "night", "nights",
                                              "tonight", "dawn", "dusk")},
    },
    terms={("business", "days"): "business_days", ("business", "day"): "business_days",
           ("working", "days"): "working_days", ("work", "days"): "working_days",
           ("week", "end"): "weekend", ("week", "ends"): "weekends", ("o", "clock"): "oclock",
           ("week", "-", "end"): "weekend", ("week", "-", "ends"): "weekends",
           ("every", "day"): "everyday"},
)

_FR_UNITS = {"seconde": "second", "sec": "second", "minute": "minute", "min": "minute",
             "heure": "hour", "jour": "day", "semaine": "week", "an": "year",
             "annee": "year"}
_FR_DAYS = {"dimanche": 0, "lundi": 1, "mardi": 2, "mercredi": 3, "jeudi": 4, "vendredi": 5,
            "samedi": 6, "dim": 0, "lun": 1, "mar": 2, "mer": 3, "jeu": 4, "ven": 5,
            "sam": 6}
_FR_MONTHS = {"janvier": 1, "fevrier": 2, "mars": 3, "avril": 4, "mai": 5, "juin": 6,
              "juillet": 7, "aout": 8, "septembre": 9, "octobre": 10, "novembre": 11,
              "decembre": 12, "janv": 1, "fevr": 2, "fev": 2, "avr": 4, "juil": 7,
              "sept": 9, "oct": 10, "nov": 11, "dec": 12}
_FR_NUMBERS = {"un": 1, "une": 1, "deux": 2, "trois": 3, "quatre": 4, "cinq": 5, "six": 6,
               "sept": 7, "huit": 8, "neuf": 9, "dix": 10, "onze": 11, "douze": 12,
               "quinze": 15, "vingt": 20, "trente": 30}

FRENCH = Vocabulary(
    language="fr",
    words={
        **_plural(_FR_UNITS, "unit"),
        "mois": ("unit", "month"), "s": ("unit", "second"), "m": ("unit", "minute"),
        "mn": ("unit", "minute"), "j": ("unit", "day"),
        "quotidien": ("every_unit", "day"), "quotidiennement": ("every_unit", "day"),
        "hebdomadaire": ("every_unit", "week"), "mensuel": ("every_unit", "month"),
        "mensuellement": ("every_unit", "month"), "annuel": ("every_unit", "year"),
        "annuellement": ("every_unit", "year"), "horaire": ("every_unit", "hour"),
        **_plural(_FR_DAYS, "dow"),
        "jours_ouvres": ("days", WEEKDAYS), "jours_ouvrables": ("days", WEEKDAYS),
        "en_semaine": ("days", WEEKDAYS), "weekend": ("days", WEEKEND),
        "weekends": ("days", WEEKEND), "fin_de_semaine": ("days", WEEKEND),
        **{name: ("month", value) for name, value in _FR_MONTHS.items()
           if name not in ("sept",)},
        "premier": ("ordinal", 1), "premiere": ("ordinal", 1), "deuxieme": ("ordinal", 2),
        "second": ("ordinal", 2), "troisieme": ("ordinal", 3),
        "quatrieme": ("ordinal", 4), "cinquieme": ("ordinal", 5), "dernier": ("ordinal", -1),
        "derniere": ("ordinal", -1),
        "er": ("suffix", None), "re": ("suffix", None), "e": ("suffix", None),
        "eme": ("suffix", None), "ieme": ("suffix", None), "ere": ("suffix", None),
        **{name: ("number", value) for name, value in _FR_NUMBERS.items()},
        "midi": ("clock", (12, 0)), "minuit": ("clock", (0, 0)),
        "h": ("hour_mark", None),
        "apres": ("past", None),
        "au": ("range", None), "jusqu": ("range", None), "-": ("range", None),
        "entre": ("between", None), "de": ("between", None), "des": ("between", None),
        "et": ("and", None), ",": ("and", None), "&": ("and", None), "ou": ("or", None),
        "a": ("at", None), "vers": ("at", None), "@": ("at", None),
        "le": ("the", None), "les": ("the", None), "la": ("the", None), "l": ("the", None),
        "chaque": ("every", None), "tous": ("every", None), "toutes": ("every", None),
        "tout": ("every", None), "toute": ("every", None), "par": ("every", None),
        "du": ("filler", None), "d": ("filler", None), "en": ("filler", None),
        "seulement": ("filler", None), "uniquement": ("filler", None),
        "sur": ("sur", None),
        **{w: ("part_of_day", None) for w in ("matin", "matins", "soir", "soirs", "soiree",
                                              "soirees", "nuit", "nuits", "matinee",
                                              "matinees", "apres_midi")},
    },
    terms={("jours", "ouvres"): "jours_ouvres", ("jour", "ouvre"): "jours_ouvres",
           ("jours", "ouvrables"): "jours_ouvrables", ("jour", "ouvrable"): "jours_ouvrables",
           ("en", "semaine"): "en_semaine", ("week", "end"): "weekend",
           ("week", "-", "end"): "weekend", ("week", "-", "ends"): "weekends",
           ("week", "ends"): "weekends", ("fin", "de", "semaine"): "fin_de_semaine",
           ("fins", "de", "semaine"): "fin_de_semaine",
           ("apres", "-", "midi"): "apres_midi", ("apres", "midi"): "apres_midi"},
)

LANGUAGES = (ENGLISH, FRENCH)
