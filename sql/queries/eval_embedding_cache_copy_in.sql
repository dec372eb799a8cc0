COPY embedding_cache (text_hash, model, embedding) FROM STDIN
