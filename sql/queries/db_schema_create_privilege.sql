SELECT current_schema(), has_schema_privilege(current_schema(), 'CREATE')
