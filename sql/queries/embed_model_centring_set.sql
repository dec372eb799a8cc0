UPDATE embedding_models SET centring = %s WHERE model = %s
