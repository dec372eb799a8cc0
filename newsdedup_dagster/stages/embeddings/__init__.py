"""Embeddings: providers behind one interface, the text we embed, the cache, the model registry
and the per-model HNSW index. Library code (no Dagster imports)."""

from newsdedup_dagster.shared.db.vectors import ModelInfo, vector_expr
from newsdedup_dagster.shared.text.item_text import embedding_text
from newsdedup_dagster.stages.embeddings.providers import Embedder, make_embedder
from newsdedup_dagster.stages.embeddings.settings import EmbeddingSettings
from newsdedup_dagster.stages.embeddings.store import (
    EmbeddingCentringMismatch,
    EmbeddingModelMismatch,
    embed_partition,
    ensure_model,
)

__all__ = [
    "Embedder",
    "EmbeddingSettings",
    "make_embedder",
    "EmbeddingCentringMismatch",
    "EmbeddingModelMismatch",
    "ModelInfo",
    "embed_partition",
    "ensure_model",
    "vector_expr",
    "embedding_text",
]
