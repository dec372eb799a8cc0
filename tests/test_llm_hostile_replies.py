"""Malformed model replies against the local OpenAI-compatible server (tests/fake_openai.py): 1,200
`[`, a dict nested 500 deep and a 4,301-digit integer fail the one story, batch or event that got
them, as invalid output with every paid call in `llm_calls`, and the hour completes, for scoring and
translation (the real assets) and event narratives (the events stage's functions). So do an HTTP
body nested too deep to decode and a reply our handling fails on unexpectedly. Then hypothesis
properties: any text into the parser and any value into the cleaner give a result or the one
documented error, in bounded time."""

from __future__ import annotations

import json
import time

import pytest
from fake_openai import Reply, default_responder
from hypothesis import given, settings, strategies as st
from test_events_fixtures import add_story as add_event_story, at, hour_of
from test_events_narrative import _group, _is_narrative, _is_translation, _narrative_reply, llm  # noqa: F401
from test_llm_stages import (  # noqa: F401  (fixtures re-exported)
    HOUR,
    add_story,
    llm_env,
    online,
    run,
    score_requests,
    story_state,
    translate_requests,
    translation_states,
)

from newsdedup_dagster.shared.models import translation
from newsdedup_dagster.shared.models.client import REPLY_MAX_CHARS, REPLY_MAX_DEPTH, OutputInvalid, parse_json_reply
from newsdedup_dagster.shared.text.cleaning import clean_model_output, clean_model_text
from newsdedup_dagster.stages.events import narrative
from newsdedup_dagster.stages.events.grouping import event_id_for
from newsdedup_dagster.stages.events.settings import NarrativeSettings
from newsdedup_dagster.stages.llm import scoring

HOSTILE_REPLIES = {
    "brackets": "[" * 1200,
    "deep_dict": '{"a": ' * 500 + "1" + "}" * 500,
    "long_integer": '{"significance": ' + "9" * 4301 + "}",
}
NARRATIVE_SETTINGS = NarrativeSettings(6, 50, 50)


def calls(conn, where: str, params: tuple) -> list[tuple]:
    rows = conn.execute(f"SELECT status, tokens_in, error FROM llm_calls WHERE {where} ORDER BY attempt",
                        params).fetchall()
    conn.commit()
    return rows


# ------------------------------------------------------------------ scoring and translation (assets)
@pytest.mark.parametrize("name", sorted(HOSTILE_REPLIES))
def test_scoring_a_malformed_reply_fails_that_story_only(conn, clean_db, fake, llm_env, online, name):  # noqa: F811 (fixtures)
    add_story(conn, "bad", 3)
    add_story(conn, "good", 2)
    fake.push(Reply.text(HOSTILE_REPLIES[name]), match=lambda r: score_requests(r) and "report bad " in r.user_text,
              times=100)
    result = run(["story_scores", "story_translations"], clean_db, online(max_attempts=2))
    assert story_state(conn, "bad")[0] == -1 and story_state(conn, "good")[0] == 0
    paid = calls(conn, "task = 'score' AND story_id = %s", ("bad",))
    assert [(status, tokens) for status, tokens, _ in paid] == [("invalid", 120), ("invalid", 120)]
    assert all("reply" in error for _, _, error in paid)
    assert set(translation_states(conn, "good").values()) == {0}
    assert result["story_scores"].metadata["failed_permanent"].value == 1


@pytest.mark.parametrize("name", sorted(HOSTILE_REPLIES))
def test_translation_a_malformed_reply_fails_that_batch_only(conn, clean_db, fake, llm_env, online, name):  # noqa: F811 (fixtures)
    add_story(conn, "s1", 2)
    run(["story_scores"], clean_db, online())
    fake.push(Reply.text(HOSTILE_REPLIES[name]), match=lambda r: translate_requests(r) and '"de"' in r.user_text,
              times=100)
    run(["story_translations"], clean_db, online(max_attempts=2))
    states = translation_states(conn, "s1")
    assert states.pop("de") == states.pop("es") == -1 and set(states.values()) == {0}
    paid = calls(conn, "task = 'translate' AND status <> 'ok'", ())
    assert [(status, tokens) for status, tokens, _ in paid] == [("invalid", 120), ("invalid", 120)]


def test_a_response_body_nested_too_deep_fails_that_story_only(conn, clean_db, fake, llm_env, online):  # noqa: F811 (fixtures)
    """The same reply one level down: the HTTP body itself nested 5,000 deep (the client library's
    decoder raises RecursionError; Python 3.12's decoder still parses 1,200 levels) is invalid output
    for that story, recorded, and the hour completes."""
    body = (b'{"id": "x", "object": "chat.completion", "created": 0, "model": "deepseek-chat", "choices": [], '
            b'"padding": ' + b"[" * 5000 + b"]" * 5000 + b"}")
    add_story(conn, "bad", 3)
    add_story(conn, "good", 2)
    fake.push(Reply.raw(body), match=lambda r: score_requests(r) and "report bad " in r.user_text, times=100)
    run(["story_scores"], clean_db, online(max_attempts=2))
    assert story_state(conn, "bad")[0] == -1 and story_state(conn, "good")[0] == 0
    paid = calls(conn, "task = 'score' AND story_id = %s", ("bad",))
    assert [status for status, _, _ in paid] == ["invalid", "invalid"]
    assert all("response body is not valid JSON" in error for _, _, error in paid)


