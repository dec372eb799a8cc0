"""The ground floor: what every stage shares, and nothing that knows about a stage or Dagster.

- `db/`: connections, pools, the embedded server, migrations, named SQL, pgvector plumbing, and
  the few reads several stages make (`story_members`, `stored_text`).
- `settings.py`: how a setting is declared (environment variable or calibrated constant);
  `deployment.py`: where things live (home, database URLs, the SQL folder).
- `text/`: normalisation and cleaning of outside text, languages, names, places, numbers,
  headlines, the text an item is represented by.
- `http/`: the guarded fetcher (address checks, limits, conditional requests) and canonical URLs.
- `models/`: the OpenAI-compatible model client (backoff, cache, prices) and translation.
- `presentation/`: what the site and the digest share: labels, locales, categories, a story and
  an event narrative as a reader sees them, atomic writes.
- `sources.py`: the operator's sources file; `redaction.py`, `progress.py`, `crashpoints.py`.

A test (tests/test_import_floors.py) keeps it importing only itself.
"""
