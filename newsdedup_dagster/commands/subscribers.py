"""`newsdedup subscribers add EMAIL [choices] | update EMAIL [choices] | remove EMAIL | unsubscribe --token T |
list [--all]`.

Choices (stages/digest/editions.py): `--langs ja,en` (read in this order: the digest in the first; `--lang xx`
is one language), `--categories sports,science` and `--countries FR,JP` (default: all), `--at 07:00`
and `--time-zone Asia/Tokyo` (the edition of a UTC day arrives at that local time the next local
day, or as soon as the day is complete when that comes later). `add` sets every choice (unset ones to
their default), `update` only those given.

`unsubscribe --token T` is what the deployment's unsubscribe endpoint (NEWSDEDUP_UNSUBSCRIBE_URL) or
the operator reading the mailto: requests runs with the token of a reader's link: it names the
reader by id only (its output may go back to whoever followed the link) and is idempotent.
Exit codes: 0 unsubscribed (or already), 1 no reader has this token, 2 not a token."""

from __future__ import annotations

import argparse
import sys


def _choice_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--lang", default=None, help="the digest's language (default: the pivot language, e.g. en)")
    parser.add_argument("--langs", default=None,
                        help="languages read, in order of preference, comma-separated: the digest is in the first, "
                             "an article in another of them is linked as it is (e.g. ja,en)")
    parser.add_argument("--categories", default=None,
                        help="briefing categories of interest, comma-separated, or all (default: all)")
    parser.add_argument("--countries", default=None,
                        help="outlet countries of interest (ISO 3166-1 alpha-2), comma-separated, or all (default: all)")
    parser.add_argument("--at", default=None, help="local delivery time, HH:MM (default: 00:00, as soon as the "
                                                   "day is complete)")
    parser.add_argument("--time-zone", default=None, help="IANA time zone of --at (default: UTC), e.g. Europe/Paris")


def register(subparsers) -> None:
    parser = subparsers.add_parser("subscribers",
                                   help="manage digest subscribers: add | update | remove | unsubscribe | list",
                                   description="Digest subscribers: email, languages read, categories and countries "
                                               "of interest, local delivery time.")
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    add = sub.add_parser("add", help="add (or reactivate, setting every choice of) a subscriber")
    add.add_argument("email")
    _choice_arguments(add)
    update = sub.add_parser("update", help="change some choices of an active subscriber (the others stay)")
    update.add_argument("email")
    _choice_arguments(update)
    remove = sub.add_parser("remove", help="unsubscribe (the delivery history is kept)")
    remove.add_argument("email")
    unsubscribe = sub.add_parser("unsubscribe", help="unsubscribe the reader whose unsubscribe link carries a token")
    unsubscribe.add_argument("--token", required=True,
                             help="the token of the link (`token=` of NEWSDEDUP_UNSUBSCRIBE_URL, or the mailto: subject)")
    lst = sub.add_parser("list", help="list subscribers")
    lst.add_argument("--all", action="store_true", help="include unsubscribed addresses")
    parser.set_defaults(func=handle)


def normalise_email(email: str) -> str:
    """Trimmed, domain lower-cased (the local part is case-sensitive by the RFC, kept as typed)."""
    local, _, domain = email.strip().rpartition("@")
    return f"{local}@{domain.lower()}" if local else email.strip()


