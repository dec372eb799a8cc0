"""Cold-start prior for per-language centring.

Centring subtracts the running mean of the stored raw vectors. On a fresh database the first hour's
few items *are* the mean, so centring would remove what they share (four articles on one event in a
six-item hour lose their common direction and no longer cluster). The running mean therefore starts
from PRIOR_WEIGHT pseudo-items whose mean is the mean of these generic, unrelated headlines (written
for this purpose, many topics and languages, no real event), so a small first hour is centred on
roughly the model's own common component; after a few hundred items the real mean dominates.
"""

from __future__ import annotations

# How many items the prior counts as (measured: see stages/embeddings/store.py centre_partition).
PRIOR_WEIGHT = 20
PRIOR_LANG = "*prior*"

PRIOR_TEXTS: tuple[str, ...] = (
    "City council approves new budget for road repairs",
    "Local football club signs young striker on three-year deal",
    "Scientists report progress on battery storage research",
    "Heavy rain expected across the north this weekend",
    "Museum opens exhibition of early photography",
    "Airline announces new routes for the summer season",
    "Shares close slightly higher after quiet trading day",
    "Hospital extends visiting hours for families",
    "Film festival announces its opening night selection",
    "Farmers report a good harvest despite dry spring",
    "Le gouvernement présente un projet de loi sur le logement",
    "Grève des transports prévue mardi dans plusieurs villes",
    "Un nouveau musée ouvre ses portes au centre-ville",
    "Die Regierung plant Änderungen bei der Rentenreform",
    "Bundesliga: Heimsieg nach spätem Tor",
    "Neue Studie zu Schlaf und Gesundheit veröffentlicht",
    "El Gobierno aprueba ayudas para el sector agrícola",
    "La selección gana el amistoso por dos goles",
    "Abre una nueva biblioteca en el barrio norte",
    "Il governo discute la riforma della scuola",
    "Nuovo record di visitatori per il festival estivo",
    "O governo anuncia investimento em transportes públicos",
    "Правительство обсуждает новый налоговый закон",
    "В городе открылся новый парк",
    "政府发布新的经济刺激计划",
    "北京举办国际图书博览会",
    "新しい高速鉄道の路線が来年開業へ",
    "東京で桜の開花が発表される",
    "정부, 내년 예산안 국회에 제출",
    "서울에서 국제 영화제 개막",
    "الحكومة تعلن عن خطة جديدة لدعم التعليم",
    "افتتاح معرض دولي للكتاب في العاصمة",
    "सरकार ने नई स्वास्थ्य योजना की घोषणा की",
    "Hükümet yeni ekonomi paketini açıkladı",
    "Rząd przedstawił projekt nowej ustawy o podatkach",
    "Regering presenteert plannen voor nieuwe woningen",
    "Pemerintah umumkan program bantuan untuk petani",
    "Chính phủ công bố kế hoạch phát triển giao thông",
    "Η κυβέρνηση ανακοίνωσε νέα μέτρα για την οικονομία",
    "Regeringen föreslår nya regler för elpriser",
)
