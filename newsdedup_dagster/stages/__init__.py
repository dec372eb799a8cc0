"""The pipeline's stages, one package each, in data-flow order: ingest, neardup, articles,
embeddings, clustering, llm, briefings, events, publish, digest, and retention. A stage imports
only the ground floor (`newsdedup_dagster.shared`) and itself, never another stage: stages talk
through the database. Dagster assets (`newsdedup_dagster.assets`) call them.
"""
