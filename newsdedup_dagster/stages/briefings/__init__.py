"""Story briefings: a category, a summary, key points, quotes with their speakers, and the places
and people the articles name, every line traced to the articles of the story (pure, no Dagster).
The categories themselves and the people-and-organisations finder are shared with the site and the
digest (`shared/presentation/taxonomy.py`, `shared/presentation/categories.py`, `shared/text/players.py`).

- `extractive`: the offline briefing, built from the articles' own sentences and quotes.
- `verify`: a model's briefing checked line by line against the articles it cites; what cannot be
  checked is dropped and counted by reason.
"""