def handle(args: argparse.Namespace) -> int:
    from newsdedup_dagster import config  # deferred on purpose: fast --help
    from newsdedup_dagster.shared import db  # deferred on purpose: fast --help
    from newsdedup_dagster.stages.digest.send import UNSUBSCRIBE_TOKEN, valid_email  # deferred on purpose: fast --help

    if args.action == "unsubscribe":
        # The token comes from a link anyone may have edited: a token's shape, else nothing is looked up.
        token = args.token.strip().lower()
        if not UNSUBSCRIBE_TOKEN.match(token):
            print("newsdedup subscribers: error: --token is not an unsubscribe token (hex digits)", file=sys.stderr)
            return 2
        with db.connection() as conn:
            row = conn.execute(db.load_sql("digest_subscriber_unsubscribe_token"), {"token": token}).fetchone()
            conn.commit()
        if row is None:
            print("newsdedup subscribers: no subscriber has this unsubscribe token", file=sys.stderr)
            return 1
        sub_id, was_active = row
        print(f"unsubscribed subscriber {sub_id}" if was_active else f"subscriber {sub_id} was already unsubscribed")
        return 0

    if args.action in ("add", "update", "remove"):
        email = normalise_email(args.email)
        if not valid_email(email):
            print(f"newsdedup subscribers: error: {args.email!r} is not an email address", file=sys.stderr)
            return 2
    if args.action in ("add", "update"):
        try:
            values = _choice_values(args, config.llm_settings().pivot_lang if args.action == "add" else None)
        except ValueError as exc:
            print(f"newsdedup subscribers: error: {exc}", file=sys.stderr)
            return 2
    with db.connection() as conn:
        if args.action == "add":
            sub_id, inserted = conn.execute(db.load_sql("digest_subscriber_add"), {"email": email, **values}).fetchone()
            conn.commit()
            print(f"{'added' if inserted else 'updated'} {email} (lang {values['lang']}, id {sub_id}; {_describe(values)})")
            return 0
        if args.action == "update":
            row = conn.execute(db.load_sql("digest_subscriber_update"), {"email": email, **values}).fetchone()
            conn.commit()
            if row is None:
                print(f"newsdedup subscribers: {email} is not an active subscriber", file=sys.stderr)
                return 1
            sub_id, *now = row
            print(f"updated {email} (lang {now[0]}, id {sub_id}; {_describe(dict(zip(_CHOICE_KEYS, now, strict=True)))})")
            return 0
        if args.action == "remove":
            row = conn.execute(db.load_sql("digest_subscriber_remove"), {"email": email}).fetchone()
            conn.commit()
            if row is None:
                print(f"newsdedup subscribers: {email} is not an active subscriber", file=sys.stderr)
                return 1
            print(f"removed {email}")
            return 0
        rows = conn.execute(db.load_sql("digest_subscriber_list"), {"include_inactive": bool(args.all)}).fetchall()
        conn.commit()
    if not rows:
        print("no subscribers (add one: newsdedup subscribers add EMAIL --lang en)")
        return 0
    width = max(len(r[1]) for r in rows)
    # The id is how run reports and alerts name a reader (addresses stay in the database).
    print(f"{'id'.rjust(6)}  {'email'.ljust(width)}  lang  active  last delivery     choices")
    for sub_id, email, lang, active, _created, last, *choices in rows:
        when = last.strftime("%Y-%m-%d %H:%M") if last else "-"
        described = _describe(dict(zip(_CHOICE_KEYS, [lang, *choices], strict=True)))
        print(f"{str(sub_id).rjust(6)}  {email.ljust(width)}  {lang.ljust(4)}  {'yes' if active else 'no '}     "
              f"{when.ljust(16)}  {described}")
    return 0


_CHOICE_KEYS = ("lang", "also_reads", "categories", "countries", "delivery_time", "time_zone")


def _choice_values(args: argparse.Namespace, default_lang: str | None) -> dict:
    """The query's parameters from the options: every choice for `add` (defaults for those not
    given, `default_lang` the language), only the given ones for `update` (None = unchanged)."""
    from newsdedup_dagster.stages.digest import editions  # deferred on purpose: fast --help

    adding = default_lang is not None
    if args.lang and args.langs:
        raise ValueError("--lang and --langs: give one of them")
    langs = args.langs or args.lang or default_lang
    values = dict.fromkeys(_CHOICE_KEYS)
    if langs:
        first, *rest = editions.parse_langs(langs)
        values["lang"] = first
        values["also_reads"] = rest if (args.langs or adding) else None
    if args.categories is not None or adding:
        values["categories"] = list(editions.parse_categories(args.categories))
    if args.countries is not None or adding:
        values["countries"] = list(editions.parse_countries(args.countries))
    if args.at is not None or adding:
        values["delivery_time"] = editions.parse_time(args.at or "00:00")
    if args.time_zone is not None or adding:
        values["time_zone"] = editions.parse_time_zone(args.time_zone or "UTC")
    return values


def _describe(values: dict) -> str:
    """One line of choices: 'langs ja, en · categories all · countries FR, JP · at 07:00 Asia/Tokyo'."""
    langs = [values["lang"], *(values.get("also_reads") or [])]
    at = values.get("delivery_time")
    return (f"langs {', '.join(langs)} · categories {', '.join(values.get('categories') or []) or 'all'} · "
            f"countries {', '.join(values.get('countries') or []) or 'all'} · "
            f"at {at.strftime('%H:%M') if at else '00:00'} {values.get('time_zone') or 'UTC'}")
