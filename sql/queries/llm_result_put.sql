-- Store a valid model answer under its key; the first answer for a key wins.
INSERT INTO llm_results (cache_key, task, model, prompt_version, target_langs, input_hash, status, result,
                         error, attempts, tokens_in, tokens_out, cost_usd)
VALUES (%(key)s, %(task)s, %(model)s, %(prompt_version)s, %(target_langs)s, %(input_hash)s, %(status)s, %(result)s,
        %(error)s, %(attempts)s, %(tokens_in)s, %(tokens_out)s, %(cost_usd)s)
ON CONFLICT (cache_key) DO NOTHING
