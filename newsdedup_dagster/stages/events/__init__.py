"""Events: stories grouped into multi-day events across languages, and each event's running
narrative (offline facts, or a model's, checked)."""
