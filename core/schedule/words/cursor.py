"""The reader's place in a phrase's tokens (:mod:`core.schedule.words`): what kind of word is
here, its value, the word as written, and the error naming it."""

from __future__ import annotations

from typing import Any

from core.schedule.vocab import Vocabulary
from core.schedule.words.reading import PhraseError, Reading, Token


class Cursor:
    """Tokens, the index of the one being read, and the :class:`Reading` filled so far."""

    def __init__(self, vocab: Vocabulary, tokens: list[Token]) -> None:
        self.vocab = vocab
        self.tokens = tokens
        self.i = 0
        self.r = Reading()
        self.day_items: list[tuple[str, frozenset[Any]]] = []  # every day word read, in order

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

    def after_every(self) -> bool:
        """Whether the word here follows "every" ("every day", "tous les jours", "of every
        month"), articles between."""
        j = self.i - 1
        while j >= 0 and self.vocab.words.get(self.tokens[j].text, ("",))[0] in ("the",
                                                                                 "single"):
            j -= 1
        return j >= 0 and self.vocab.words.get(self.tokens[j].text, ("",))[0] == "every"
