"""Retention: rows and files past their keep-for period removed in order, the archive kept."""
