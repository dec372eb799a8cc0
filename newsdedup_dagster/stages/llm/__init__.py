"""Story scoring and translation by a model (or offline heuristics): significance, headline
and summary in the pivot language, translations into each published language."""
