COPY sources (id, name, feed_url, language) FROM STDIN
