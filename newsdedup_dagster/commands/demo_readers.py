"""The demo's three sample readers (`newsdedup demo`): readers with different choices, subscribed
from the start of the sample day, whose editions go to outbox files (the demo mails nobody), and
the lines saying where each went. Only on the embedded database: a configured one holds a
deployment's real readers."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path

import psycopg

from newsdedup_dagster.shared import db
from newsdedup_dagster.stages.digest.send import deliver_day
from newsdedup_dagster.stages.digest.settings import SmtpSettings

__all__ = ["SAMPLE_READERS", "add_sample_readers", "deliver_to_sample_readers"]

# (address, languages in order, categories, countries, local time, time zone): three zones, three kinds of
# choice; categories in the taxonomy's order and countries sorted, as `subscribers add` stores them.
SAMPLE_READERS = (
    ("kenji@example.org", ("ja", "en"), (), (), time(7, 0), "Asia/Tokyo"),
    ("amira@example.org", ("ar", "fr"), ("world", "politics", "conflict"), (), time(8, 0), "Africa/Cairo"),
    ("maria@example.org", ("es", "en"), (), ("ES", "GB", "US"), time(19, 30), "America/Mexico_City"),
)


def add_sample_readers(conn: psycopg.Connection, day: date) -> None:
    start = datetime.combine(day, time(0), tzinfo=UTC)
    for address, langs, categories, countries, at, zone in SAMPLE_READERS:
        conn.execute(db.load_sql("demo_sample_reader"), {
            "email": address, "lang": langs[0], "also_reads": list(langs[1:]), "categories": list(categories),
            "countries": list(countries), "delivery_time": at, "time_zone": zone, "subscribed_at": start})
    conn.commit()


def deliver_to_sample_readers(conn: psycopg.Connection, day: date, outbox_dir: Path) -> list[str]:
    """Deliver the day's editions the digest run rendered to outbox files, as of a moment past every
    sample reader's local delivery time (a live deployment waits for each), and say where each went."""
    rendered = {digest_id: (subject, html, text) for digest_id, subject, html, text in
                conn.execute(db.load_sql("digest_day_rendered"), {"day": day})}
    conn.commit()
    smtp = SmtpSettings(host=None, outbox_only=True)
    deliver_day(conn, day, rendered, smtp, outbox_dir, now=datetime.combine(day + timedelta(days=3), time(0), tzinfo=UTC))
    lines = []
    emails = [r[0] for r in SAMPLE_READERS]
    choices = {r[0]: r for r in SAMPLE_READERS}
    for address, status, due, local, path, edition, stories in conn.execute(
            db.load_sql("demo_sample_deliveries"), {"day": day, "emails": emails}):
        _, reader_langs, _, _, at, zone = choices[address]
        lines.append(f"  {address:<20} {','.join(reader_langs):<6} {at:%H:%M} {zone:<20} due {due:%Y-%m-%d %H:%M} UTC "
                     f"(local day {local}), {stories} stories [{edition or 'all'}] -> {status}: {path}")
    conn.commit()
    return lines
