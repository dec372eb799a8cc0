"""Outbound HTTP: the guarded, polite fetcher every request goes through, and canonical URLs."""
