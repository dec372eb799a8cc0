INSERT INTO embedding_models (model, provider, dims, index_type, active, centring)
VALUES (%s, %s, %s, %s, true, %s)
-- a model active before keeps its recorded choice: its old vectors are stored that way
ON CONFLICT (model) DO UPDATE SET active = true,
    centring = coalesce(embedding_models.centring, EXCLUDED.centring)
RETURNING centring
