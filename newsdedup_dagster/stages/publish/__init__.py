"""Story feeds and the static reader site: Atom 1.0 + JSON Feed 1.1 per language, HTML pages per
language, story and event, written atomically into one directory (pure builders; SQL in build.py)."""
