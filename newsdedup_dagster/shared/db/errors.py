"""The one error type of database plumbing: a one-line, password-free explanation and the fix."""

from __future__ import annotations


class DatabaseError(RuntimeError):
    """A database problem with a one-line, password-free explanation and the fix."""


def first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
