"""The anchor check (shared/text/anchors.py) and the anchor split (stages/clustering/guard.py) on real
headline pairs: two reports of one event are kept together, two events of one kind (two
earthquakes, two shootings, two Oscar hosts) conflict. Headlines and leads are composed from
public reporting of the named events, in English, French, Spanish, Russian, Italian and
Japanese (years), plus German, whose capitalised nouns must not count as names."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from newsdedup_dagster.shared.text import anchors as an
from newsdedup_dagster.stages.clustering.guard import ANCHOR_SPLIT_MIN_SIZE, split_by_anchors, undirected_edges


def anchors(title: str, lead: str, lang: str) -> an.Anchors:
    return an.extract(title, lead, lang)


# (language, (headline, lead) of event A, (headline, lead) of event B, conflicting kinds)
SPLIT = [
    ("en",
     ("Gunman opens fire in Aurora, Colorado cinema during Batman premiere",
      "Police in Aurora said James Holmes, 24, was arrested outside the Century 16 theatre."),
     ("Gunman kills 26 at Sandy Hook school in Newtown, Connecticut",
      "Police said Adam Lanza shot his way into Sandy Hook Elementary School on Friday morning."),
     ("names",)),
    ("en",
     ("Ellen DeGeneres to host the Oscars again",
      "The Academy said on Friday August 2, 2013 that Ellen DeGeneres will host the 86th ceremony."),
     ("Hugh Jackman named host of the 81st Academy Awards",
      "Producers Laurence Mark and Bill Condon announced on December 12, 2008 that Hugh Jackman will host."),
     ("years",)),  # both name the Oscars and the Academy: only the years tell them apart
    ("fr",
     ("Séisme en Équateur : au moins 77 morts",
      "Un séisme de magnitude 7,8 a frappé samedi la côte de l'Équateur, selon l'Institut géophysique de Quito."),
     ("Séisme au Mexique : au moins 200 morts",
      "Le tremblement de terre a frappé Puebla et Mexico mardi, a annoncé le président Enrique Peña Nieto."),
     ("names",)),
    ("es",
     ("Un terremoto de magnitud 7,1 sacude el centro de México",
      "El sismo derrumbó edificios en Ciudad de México y Puebla, según el Servicio Sismológico Nacional."),
     ("Un terremoto de magnitud 7,8 golpea la costa de Ecuador",
      "El presidente Rafael Correa declaró el estado de excepción en Esmeraldas, Manabí y Guayas."),
     ("names", "magnitudes")),  # 7,1 | 7,8: the magnitudes tell them apart too
    ("ru",
     ("Землетрясение магнитудой 7,8 произошло на юге Турции",
      "Толчки ощущались в Сирии и Ливане, сообщает агентство Анадолу."),
     ("Мощное землетрясение произошло в Непале",
      "Эпицентр находился в районе Горкха, сообщает Геологическая служба США."),
     ("names",)),
    ("it",
     ("Terremoto nel centro Italia, Amatrice distrutta",
      "La scossa del 24 agosto 2016 ha colpito Amatrice, Accumoli e Arquata del Tronto."),
     ("Terremoto all'Aquila, centinaia di vittime",
      "La scossa delle 3.32 del 6 aprile 2009 ha colpito L'Aquila e Onna."),
     ("years", "names")),
    ("ja",
     ("東日本大震災 マグニチュード9.0", "２０１１年３月１１日午後２時４６分ごろ、三陸沖を震源とする地震が発生した。"),
     ("熊本地震 マグニチュード7.3", "2016年4月16日未明、熊本県を震源とする地震が発生した。"),
     ("years", "magnitudes")),
    ("de",
     ("Erdbeben in Italien: Amatrice zerstört", "Das Beben vom 24. August 2016 traf die Region um Amatrice."),
     ("Erdbeben in L'Aquila: Hunderte Tote", "Das Beben am 6. April 2009 zerstörte die Altstadt von L'Aquila."),
     ("years",)),
]

# (language, (headline, lead) of one report, (headline, lead) of another report of the same event)
KEPT = [
    ("en",
     ("Aurora cinema shooting: James Holmes charged with murder",
      "Prosecutors in Colorado charged James Holmes with 24 counts of first-degree murder."),
     ("Colorado theatre shooting suspect appears in court",
      "James Holmes, accused of the Aurora massacre, appeared dazed in a Centennial courtroom.")),
    ("fr",
     ("Équateur : le bilan du séisme s'alourdit",
      "Le président Rafael Correa a annoncé que le séisme avait fait au moins 233 morts en Équateur."),
     ("Séisme en Équateur : Rafael Correa décrète l'état d'urgence",
      "Le chef de l'État s'est rendu à Manta, l'une des villes les plus touchées.")),
    ("es",
     ("Rafael Correa eleva a 272 los muertos por el terremoto en Ecuador",
      "El presidente visitó Pedernales, la ciudad más afectada de Manabí."),
     ("Terremoto en Ecuador: suben a 413 los fallecidos",
      "El Gobierno de Rafael Correa informó de nuevos rescates en Manabí y Esmeraldas.")),
    ("ru",
     ("Число погибших при землетрясении в Турции превысило 20 тысяч",
      "Спасатели продолжают работу в провинции Хатай, сообщает агентство Анадолу."),
     ("Эрдоган посетил пострадавшую от землетрясения провинцию Хатай",
      "Президент Турции пообещал восстановить дома за год, передаёт Анадолу.")),
    ("de",  # German capitalises every noun: without name anchors, only years could veto
     ("Zugspitze: Erster Schnee lockt Skifahrer – Saisonstart verschoben",
      "Auf Deutschlands höchstem Berg liegen 40 Zentimeter Schnee, für den Liftbetrieb reicht das noch nicht."),
     ("Wintereinbruch in Bayern: Neuschnee auf der Zugspitze",
      "Die Bergbahnen melden Schneefall bis in tiefe Lagen, die Saison beginnt trotzdem später.")),
    ("ja",
     ("熊本地震 死者50人に", "2016年4月の熊本地震で、県は死者が50人になったと発表した。"),
     ("熊本地震から1週間", "２０１６年４月１４日の前震から１週間、避難生活が続いている。")),
]


@pytest.mark.parametrize("lang,a,b,kinds", SPLIT, ids=[f"{s[0]}-{i}" for i, s in enumerate(SPLIT)])
def test_two_events_of_one_kind_conflict(lang, a, b, kinds):
    left, right = anchors(*a, lang), anchors(*b, lang)
    found = an.conflict(left, right)
    assert found is not None and found.kinds == kinds
    assert an.conflict(right, left).kinds == kinds  # symmetric
    for kind in kinds:  # what explain shows: each side's anchors of that kind, disjoint
        assert found.a[kind] and found.b[kind] and not set(found.a[kind]) & set(found.b[kind])


@pytest.mark.parametrize("lang,a,b", KEPT, ids=[f"{k[0]}-{i}" for i, k in enumerate(KEPT)])
def test_two_reports_of_one_event_do_not_conflict(lang, a, b):
    assert an.conflict(anchors(*a, lang), anchors(*b, lang)) is None


def test_names_only_veto_within_one_language():
    # the same earthquake, in English and French: the place names are spelled differently
    en = anchors("Turkey earthquake: rescuers search rubble in Hatay and Gaziantep", "", "en")
    fr = anchors("Séisme en Turquie : les secours fouillent les décombres", "à Antakya et Kahramanmaras.", "fr")
    assert len(en.names) >= 2 and len(fr.names) >= 2 and not en.names & fr.names
    assert an.conflict(en, fr) is None


def test_what_counts_as_a_name():
    found = anchors("Red Sox offer Mark Teixeira $200 million", "Boston's offer tops the Angels', ESPN reports.", "en")
    assert {"sox", "mark", "teixeira", "angels", "espn"} <= found.names
    assert not {"red", "boston", "offer", "million"} & found.names  # first words of headline and lead
    # a Title Case or shouting headline says nothing; the lead's first word neither
    assert anchors("Red Sox Make Huge Offer To Teixeira", "", "en").names == frozenset()
    assert anchors("REPORT: RED SOX MAKE HUGE OFFER", "", "en").names == frozenset()
    assert "police" not in anchors("Shooting in Detroit office", "Police said the gunman fled.", "en").names
    # German nouns are capitalised: no names at all; years still count
    de = anchors("Erdbeben in Italien", "Das Beben vom 24. August 2016 traf Amatrice.", "de")
    assert de.names == frozenset() and de.years == {"2016"}
    # full-width digits are years too; a longer number or a price is not
    assert anchors("震災から", "２０１１年３月", "ja").years == {"2011"}
    assert anchors("Prize of 12016 dollars", "Up 2,016 points; 2016.5 km", "en").years == frozenset()
    assert an.fold("São Paulo") == "sao paulo"


def test_story_anchors_use_every_members_years_and_the_items_language_names():
    item = anchors("Gunman kills 26 at Sandy Hook school in Newtown, Connecticut", "", "en")
    members = [anchors("Aurora shooting: James Holmes charged in Colorado", "", "en"),
               anchors("Fusillade d'Aurora : James Holmes inculpé", "", "fr")]
    story = an.story_anchors(item, members)
    assert story.lang == "en" and "holmes" in story.names and "inculpe" not in story.names
    assert an.conflict(item, story).kinds == ("names",)
    # one member sharing a name is enough to keep the item
    members.append(anchors("Connecticut police identify the Newtown gunman", "", "en"))
    assert an.conflict(item, an.story_anchors(item, members)) is None


def test_rules_turn_kinds_off():
    a = anchors("Gunman opens fire in Aurora, Colorado cinema", "Police said James Holmes was arrested on July 20, 2012.", "en")
    b = anchors("Gunman kills 26 at Sandy Hook school in Newtown", "Police said Adam Lanza shot on December 14, 2012.", "en")
    assert an.conflict(a, b).kinds == ("names",)  # 2012 both
    b = anchors("Gunman kills 12 at Washington Navy Yard", "Police said Aaron Alexis opened fire on September 16, 2013.", "en")
    assert an.conflict(a, b).kinds == ("years", "names")
    assert an.conflict(a, b, an.AnchorRules(years=False)).kinds == ("names",)
    assert an.conflict(a, b, an.AnchorRules(years=True, min_names=0)).kinds == ("years",)
    assert an.conflict(a, b, an.AnchorRules(years=False, min_names=0)) is None


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200), st.text(max_size=400), st.sampled_from(["en", "de", "fr", "ja", "ru", "", None]))
def test_extract_takes_any_text(title, lead, lang):
    found = an.extract(title, lead, lang)
    assert all(len(y) == 4 and 1900 <= int(y) <= 2099 for y in found.years)
    assert all(n and n == an.fold(n) for n in found.names)
    other = an.extract(lead, title, lang)
    assert (an.conflict(found, other) is None) == (an.conflict(other, found) is None)
    assert an.conflict(found, found) is None  # an item never conflicts with itself


def _two_events(names_a, names_b):
    """Two groups of 8 items, dense inside (cosine 0.6), joined by 3 edges (0.5): one community
    for the guard over a large window; names_a / names_b are what each group's items name."""
    group_a, group_b = [f"a{i}" for i in range(8)], [f"b{i}" for i in range(8)]
    edges = [(x, y, 0.6) for g in (group_a, group_b) for i, x in enumerate(g) for y in g[i + 1:]]
    edges += [("a0", "b0", 0.5), ("a1", "b1", 0.5), ("a2", "b2", 0.5)]
    found = {i: an.Anchors("en", frozenset(), frozenset(names_a if i[0] == "a" else names_b))
             for i in group_a + group_b}
    weights = an.name_weights(found.values())
    return group_a, group_b, edges, lambda x, y: an.name_cosine(found[x], found[y], weights)


