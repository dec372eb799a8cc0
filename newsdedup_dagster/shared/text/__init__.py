"""Text from outside (feeds, pages, models): cleaning, languages, names, places, numbers, headlines."""
