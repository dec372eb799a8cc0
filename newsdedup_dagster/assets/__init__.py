"""Dagster assets, one module per pipeline stage. Assets stay thin: they call the stage's
library code (ingest/, neardup/, embeddings/, clustering/, llm/, events/, digest/)."""
