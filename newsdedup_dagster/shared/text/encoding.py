"""The encoding of feed bytes, chosen here rather than by feedparser: declared labels mapped to
the decoders browsers use, strict decoding, a detector, then a per-language default."""

from __future__ import annotations

import codecs
import re

import charset_normalizer

# Labels mapped to the superset decoder browsers use (WHATWG Encoding
# Standard): servers that say gb2312/shift_jis/euc-kr/iso-8859-1 nearly
# always serve the Windows superset.
_SUPERSET = {
    "gb2312": "gb18030", "gbk": "gb18030", "x-gbk": "gb18030", "cp936": "gb18030", "euc-cn": "gb18030",
    "shift_jis": "cp932", "shift-jis": "cp932", "sjis": "cp932", "x-sjis": "cp932", "ms_kanji": "cp932",
    "windows-31j": "cp932",
    "euc-kr": "cp949", "ks_c_5601-1987": "cp949", "ksc5601": "cp949", "windows-949": "cp949",
    "big5": "big5hkscs", "x-big5": "big5hkscs",
    "iso-8859-1": "cp1252", "latin1": "cp1252", "latin-1": "cp1252", "us-ascii": "cp1252", "ascii": "cp1252",
    "iso-8859-9": "cp1254", "iso-8859-11": "cp874", "tis-620": "cp874",
}
_MULTIBYTE = frozenset({"cp932", "euc_jp", "cp949", "gb18030", "big5hkscs", "utf-16", "utf-32", "johab",
                        "iso2022_jp", "iso2022_kr", "hz", "utf_8"})
# Legacy encoding most used for each language, the tie-breaker when nothing
# is declared (same idea as a browser's locale default).
_LEGACY_BY_LANGUAGE = {
    "ja": "cp932", "ko": "cp949", "zh": "gb18030", "ru": "cp1251", "uk": "cp1251", "bg": "cp1251",
    "sr": "cp1251", "mk": "cp1251", "be": "cp1251", "pl": "cp1250", "cs": "cp1250", "sk": "cp1250",
    "hu": "cp1250", "sl": "cp1250", "hr": "cp1250", "ro": "cp1250", "el": "cp1253", "tr": "cp1254",
    "he": "cp1255", "ar": "cp1256", "fa": "cp1256", "th": "cp874", "vi": "cp1258", "lt": "cp1257",
    "lv": "cp1257", "et": "cp1257",
}
_XML_DECL_RE = re.compile(rb"^\s*<\?xml[^>]*?encoding\s*=\s*[\"']([A-Za-z0-9._:-]+)[\"']", re.IGNORECASE)
_XML_DECL_ENCODING_TEXT_RE = re.compile(r"^(\s*<\?xml[^>]*?encoding\s*=\s*)([\"'])[^\"']*\2", re.IGNORECASE)
_META_CHARSET_RE = re.compile(rb"<meta[^>]+charset\s*=\s*[\"']?([A-Za-z0-9._:-]+)", re.IGNORECASE)


def _codec_name(label: str | bytes | None) -> str | None:
    """Normalised Python codec name for a declared label, None if unknown."""
    if not label:
        return None
    if isinstance(label, bytes):
        label = label.decode("ascii", errors="replace")
    label = label.strip().strip("\"'").lower()
    label = _SUPERSET.get(label, label)
    try:
        return codecs.lookup(label).name
    except LookupError:
        return None


def _charset_from_content_type(content_type: str | None) -> str | None:
    if not content_type:
        return None
    match = re.search(r"charset\s*=\s*[\"']?([^\s;\"']+)", content_type, re.IGNORECASE)
    return match.group(1) if match else None


def _strict(body: bytes, codec: str) -> str | None:
    try:
        return body.decode(codec)
    except (UnicodeDecodeError, LookupError):
        return None


def _detector_guess(body: bytes) -> str | None:
    best = charset_normalizer.from_bytes(body[:200_000]).best()
    return _codec_name(best.encoding) if best is not None else None


