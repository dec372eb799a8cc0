SET LOCAL maintenance_work_mem = '256MB'
