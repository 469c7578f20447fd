"""A phrase's words as tokens (:mod:`core.schedule.words`): normalised, split into numbers,
words and signs, several-word terms joined, in the language that knows most of them."""

from __future__ import annotations

import re
import unicodedata

from core.schedule.vocab import LANGUAGES, Vocabulary
from core.schedule.words.reading import PhraseError, Token

_TOKEN = re.compile(r"\d{1,9}:\d{1,2}(?::\d{1,2})?|\d{1,9}|[a-z]+|[,&@-]")


def normalise(text: str) -> str:
    """Lower case, accents removed (NFKD, combining marks dropped), ``a.m.`` as ``am``."""
    decomposed = unicodedata.normalize("NFKD", text)
    plain = "".join(ch for ch in decomposed if not unicodedata.combining(ch)).lower()
    plain = plain.replace("\u2019", "'").replace("'", " ")
    return re.sub(r"\b([ap])\.\s?m\b\.?", r"\1m", plain)


def in_term(word: str, vocab: Vocabulary) -> bool:
    """Whether ``word`` is one of the words of a several-word term of ``vocab``."""
    return any(word in term for term in vocab.terms)


def tokenise(text: str) -> tuple[Vocabulary, list[Token]]:
    """The vocabulary that knows most of ``text``'s tokens (English on a tie) and the tokens,
    its several-word terms joined.

    Raises:
        PhraseError: a character that no token has, or no token at all.
    """
    raw: list[Token] = []
    if text.endswith(".") and not text.endswith(".."):
        text = text[:-1]  # a full stop ends a sentence; any other '.' must be read
    for word in text.split():
        norm = normalise(word)
        pieces = _TOKEN.findall(norm)
        leftover = _TOKEN.sub("", norm).strip()
        if leftover:
            raise PhraseError(f"could not read the schedule at {word!r}: the character "
                              f"{leftover[0]!r} is not understood", word)
        raw += [Token(piece, word) for piece in pieces]
    if not raw:
        raise PhraseError("schedule is empty", text)
    best = max(LANGUAGES, key=lambda v: sum(_known(t.text, v) for t in raw))
    return best, _join_terms(raw, best)


def _known(word: str, vocab: Vocabulary) -> bool:
    return word in vocab.words or in_term(word, vocab) or word[0].isdigit()


def _join_terms(tokens: list[Token], vocab: Vocabulary) -> list[Token]:
    out: list[Token] = []
    i = 0
    while i < len(tokens):
        for term, joined in sorted(vocab.terms.items(), key=lambda item: -len(item[0])):
            n = len(term)
            if tuple(t.text for t in tokens[i:i + n]) == term:
                out.append(Token(joined, " ".join(dict.fromkeys(t.word for t in tokens[i:i + n]))))
                i += n
                break
        else:
            out.append(tokens[i])
            i += 1
    return out
