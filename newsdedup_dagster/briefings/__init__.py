"""Story briefings: a category, a summary, key points, quotes with their speakers, and the places
and people the articles name, every line traced to the articles of the story (pure, no Dagster).

- `taxonomy`: the fixed categories and their names in every published language.
- `categories`: the offline category of a story (named terms), used when no model answers.
- `extractive`: the offline briefing, built from the articles' own sentences and quotes.
- `verify`: a model's briefing checked line by line against the articles it cites; what cannot be
  checked is dropped and counted by reason.
"""
