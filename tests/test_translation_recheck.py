"""A translated line carries the numbers and names of its source line, or it is not used: the reader
reads the source line in its own language and the run counts the line by reason. Real parts: the
embedded PostgreSQL, the local OpenAI-compatible server (tests/fake_openai.py), the Dagster assets,
the site and digest writers."""

from __future__ import annotations

import json

from fake_openai import default_responder
from lxml import etree
from test_briefing_translations import (
    HTML,
    _briefing,
    _page_briefing,
    _publish,
    _records,
    _rows,
    _story,
    briefing_requests,
)
from test_llm_stages import KEY, LANGS, llm_env, online, run  # noqa: F401  (fixtures)

from newsdedup_dagster.shared.models.translation import (
    NAMES,
    NUMBERS,
    Drop,
    briefing_fields,
    checked_translations,
    line_problem,
    translated_briefing,
)
from newsdedup_dagster.shared.presentation.stories import briefing_points

FLOOD = "At least 12 people died in the flood on Monday"


# ------------------------------------------------------------------ the check
def test_a_changed_number_is_found_and_a_changed_weekday_is_not_asked_about():
    problem = line_problem(FLOOD, "en", "Au moins 1 200 personnes sont mortes dans l'inondation mardi", "fr")
    assert problem is not None and problem[0] == NUMBERS and "1 200" in problem[1]
    assert line_problem(FLOOD, "en", "Au moins 12 personnes sont mortes dans l'inondation lundi", "fr") is None
    assert line_problem(FLOOD, "en", "Au moins 12 personnes sont mortes dans l'inondation mardi", "fr") is None


def test_a_lost_number_is_found():
    assert line_problem(FLOOD, "en", "Des personnes sont mortes dans l'inondation lundi", "fr")[0] == NUMBERS


def test_numbers_are_read_in_each_sides_language():
    source = "Damage reached 1.2 billion euros and 1,200 homes were lost"
    assert line_problem(source, "en", "Die Schäden erreichten 1,2 Milliarden Euro, 1.200 Häuser gingen verloren", "de") is None
    assert line_problem(source, "en", "Les dégâts ont atteint 1,2 milliard d'euros et 1 200 maisons", "fr") is None
    assert line_problem(source, "en", "损失达12亿欧元，1200所房屋被毁", "zh") is None
    assert line_problem(source, "en", "被害は12億ユーロ、1200戸が失われた", "ja") is None
    # German reads "1.200" as 1200 and "1,2" as 1.2: twelve billion is another number
    assert line_problem(source, "en", "Die Schäden erreichten 12 Milliarden Euro, 1.200 Häuser", "de")[0] == NUMBERS
    # "billion" in French is a million million
    assert line_problem(source, "en", "Les dégâts ont atteint 1,2 billion d'euros et 1 200 maisons", "fr")[0] == NUMBERS


def test_names_of_the_source_must_be_carried_into_a_latin_script_translation():
    source = "Prime Minister Keir Starmer met Emmanuel Macron in Germany on Friday."
    good = "Le Premier ministre Keir Starmer a rencontré Emmanuel Macron en Allemagne vendredi."
    assert line_problem(source, "en", good, "fr") is None
    swapped = "Le Premier ministre Keir Starmer a rencontré Olaf Scholz en Allemagne vendredi."
    assert line_problem(source, "en", swapped, "fr") == (NAMES, "Emmanuel Macron is missing")
    assert line_problem(source, "en", good.replace("Allemagne", "Autriche"), "fr") == (NAMES, "Germany is missing")
    # A language's own spelling or compound keeps the name; another person does not.
    source = "Ukrainian President Volodymyr Zelensky met Chancellor Friedrich Merz at the European Central Bank."
    assert line_problem(source, "en", "Der ukrainische Präsident Wolodymyr Selenskyj traf Bundeskanzler "
                                      "Friedrich Merz bei der Europäischen Zentralbank.", "de") is None
    problem = line_problem(source, "en", "Le président ukrainien Volodymyr Zelensky a rencontré le chancelier "
                                         "Olaf Scholz à la Banque centrale européenne.", "fr")
    assert problem == (NAMES, "Chancellor Friedrich Merz is missing")
    # Another script: names are not compared (a transliteration is not a spelling to demand).
    assert line_problem(source, "en", "キア・スターマー首相は金曜日にドイツでマクロン氏と会談した。", "ja") is None


