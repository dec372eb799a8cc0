"""What every prompt to a model shares: the delimiters around quoted articles and language names."""

from __future__ import annotations

# Articles reach a model as data between these lines, never as instructions (see each prompt).
ARTICLES_OPEN = "<<<ARTICLES"
ARTICLES_CLOSE = "ARTICLES>>>"

_LANG_NAMES = {
    "en": "English", "zh": "Chinese (Simplified)", "ja": "Japanese", "ko": "Korean", "fr": "French",
    "de": "German", "es": "Spanish", "pt": "Portuguese", "ru": "Russian", "ar": "Arabic", "hi": "Hindi",
    "it": "Italian", "id": "Indonesian", "vi": "Vietnamese", "th": "Thai", "tr": "Turkish", "uk": "Ukrainian",
    "pl": "Polish", "nl": "Dutch",
}


def language_name(code: str) -> str:
    """A language's English name for a prompt (the code itself when unknown)."""
    return _LANG_NAMES.get(code, code)
