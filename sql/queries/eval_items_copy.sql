COPY items (id, canonical_url, url, title, summary, lang, lang_origin, published_at, date_flag,
            partition_hour, source_id)
FROM STDIN
