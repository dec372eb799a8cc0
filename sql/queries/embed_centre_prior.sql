-- Centring, cold-start prior (once per model): PRIOR_WEIGHT pseudo-items whose mean is the mean of
-- the prior texts' raw vectors (shared/text/centring_prior.py; already in embedding_cache). Stored at
-- partition -infinity so every partition's running mean includes it.
INSERT INTO embedding_language_means (model, lang, partition_hour, vec_sum, item_count)
SELECT %(model)s, %(prior_lang)s, '-infinity'::timestamptz,
       sum(c.embedding ORDER BY c.text_hash) * array_fill((%(prior_weight)s::real / count(*))::real, ARRAY[%(dims)s])::vector,
       %(prior_weight)s
  FROM embedding_cache c
 WHERE c.model = %(model)s AND c.text_hash = ANY(%(prior_hashes)s)
HAVING count(*) > 0
ON CONFLICT (model, partition_hour, lang) DO NOTHING
