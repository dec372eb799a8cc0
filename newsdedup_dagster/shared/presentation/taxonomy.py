"""The categories a story can have: one fixed list, each named in every language the site publishes
(shared/models/settings.py NARRATIVE_LANGS), so a category page and feed exist per language."""

from __future__ import annotations

# In the order the site lists them. "world" is international news that fits no narrower category.
CATEGORIES: tuple[str, ...] = (
    "world", "politics", "business", "technology", "science", "health", "environment", "sports",
    "culture", "crime", "disasters", "conflict", "society", "education", "travel",
)
FALLBACK = "world"

NAMES: dict[str, dict[str, str]] = {
    "en": {"world": "World", "politics": "Politics", "business": "Business and economy", "technology": "Technology",
           "science": "Science", "health": "Health", "environment": "Climate and environment", "sports": "Sports",
           "culture": "Culture", "crime": "Crime and justice", "disasters": "Disasters and weather",
           "conflict": "War and conflict", "society": "Society", "education": "Education", "travel": "Travel and transport"},
    "zh": {"world": "国际", "politics": "政治", "business": "商业与经济", "technology": "科技", "science": "科学",
           "health": "健康", "environment": "气候与环境", "sports": "体育", "culture": "文化", "crime": "犯罪与司法",
           "disasters": "灾害与天气", "conflict": "战争与冲突", "society": "社会", "education": "教育",
           "travel": "旅行与交通"},
    "ja": {"world": "国際", "politics": "政治", "business": "経済・ビジネス", "technology": "テクノロジー", "science": "科学",
           "health": "健康", "environment": "気候・環境", "sports": "スポーツ", "culture": "文化", "crime": "事件・司法",
           "disasters": "災害・気象", "conflict": "戦争・紛争", "society": "社会", "education": "教育",
           "travel": "旅行・交通"},
    "ko": {"world": "국제", "politics": "정치", "business": "경제", "technology": "기술", "science": "과학",
           "health": "건강", "environment": "기후·환경", "sports": "스포츠", "culture": "문화", "crime": "사건·사법",
           "disasters": "재난·날씨", "conflict": "전쟁·분쟁", "society": "사회", "education": "교육",
           "travel": "여행·교통"},
    "fr": {"world": "International", "politics": "Politique", "business": "Économie", "technology": "Technologie",
           "science": "Sciences", "health": "Santé", "environment": "Climat et environnement", "sports": "Sport",
           "culture": "Culture", "crime": "Justice et faits divers", "disasters": "Catastrophes et météo",
           "conflict": "Guerres et conflits", "society": "Société", "education": "Éducation",
           "travel": "Voyages et transports"},
    "de": {"world": "Welt", "politics": "Politik", "business": "Wirtschaft", "technology": "Technik",
           "science": "Wissenschaft", "health": "Gesundheit", "environment": "Klima und Umwelt", "sports": "Sport",
           "culture": "Kultur", "crime": "Kriminalität und Justiz", "disasters": "Katastrophen und Wetter",
           "conflict": "Krieg und Konflikte", "society": "Gesellschaft", "education": "Bildung",
           "travel": "Reisen und Verkehr"},
    "es": {"world": "Internacional", "politics": "Política", "business": "Economía", "technology": "Tecnología",
           "science": "Ciencia", "health": "Salud", "environment": "Clima y medio ambiente", "sports": "Deportes",
           "culture": "Cultura", "crime": "Sucesos y justicia", "disasters": "Catástrofes y meteorología",
           "conflict": "Guerras y conflictos", "society": "Sociedad", "education": "Educación",
           "travel": "Viajes y transporte"},
    "pt": {"world": "Mundo", "politics": "Política", "business": "Economia", "technology": "Tecnologia",
           "science": "Ciência", "health": "Saúde", "environment": "Clima e ambiente", "sports": "Esportes",
           "culture": "Cultura", "crime": "Crime e justiça", "disasters": "Desastres e clima",
           "conflict": "Guerras e conflitos", "society": "Sociedade", "education": "Educação",
           "travel": "Viagens e transporte"},
    "it": {"world": "Mondo", "politics": "Politica", "business": "Economia", "technology": "Tecnologia",
           "science": "Scienza", "health": "Salute", "environment": "Clima e ambiente", "sports": "Sport",
           "culture": "Cultura", "crime": "Cronaca e giustizia", "disasters": "Disastri e meteo",
           "conflict": "Guerre e conflitti", "society": "Società", "education": "Istruzione",
           "travel": "Viaggi e trasporti"},
    "ru": {"world": "В мире", "politics": "Политика", "business": "Экономика", "technology": "Технологии",
           "science": "Наука", "health": "Здоровье", "environment": "Климат и экология", "sports": "Спорт",
           "culture": "Культура", "crime": "Происшествия и суд", "disasters": "Стихийные бедствия и погода",
           "conflict": "Войны и конфликты", "society": "Общество", "education": "Образование",
           "travel": "Путешествия и транспорт"},
    "ar": {"world": "العالم", "politics": "سياسة", "business": "اقتصاد وأعمال", "technology": "تكنولوجيا",
           "science": "علوم", "health": "صحة", "environment": "المناخ والبيئة", "sports": "رياضة", "culture": "ثقافة",
           "crime": "جريمة وقضاء", "disasters": "كوارث وطقس", "conflict": "حروب ونزاعات", "society": "مجتمع",
           "education": "تعليم", "travel": "سفر ونقل"},
    "hi": {"world": "दुनिया", "politics": "राजनीति", "business": "कारोबार और अर्थव्यवस्था", "technology": "तकनीक",
           "science": "विज्ञान", "health": "स्वास्थ्य", "environment": "जलवायु और पर्यावरण", "sports": "खेल",
           "culture": "संस्कृति", "crime": "अपराध और न्याय", "disasters": "आपदा और मौसम", "conflict": "युद्ध और संघर्ष",
           "society": "समाज", "education": "शिक्षा", "travel": "यात्रा और परिवहन"},
    "id": {"world": "Dunia", "politics": "Politik", "business": "Bisnis dan ekonomi", "technology": "Teknologi",
           "science": "Sains", "health": "Kesehatan", "environment": "Iklim dan lingkungan", "sports": "Olahraga",
           "culture": "Budaya", "crime": "Kriminal dan hukum", "disasters": "Bencana dan cuaca",
           "conflict": "Perang dan konflik", "society": "Masyarakat", "education": "Pendidikan",
           "travel": "Perjalanan dan transportasi"},
    "vi": {"world": "Thế giới", "politics": "Chính trị", "business": "Kinh tế", "technology": "Công nghệ",
           "science": "Khoa học", "health": "Sức khỏe", "environment": "Khí hậu và môi trường", "sports": "Thể thao",
           "culture": "Văn hóa", "crime": "Tội phạm và pháp luật", "disasters": "Thiên tai và thời tiết",
           "conflict": "Chiến tranh và xung đột", "society": "Xã hội", "education": "Giáo dục",
           "travel": "Du lịch và giao thông"},
    "th": {"world": "ต่างประเทศ", "politics": "การเมือง", "business": "เศรษฐกิจ", "technology": "เทคโนโลยี",
           "science": "วิทยาศาสตร์", "health": "สุขภาพ", "environment": "สภาพภูมิอากาศและสิ่งแวดล้อม", "sports": "กีฬา",
           "culture": "วัฒนธรรม", "crime": "อาชญากรรมและกระบวนการยุติธรรม", "disasters": "ภัยพิบัติและสภาพอากาศ",
           "conflict": "สงครามและความขัดแย้ง", "society": "สังคม", "education": "การศึกษา",
           "travel": "การเดินทางและคมนาคม"},
    "tr": {"world": "Dünya", "politics": "Siyaset", "business": "Ekonomi", "technology": "Teknoloji",
           "science": "Bilim", "health": "Sağlık", "environment": "İklim ve çevre", "sports": "Spor",
           "culture": "Kültür", "crime": "Suç ve adalet", "disasters": "Afetler ve hava durumu",
           "conflict": "Savaş ve çatışmalar", "society": "Toplum", "education": "Eğitim",
           "travel": "Seyahat ve ulaşım"},
}


def category_name(category: str, lang: str) -> str:
    """The category's name in `lang` (English for a language without names, the id for an unknown
    category is never returned: such a category is refused before it is stored)."""
    if category not in CATEGORIES:
        raise KeyError(f"unknown category {category!r}")
    return NAMES.get(lang, NAMES["en"])[category]
