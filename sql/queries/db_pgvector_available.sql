SELECT default_version FROM pg_available_extensions WHERE name = 'vector'
