-- Per-language centring of item vectors.
-- item_embeddings.embedding is the vector every query and index uses: for models with centring on it
-- is l2_normalize(raw - running mean of the item's language); raw_embedding keeps the model's own
-- vector (the cache holds raw vectors too), so the centred one can always be recomputed.
-- NULL raw_embedding = a row written before this migration (its embedding was raw then).
ALTER TABLE item_embeddings ADD COLUMN IF NOT EXISTS raw_embedding vector;
ALTER TABLE item_embeddings ALTER COLUMN raw_embedding SET STORAGE MAIN;

-- Running means as per-partition sums: the mean of a language "up to and including H" is
-- sum(vec_sum) / sum(item_count) over partition_hour <= H, so re-materialising H rewrites only H's
-- rows and the result does not depend on when later partitions ran.
CREATE TABLE IF NOT EXISTS embedding_language_means (
    model           text NOT NULL REFERENCES embedding_models(model) ON DELETE CASCADE,
    lang            text NOT NULL,           -- items.lang, '' when unknown
    partition_hour  timestamptz NOT NULL,
    vec_sum         vector NOT NULL,         -- sum of the raw vectors of the partition's canonical items
    item_count      integer NOT NULL CHECK (item_count > 0),
    PRIMARY KEY (model, partition_hour, lang)
);