def test_the_briefings_players_count_where_the_line_names_them():
    source = "Macron visited the flooded towns."          # the first word: no capital says it is a name
    translation = "Le président a visité les villes inondées."
    assert line_problem(source, "en", translation, "fr") is None
    assert line_problem(source, "en", translation, "fr", names=("Macron",))[0] == NAMES
    assert line_problem(source, "en", "Macron a visité les villes inondées.", "fr", names=("Macron",)) is None
    assert line_problem(source, "en", translation, "fr", names=("Olaf Scholz",)) is None   # not in this line


def test_checked_translations_keep_the_good_lines_and_drop_the_others():
    fields = {"summary": FLOOD, "point_1": "Teams reached Tolosa."}
    out, drops = checked_translations(
        {"fr": {"summary": "Au moins 1 200 morts lundi", "point_1": "Les équipes ont atteint Tolosa."},
         "de": {"summary": "Mindestens 12 Menschen starben am Montag", "point_1": "Die Teams erreichten Tolosa."}},
        fields, "en")
    assert out == {"fr": {"summary": None, "point_1": "Les équipes ont atteint Tolosa."},
                   "de": {"summary": "Mindestens 12 Menschen starben am Montag", "point_1": "Die Teams erreichten Tolosa."}}
    assert [(d.lang, d.field, d.reason) for d in drops] == [("fr", "summary", NUMBERS)]
    assert isinstance(drops[0], Drop)


STORED = {
    "category": "disasters",
    "summary": {"text": FLOOD, "citations": ["i1"], "lang": "en"},
    "points": [{"text": "Teams reached Tolosa.", "citations": ["i1"], "lang": "en"},
               {"text": "Two bridges and 140 homes are closed.", "citations": ["i2"], "lang": "en"}],
    "quotes": [{"text": "We counted 12 victims", "speaker": "Marta Ruiz", "role": None, "article_id": "i1",
                "lang": "en"}],
    "players": ["Marta Ruiz"], "places": ["Tolosa"],
}


def test_a_stored_line_that_fails_or_was_dropped_is_shown_in_its_own_language():
    lines = {"summary": "Au moins 1 200 personnes sont mortes lundi",        # stored before the check
             "point_1": None,                                                # dropped when stored
             "point_2": "Deux ponts et 140 maisons sont fermés."}
    shown = translated_briefing(STORED, lines, "fr")
    assert shown["summary"] == STORED["summary"]
    assert shown["points"][0] == STORED["points"][0]
    assert shown["points"][1] == {**STORED["points"][1], "text": "Deux ponts et 140 maisons sont fermés.", "lang": "fr"}
    assert shown["quotes"] == STORED["quotes"]                               # verbatim, never translated
    assert "We counted 12 victims" not in briefing_fields(STORED).values()


# ------------------------------------------------------------------ through the stage
HEADLINE = "Quake kills 12 in Tolosa"
TRANSLATED_HEADLINE = "Le séisme fait 1 200 morts à Tolosa"


def _field_with(fields: dict[str, str], text: str) -> str:
    """The first line of the briefing that holds `text` (the page's "evacuated 140 residents")."""
    names = [name for name, line in fields.items() if text in line]
    assert names, fields
    return names[0]


def _changing_numbers(req):
    """The fake model, whose French turns 140 into 1 400 in a briefing line and 12 into 1 200 in a headline."""
    answer = default_responder(req)
    if isinstance(answer, dict) and "significance" in answer:
        answer["headline"] = HEADLINE
    if isinstance(answer, dict) and "translations" in answer and "fr" in answer["translations"]:
        fr = answer["translations"]["fr"]
        for name, text in fr.items():
            fr[name] = text.replace("140", "1 400").replace(f"[fr] {HEADLINE}", TRANSLATED_HEADLINE)
    return answer


