"""A real SMTP server on 127.0.0.1 for tests (aiosmtpd), recording every message it accepts.

    with SmtpServer(refuse={"bad@example.com": "550 5.1.1 no such user"}) as server:
        ... NEWSDEDUP_SMTP_HOST=server.host, NEWSDEDUP_SMTP_PORT=server.port, NEWSDEDUP_SMTP_SECURITY=none
        server.messages        # [ReceivedMail(mail_from, rcpt_tos, raw bytes, message)]

`refuse` maps a recipient to the SMTP reply for RCPT TO (5xx = permanent, 4xx = transient);
`refuse_times` limits how many times each refusal fires (None = always). `port` reuses a port
(a server "coming back up"); `data_delay_s` makes each DATA slow (so concurrent senders overlap).
`logins` ({user: password}) makes the server offer AUTH on the plain connection and accept only
those; `server.logins_seen` records each (user, password) a client sent.
"""

from __future__ import annotations

import asyncio
import email
import email.policy
import threading
from dataclasses import dataclass
from email.message import EmailMessage

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword
from helpers import free_port


@dataclass
class ReceivedMail:
    mail_from: str
    rcpt_tos: list[str]
    raw: bytes
    message: EmailMessage


class _Handler:
    def __init__(self, server: SmtpServer):
        self.server = server

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):  # noqa: N802
        with self.server.lock:
            reply = self.server.refuse.get(address)
            if reply is not None:
                left = self.server.refuse_left.get(address)
                if left is None or left > 0:
                    if left is not None:
                        self.server.refuse_left[address] = left - 1
                    self.server.refused.append(address)
                    return reply
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):  # noqa: N802
        if self.server.data_delay_s:
            await asyncio.sleep(self.server.data_delay_s)
        raw = envelope.original_content or envelope.content
        if isinstance(raw, str):
            raw = raw.encode("utf-8")
        message = email.message_from_bytes(raw, policy=email.policy.default)
        with self.server.lock:
            self.server.messages.append(ReceivedMail(envelope.mail_from, list(envelope.rcpt_tos), raw, message))
        return "250 Message accepted for delivery"


class SmtpServer:
    def __init__(self, refuse: dict[str, str] | None = None, refuse_times: int | None = None,
                 port: int | None = None, data_delay_s: float = 0.0, logins: dict[str, str] | None = None):
        self.host = "127.0.0.1"
        self.port = port or free_port()
        self.data_delay_s = data_delay_s
        self.refuse = dict(refuse or {})
        self.refuse_left = {k: refuse_times for k in self.refuse} if refuse_times is not None else {}
        self.refused: list[str] = []
        self.messages: list[ReceivedMail] = []
        self.lock = threading.Lock()
        self.logins_seen: list[tuple[str, str]] = []
        auth = {}
        if logins is not None:
            def authenticate(server, session, envelope, mechanism, auth_data):
                if not isinstance(auth_data, LoginPassword):
                    return AuthResult(success=False)
                user, password = auth_data.login.decode(), auth_data.password.decode()
                with self.lock:
                    self.logins_seen.append((user, password))
                return AuthResult(success=logins.get(user) == password)

            auth = {"authenticator": authenticate, "auth_require_tls": False}
        # decode_data=False keeps the raw bytes (UTF-8 bodies, encoded headers) as sent
        self._controller = Controller(_Handler(self), hostname=self.host, port=self.port, ready_timeout=10, **auth)

    def __enter__(self) -> SmtpServer:
        self._controller.start()
        return self

    def __exit__(self, *exc) -> None:
        self._controller.stop()
