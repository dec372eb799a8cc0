"""`newsdedup subscribers add EMAIL [--lang xx] | remove EMAIL | unsubscribe --token T | list [--all]`.

`unsubscribe --token T` is what the deployment's unsubscribe endpoint (NEWSDEDUP_UNSUBSCRIBE_URL) or
the operator reading the mailto: requests runs with the token of a reader's link: it names the
reader by id only (its output may go back to whoever followed the link) and is idempotent.
Exit codes: 0 unsubscribed (or already), 1 no reader has this token, 2 not a token."""

from __future__ import annotations

import argparse
import re
import sys

_LANG = re.compile(r"^[a-z]{2,3}(-[A-Za-z0-9]{2,8})?$")


def register(subparsers) -> None:
    parser = subparsers.add_parser("subscribers", help="manage digest subscribers: add | remove | unsubscribe | list",
                                   description="Digest subscribers (email + preferred language).")
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    add = sub.add_parser("add", help="add (or reactivate / change the language of) a subscriber")
    add.add_argument("email")
    add.add_argument("--lang", default=None, help="preferred digest language (default: the pivot language, e.g. en)")
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
    from .. import config, db  # deferred on purpose: fast --help
    from ..digest.send import UNSUBSCRIBE_TOKEN, valid_email  # deferred on purpose: fast --help

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

    if args.action in ("add", "remove"):
        email = normalise_email(args.email)
        if not valid_email(email):
            print(f"newsdedup subscribers: error: {args.email!r} is not an email address", file=sys.stderr)
            return 2
    with db.connection() as conn:
        if args.action == "add":
            lang = (args.lang or config.llm_settings().pivot_lang).strip()
            if not _LANG.match(lang):
                print(f"newsdedup subscribers: error: --lang {lang!r} is not a language code (e.g. en, ja, pt-BR)",
                      file=sys.stderr)
                return 2
            sub_id, inserted = conn.execute(db.load_sql("digest_subscriber_add"), {"email": email, "lang": lang}).fetchone()
            conn.commit()
            print(f"{'added' if inserted else 'updated'} {email} (lang {lang}, id {sub_id})")
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
    print(f"{'id'.rjust(6)}  {'email'.ljust(width)}  lang  active  last delivery")
    for sub_id, email, lang, active, _created, last in rows:
        when = last.strftime("%Y-%m-%d %H:%M") if last else "-"
        print(f"{str(sub_id).rjust(6)}  {email.ljust(width)}  {lang.ljust(4)}  {'yes' if active else 'no '}     {when}")
    return 0
