"""The daily digest: stories chosen per language and edition, rendered to HTML and text, and
sent to subscribers by SMTP."""
