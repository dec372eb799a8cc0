CREATE TABLE IF NOT EXISTS eval_embedding_cache (
    text_hash text NOT NULL,
    model text NOT NULL,
    embedding vector NOT NULL,
    PRIMARY KEY (text_hash, model)
)
