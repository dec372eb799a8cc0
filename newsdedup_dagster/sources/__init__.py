"""Managing the sources file: OPML in and out (opml.py), adding a feed from a feed's or a site's
address (discovery.py), editing the file with its comments kept (edit.py) and each source's health
(health.py). Pure functions where possible: the network goes through the ingest fetcher, settings
and connections are passed in, and nothing here reads the environment.

`starter_sources.yaml` beside this package is the bundled list of public feeds."""