def test_an_unexpected_error_handling_a_reply_fails_that_story_only(conn, clean_db, fake, llm_env, online,  # noqa: F811 (fixtures)
                                                                    monkeypatch):
    """A bug met by one reply (here a validator that raises ZeroDivisionError on it): that story is
    given up, its paid call recorded with the error, the others scored, the hour completes."""
    validate = scoring.validate_score

    def buggy(data, pivot_lang="en"):
        if "trips" in str(data.get("headline")):
            raise ZeroDivisionError("a bug met by this reply")
        return validate(data, pivot_lang)

    monkeypatch.setattr(scoring, "validate_score", buggy)
    add_story(conn, "bad", 3)
    add_story(conn, "good", 2)
    tripping = {"scale": 6, "impact": 7, "novelty": 5, "breadth": 4, "credibility": 8, "urgency": 6,
                "significance": 6.5, "headline": "A headline that trips a bug",
                "summary": "This is the first sentence of a summary. This is the second one."}
    fake.push(Reply.json(tripping), match=lambda r: score_requests(r) and "report bad " in r.user_text, times=100)
    run(["story_scores"], clean_db, online(max_attempts=3))
    assert story_state(conn, "bad")[0] == -1 and story_state(conn, "good")[0] == 0
    paid = calls(conn, "task = 'score' AND story_id = %s", ("bad",))
    assert len(paid) == 1 and paid[0][:2] == ("error", 120)          # not asked again: it would fail the same way
    assert "unexpected ZeroDivisionError" in paid[0][2]


def test_an_unexpected_error_handling_a_translation_fails_that_batch_only(conn, clean_db, fake, llm_env, online,  # noqa: F811 (fixtures)
                                                                        monkeypatch):
    """The same bug met by one translation batch's reply: that batch's languages are given up and its
    paid call recorded with the error; the other batches are translated and the hour completes."""
    validate = translation.validate_translations

    def buggy(data, fields, langs):
        if "de" in langs:
            raise ZeroDivisionError("a bug met by this reply")
        return validate(data, fields, langs)

    monkeypatch.setattr(translation, "validate_translations", buggy)
    add_story(conn, "s1", 2)
    run(["story_scores"], clean_db, online())
    run(["story_translations"], clean_db, online(max_attempts=3))
    states = translation_states(conn, "s1")
    assert states.pop("de") == states.pop("es") == -1 and set(states.values()) == {0}
    paid = calls(conn, "task = 'translate' AND status <> 'ok'", ())
    assert len(paid) == 1 and "unexpected ZeroDivisionError" in paid[0][2]


# ------------------------------------------------------------------ event narratives and their translations
@pytest.mark.parametrize("name", sorted(HOSTILE_REPLIES))
def test_narrative_a_malformed_reply_fails_that_event_only(conn, fake, llm, name):  # noqa: F811 (fixtures)
    settings_, client = llm
    fake.responder = lambda req: _narrative_reply("ok") if _is_narrative(req) else default_responder(req)
    fake.push(Reply.text(HOSTILE_REPLIES[name]), match=lambda r: _is_narrative(r) and "Bridge collapses" in r.user_text,
              times=100)
    add_event_story(conn, "h1", "topic-h", 1.0, titles={"en": "Bridge collapses"})
    add_event_story(conn, "g1", "topic-g", 1.0, titles={"en": "Summit opens"})
    _group(conn, 1)
    res = narrative.generate_narratives(conn, hour_of(at(1)), settings_, NARRATIVE_SETTINGS, client)
    assert (res.generated, res.failed) == (1, 1)
    bad, good = event_id_for("h1"), event_id_for("g1")
    rows = dict((ev, rest) for ev, *rest in conn.execute(
        "SELECT id, needs_narrative, narrative_offline, narrative->>'what_happened' FROM events"))
    assert rows[bad][:2] == [-1, True] and "Bridge collapses" in rows[bad][2]   # the extractive fallback
    assert rows[good] == [0, False, "What ok."]
    paid = calls(conn, "task = 'narrative' AND event_id = %s", (bad,))
    assert [(status, tokens) for status, tokens, _ in paid] == [("invalid", 120), ("invalid", 120)]


@pytest.mark.parametrize("name", sorted(HOSTILE_REPLIES))
def test_narrative_translation_a_malformed_reply_fails_that_batch_only(conn, fake, llm, name):  # noqa: F811 (fixtures)
    settings_, client = llm
    fake.responder = lambda req: _narrative_reply("v1") if _is_narrative(req) else default_responder(req)
    add_event_story(conn, "t1", "topic-t", 1.0, titles={"en": "Summit ends"})
    _group(conn, 1)
    narrative.generate_narratives(conn, hour_of(at(1)), settings_, NARRATIVE_SETTINGS, client)
    fake.push(Reply.text(HOSTILE_REPLIES[name]), match=lambda r: _is_translation(r) and '"ja"' in r.user_text,
              times=100)
    res = narrative.translate_narratives(conn, hour_of(at(1)), client, settings_, NARRATIVE_SETTINGS)
    assert (res.translated_batches, res.failed_batches) == (2, 1)
    statuses = dict(conn.execute("SELECT lang, status FROM event_translations").fetchall())
    assert statuses == {"de": 0, "fr": 0, "ja": -1, "ko": -1, "zh": 0}
    paid = calls(conn, "task = 'narrative_translate' AND status <> 'ok'", ())
    assert [(status, tokens) for status, tokens, _ in paid] == [("invalid", 120), ("invalid", 120)]


