INSERT INTO eval_embedding_cache SELECT * FROM incoming ON CONFLICT DO NOTHING
