"""Embeddings: providers behind one interface, the text we embed, the cache, the model registry
and the per-model HNSW index. Library code (no Dagster imports)."""

from .providers import Embedder, make_embedder
from .settings import EmbeddingSettings
from .store import (
    EmbeddingCentringMismatch,
    EmbeddingModelMismatch,
    ModelInfo,
    embed_partition,
    ensure_model,
    vector_expr,
)
from .text import embedding_text

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
