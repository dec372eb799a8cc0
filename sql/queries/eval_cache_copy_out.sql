COPY (SELECT text_hash, model, embedding FROM eval_embedding_cache
      WHERE model = %s AND text_hash = ANY(%s)) TO STDOUT
