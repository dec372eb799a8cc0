SET LOCAL enable_sort = off
