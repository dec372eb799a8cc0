COPY article_texts (item_id, status, url, lead, fetched_hour)
FROM STDIN
