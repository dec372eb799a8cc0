SET LOCAL enable_sort = on
