SELECT current_user, current_database()