def test_a_translation_with_a_changed_number_is_not_used_and_is_counted(conn, clean_db, fake, llm_env, online,  # noqa: F811
                                                                        tmp_path):
    _story(conn)
    fake.responder = _changing_numbers
    result = run(["story_scores", "story_translations"], clean_db, online())
    briefing, material, source_lang = _briefing(conn)
    fields = briefing_fields(briefing)
    changed = _field_with(fields, "140")
    # The French lines: the one with the changed number stored as null, the others translated.
    rows = _rows(conn)
    status, row_material, lines, error = rows["fr"]
    assert (status, row_material, error) == (0, material, None)
    assert lines == {name: None if name == changed else f"[fr] {text}" for name, text in fields.items()}
    for lang in set(LANGS) - {"fr"}:
        assert rows[lang][2] == {name: f"[{lang}] {text}" for name, text in fields.items()}
    assert fake.count(lambda r: briefing_requests(r) and '"fr"' in r.user_text) == 1
    # The French headline and summary are given up; every other language is translated.
    states = dict(conn.execute("SELECT lang, status FROM story_translations WHERE story_id = 's1'").fetchall())
    (fr_error,) = conn.execute("SELECT error FROM story_translations WHERE story_id = 's1' AND lang = 'fr'").fetchone()
    conn.commit()
    assert states.pop("fr") == -1 and set(states.values()) == {0}
    assert fr_error.startswith(NUMBERS) and "headline" in fr_error
    # The run counts both, by reason.
    meta = {k: getattr(v, "value", v) for k, v in result["story_translations"].metadata.items()}
    assert meta["translation_lines_dropped"] == {NUMBERS: 1}
    assert meta["briefing_translation_lines_dropped"] == {NUMBERS: 1}
    assert (meta["briefing_batches_ok"], meta["briefing_rows_translated"]) == (5, 10)
    assert KEY not in json.dumps({k: str(v) for k, v in meta.items()})

    # The French page: the line in English, marked as English; the others in French; no changed number anywhere.
    _publish(conn, tmp_path, ("en", "fr"))
    en_points, _ = _page_briefing(tmp_path, "en")
    fr_points, _ = _page_briefing(tmp_path, "fr")
    source_line = fields[changed]
    assert [(text, attr) for text, attr, _ in fr_points] == [
        (text, "en") if text == source_line else (f"[fr] {text}", None) for text, _, _ in en_points]
    page = (tmp_path / "fr" / "story" / "s1.html").read_text(encoding="utf-8")
    assert "1 400" not in page and TRANSLATED_HEADLINE not in page
    (h1,) = etree.parse(str(tmp_path / "fr" / "story" / "s1.html"), HTML).xpath("//h1")
    assert h1.get("lang") is not None                         # the story's own headline, marked as its language
    # The digest reads the same lines.
    (record,) = _records(conn)
    points = briefing_points(record.briefing, lang="fr")
    assert [(p.text, p.lang) for p in points if p.lang != "fr"] == [(source_line, source_lang)]


def test_a_stored_translation_that_fails_the_check_is_not_shown(conn, clean_db, fake, llm_env, online,  # noqa: F811
                                                                 tmp_path):
    _story(conn)
    run(["story_scores", "story_translations"], clean_db, online())
    briefing, _, _ = _briefing(conn)
    fields = briefing_fields(briefing)
    changed = _field_with(fields, "140")
    # A translation stored before lines were checked, with a number the source does not give.
    conn.execute("UPDATE briefing_translations SET lines = jsonb_set(lines, %s, to_jsonb(%s::text)) "
                 "WHERE story_id = 's1' AND lang = 'de'",
                 ([changed], f"[de] {fields[changed].replace('140', '1.400')}"))
    conn.commit()
    _publish(conn, tmp_path, ("en", "de"))
    de_points, _ = _page_briefing(tmp_path, "de")
    assert (fields[changed], "en") in [(text, attr) for text, attr, _ in de_points]
    assert all(text.startswith("[de] ") for text, attr, _ in de_points if attr is None)