# ------------------------------------------------------------------ the parser and the cleaner (properties)
def test_each_malformed_reply_is_invalid_output_and_a_bounded_reply_parses():
    for reply in HOSTILE_REPLIES.values():
        with pytest.raises(OutputInvalid):
            parse_json_reply(reply)
        with pytest.raises(OutputInvalid):
            parse_json_reply(f"```json\n{reply}\n```")
    for bad in ("NaN", "-Infinity", "1e400", '"x" ' * 2):
        with pytest.raises(OutputInvalid):
            parse_json_reply('{"a": ' + bad + "}")
    longest_integer = parse_json_reply('{"scale": ' + "9" * 4300 + "}")          # parses; the validator refuses it
    with pytest.raises(OutputInvalid, match="outside 0-10"):
        scoring.validate_score({**longest_integer, "headline": "h", "summary": "s"})
    with pytest.raises(OutputInvalid, match="longer than"):
        parse_json_reply(json.dumps({"a": "x" * REPLY_MAX_CHARS}))
    at_the_bound = '{"a": ' * (REPLY_MAX_DEPTH - 1) + '{"b": "[[[{{{\\"\\\\"}' + "}" * (REPLY_MAX_DEPTH - 1)
    assert parse_json_reply(at_the_bound)["a"]["a"]
    with pytest.raises(OutputInvalid, match="deeper than"):
        parse_json_reply("[" + at_the_bound + "]")


def _json_values(leaf):
    return st.recursive(leaf, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                      st.dictionaries(st.text(max_size=6), inner, max_size=4)),
                        max_leaves=20)


SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False, allow_infinity=False),
                    st.text(max_size=20))
NESTED = st.builds(lambda opener, depth, middle, closer: opener * depth + middle + closer * depth,
                   st.sampled_from(["[", "{", '{"a":', '["\\"",', '{"k": "[', " [ "]),
                   st.integers(0, 3000), st.sampled_from(["", "1", "null", '"}]"', "9" * 5000, "1e999", "NaN"]),
                   st.sampled_from(["", "]", "}", "]}", '"]']))
FENCED = st.text(max_size=200).map(lambda text: f"```json\n{text}\n```")
WHITESPACE = st.builds(lambda a, n, b: a + " " * n + b, st.sampled_from(["```", "{", "", '"']),
                       st.integers(0, 50_000), st.sampled_from(["x", "```", "}", ""]))
MUTATED = st.tuples(_json_values(SCALARS).map(json.dumps), st.integers(0, 400), st.text(max_size=5)).map(
    lambda t: t[0][:t[1]] + t[2] + t[0][t[1]:])


@settings(max_examples=400, deadline=None)
@given(st.one_of(st.text(), NESTED, FENCED, WHITESPACE, MUTATED))
def test_any_reply_parses_to_an_object_or_is_invalid_output_in_bounded_time(text):
    started = time.process_time()  # CPU time: other workers on a shared machine do not count
    try:
        data = parse_json_reply(text)
    except OutputInvalid:
        data = None
    assert time.process_time() - started < 1.0
    if data is not None:
        assert isinstance(data, dict)
        clean_model_output(data)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.text(max_size=6), _json_values(SCALARS), max_size=5))
def test_a_json_object_within_the_bounds_parses_to_itself(obj):
    assert parse_json_reply(json.dumps(obj)) == obj


def _strings(value) -> list[str]:
    found, stack = [], [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            found.append(item)
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


ANY_TEXT = st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=30)


@settings(max_examples=300, deadline=None)
@given(_json_values(st.one_of(SCALARS, ANY_TEXT)))
def test_the_cleaner_cleans_every_string_and_changes_nothing_else(value):
    out = clean_model_output(value)
    assert all(clean_model_text(s) == s for s in _strings(out))
    assert clean_model_output(out) == out
    if all(clean_model_text(s) == s for s in _strings(value)):
        assert out == value


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 20_000), st.sampled_from(["list", "dict"]), st.sampled_from(["\x00x\u202e", 7, None]))
def test_the_cleaner_takes_any_depth_in_bounded_time(depth, kind, leaf):
    value = leaf
    for _ in range(depth):
        value = [value] if kind == "list" else {"k\u200b": value}
    started = time.process_time()  # CPU time: other workers on a shared machine do not count
    out = clean_model_output(value)
    assert time.process_time() - started < 2.0
    for _ in range(depth):
        out = out[0] if kind == "list" else out["k"]
    assert out == clean_model_output(leaf)