def test_anchor_split_cuts_a_community_whose_names_say_two_events():
    a, b, edges, cosine = _two_events({"waitrose", "banstead", "surrey"}, {"waitrose", "wellington", "somerset"})
    groups, splits = split_by_anchors([sorted(a + b)], undirected_edges(edges), cosine, 0.35, 0.10)
    assert sorted(map(sorted, groups)) == [sorted(a), sorted(b)]
    assert len(splits) == 1 and splits[0].within - splits[0].across >= 0.10


def test_anchor_split_keeps_a_community_whose_names_agree_or_are_missing():
    a, b, edges, cosine = _two_events({"waitrose", "banstead", "surrey"}, {"waitrose", "banstead", "surrey"})
    groups, splits = split_by_anchors([sorted(a + b)], undirected_edges(edges), cosine, 0.35, 0.10)
    assert groups == [sorted(a + b)] and not splits
    a, b, edges, cosine = _two_events(set(), set())  # lower-cased titles (gnews): nothing to compare
    assert split_by_anchors([sorted(a + b)], undirected_edges(edges), cosine, 0.35, 0.10)[0] == [sorted(a + b)]
    small = sorted(a[:3] + b[:2])
    assert len(small) < ANCHOR_SPLIT_MIN_SIZE
    assert split_by_anchors([small], undirected_edges(edges), cosine, 0.35, 0.10)[0] == [small]
