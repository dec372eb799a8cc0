-- The editions active readers chose besides the plain one per language (stages/digest/editions.py):
-- each distinct combination of languages, categories and countries is rendered once.
SELECT DISTINCT lang, also_reads, categories, countries
  FROM subscribers
 WHERE active AND (also_reads <> '{}' OR categories <> '{}' OR countries <> '{}')
 ORDER BY 1, 2, 3, 4
