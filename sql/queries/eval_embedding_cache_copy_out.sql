COPY (SELECT text_hash, model, embedding FROM embedding_cache WHERE model = %s) TO STDOUT
