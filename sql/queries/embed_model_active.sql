SELECT model, provider, dims, index_type, centring FROM embedding_models WHERE active
