-- When each language's feed first published an entry (its feed id is minted from that date).
SELECT lang, min(published_at) FROM publish_entries GROUP BY lang