def decode_feed_bytes(body: bytes, content_type: str | None = None, language_hint: str | None = None
                      ) -> tuple[str, str, str | None]:
    """Choose the encoding of a feed and decode it. Returns (text, codec, note).

    Order, and why:
    1. a byte-order mark is unambiguous;
    2. valid UTF-8 with non-ASCII bytes is UTF-8 whatever is declared (other
       encodings' text is practically never valid UTF-8), except a declared
       7-bit ISO-2022 encoding whose escapes are plain ASCII;
    3. a declared multi-byte encoding (XML declaration first, since the CMS
       that wrote the bytes wrote it; then the HTTP charset) that decodes
       without error;
    4. a declared single-byte encoding decodes almost anything, so it is
       kept unless the detector finds a multi-byte encoding that decodes
       cleanly (EUC-KR or GBK served as "ISO-8859-1");
    5. nothing usable declared: detector's multi-byte guess, else the
       source language's legacy encoding (Windows-1252 for Western
       languages), else the detector's guess, else Windows-1252 with
       replacement characters.
    """
    for bom, codec in ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
                       (codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"),
                       (codecs.BOM_UTF16_BE, "utf-16")):
        if body.startswith(bom):
            return body.decode(codec, errors="replace"), codec.replace("-sig", ""), "byte-order mark"
    xml_match = _XML_DECL_RE.match(body[:1024])
    meta_match = None if xml_match else _META_CHARSET_RE.search(body[:4096])
    declared = [c for c in (_codec_name(xml_match.group(1)) if xml_match else None,
                            _codec_name(_charset_from_content_type(content_type)),
                            _codec_name(meta_match.group(1)) if meta_match else None) if c]
    declared = list(dict.fromkeys(declared))
    for codec in declared:
        if codec.startswith("iso2022") or codec in ("hz", "utf-7"):
            text = _strict(body, codec)
            if text is not None:
                return text, codec, None
    text = _strict(body, "utf-8")
    if text is not None:
        note = None if not declared or declared[0] == "utf-8" or body.isascii() else \
            f"declared {declared[0]} but the bytes are valid UTF-8"
        return text, "utf-8", note
    for codec in declared:
        if codec in _MULTIBYTE:
            text = _strict(body, codec)
            if text is not None:
                return text, codec, None if codec == declared[0] else f"first declared {declared[0]} did not decode"
    single_byte = [codec for codec in declared if codec not in _MULTIBYTE and codec != "utf-8"]
    guess = _detector_guess(body)
    if guess in _MULTIBYTE and guess != "utf_8":
        text = _strict(body, guess)
        if text is not None:
            why = f"declared {'/'.join(declared)} did not fit" if declared else "undeclared"
            return text, guess, f"{why}; detected {guess}"
    for codec in single_byte:
        text = _strict(body, codec)
        if text is not None:
            return text, codec, None
    # Languages without an entry use Windows-1252, the WHATWG default for
    # Western locales (a byte-frequency detector confuses 1250 and 1252).
    legacy = _LEGACY_BY_LANGUAGE.get(language_hint, "cp1252") if language_hint else None
    if legacy:
        text = _strict(body, legacy)
        if text is not None:
            return text, legacy, f"undeclared; legacy encoding of source language {language_hint!r}"
    if guess:
        text = _strict(body, guess)
        if text is not None:
            return text, guess, f"undeclared; detected {guess}"
    fallback = single_byte[0] if single_byte else "cp1252"
    return body.decode(fallback, errors="replace"), fallback, f"no encoding fits; decoded as {fallback} with replacements"


def as_utf8_document(text: str) -> bytes:
    """UTF-8 bytes whose XML declaration (if any) says utf-8, so feedparser
    sees one consistent encoding."""
    text = _XML_DECL_ENCODING_TEXT_RE.sub(lambda m: f"{m.group(1)}{m.group(2)}utf-8{m.group(2)}", text, count=1)
    return text.encode("utf-8")
