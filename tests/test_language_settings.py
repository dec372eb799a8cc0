"""The language settings name files and directories (feeds and site pages per language, digest
files): NEWSDEDUP_PUBLISH_LANGS, _TRANSLATION_LANGS, _DIGEST_LANGS (and the pivot and narrative
languages) are refused when the settings load unless each value is a language code, with the
loader's message; hypothesis: any text is either language codes or that one error."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings, strategies as st

from newsdedup_dagster import config
from newsdedup_dagster.shared.settings import merged

LOADERS = {
    "NEWSDEDUP_PUBLISH_LANGS": (config.publish_settings, "langs"),
    "NEWSDEDUP_TRANSLATION_LANGS": (config.llm_settings, "translation_langs"),
    "NEWSDEDUP_DIGEST_LANGS": (config.digest_settings, "langs"),
    "NEWSDEDUP_NARRATIVE_LANGS": (config.llm_settings, "narrative_langs"),
}
CODE = re.compile(r"[a-z]{2,3}(-[A-Za-z0-9]{2,8})?")
EXPECTED = "': expected comma-separated language codes (BCP 47, e.g. en,pt-BR,zh-Hans)"


@pytest.mark.parametrize("name", sorted(LOADERS))
@pytest.mark.parametrize("raw", ["../x", "en/../../", "en,../../etc", "fr,de/..", "en,.hidden", "en,fr%2F..", "EN",
                                 "e", "en,zh_CN", "en\x01", "ja,ko,über"])
def test_a_value_that_is_no_language_code_is_refused_when_the_settings_load(monkeypatch, name, raw):
    monkeypatch.setenv(name, raw)
    load, _field = LOADERS[name]
    with pytest.raises(ValueError) as refused:
        load()
    message = str(refused.value)
    assert message.startswith(f"{name}='") and message.endswith(EXPECTED), message


@pytest.mark.parametrize("name", sorted(LOADERS))
def test_language_codes_load(monkeypatch, name):
    monkeypatch.setenv(name, "en, pt-BR,zh-Hans ,ast")
    load, field = LOADERS[name]
    assert getattr(load(), field) == ("en", "pt-BR", "zh-Hans", "ast")


def test_the_pivot_language_is_checked_too(monkeypatch):
    monkeypatch.setenv("NEWSDEDUP_PIVOT_LANG", "../en")
    with pytest.raises(ValueError) as refused:
        config.llm_settings()
    assert str(refused.value) == "NEWSDEDUP_PIVOT_LANG='../en" + EXPECTED


@pytest.mark.parametrize("langs", [("en", "../x"), ("en\n",), ("",)])
def test_an_override_is_checked_like_the_environment(langs):
    with pytest.raises(ValueError, match=re.escape("NEWSDEDUP_PUBLISH_LANGS=")):
        merged(config.publish_settings(), langs=langs)


@settings(max_examples=300, deadline=None)
@given(raw=st.text(alphabet=st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",)), max_size=40))
def test_any_text_is_language_codes_or_the_one_error(raw):
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setenv("NEWSDEDUP_PUBLISH_LANGS", raw)
        try:
            langs = config.publish_settings().langs
        except ValueError as exc:
            # the value as repr() shows it, then what was expected
            assert str(exc).startswith("NEWSDEDUP_PUBLISH_LANGS=") and str(exc).endswith(EXPECTED[1:])
        else:
            assert all(CODE.fullmatch(lang) for lang in langs), langs
