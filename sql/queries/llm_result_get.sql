-- A stored model answer (shared/models/cache.py); marks it used (for retention by last use).
UPDATE llm_results SET last_used_at = now()
 WHERE cache_key = %(key)s
RETURNING status, result, error, attempts, tokens_in, tokens_out, cost_usd
