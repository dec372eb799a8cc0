"""What the reader site and the digest share: labels and locales, categories, a story and an
event narrative as a reader sees them, and atomic writes."""
