UPDATE embedding_models SET active = false WHERE active AND model <> %s
