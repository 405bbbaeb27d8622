"""The audit language of a drafted folder: given, or detected from the corpus with a reason.

``auto`` runs `ragdiag.language.detect_language` over the corpus text. When it cannot name
a language (too few words, mixed, unknown), init says why and falls back to English
explicitly: the warning is printed and written into the folder's README, never silent.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

LANGUAGES = ("en", "de")
CHOICES = (*LANGUAGES, "auto")
FALLBACK = "en"


def choose_language(requested: str, texts: Iterable[str], warn: Callable[[str], None]) -> tuple[str, str]:
    """(language code, a sentence saying how it was chosen)."""
    from ragdiag.language import detect_language

    if requested in LANGUAGES:
        return requested, f"{requested}: given with --language {requested}"
    if requested != "auto":
        from ragdiag.errors import ConfigError

        raise ConfigError(f"--language must be one of {', '.join(CHOICES)}, got {requested!r}")
    guess = detect_language(texts)
    if guess.code in LANGUAGES:
        return guess.code, f"{guess.code}: detected from the corpus ({guess.reason})"
    why = guess.reason if guess.code is None else f"detected {guess.code!r}, which ragdiag cannot analyse"
    note = (f"{FALLBACK}: the corpus language could not be detected ({why}); falling back to "
            f"{FALLBACK}. Pass --language en or --language de to choose it.")
    warn(f"warning: {note}")
    return FALLBACK, note
