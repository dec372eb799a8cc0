"""The article stage: each new item's page fetched once, politely and safely, its main text
extracted and kept (`article_texts`). Pure logic here (settings, robots rules, page fetching,
extraction); the database side is `store.py`."""
