CREATE TEMP TABLE incoming (text_hash text, model text, embedding vector) ON COMMIT DROP
