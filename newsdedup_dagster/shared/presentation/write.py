"""Atomic file writes for a directory that a web server or a bucket sync may read at any moment,
and private ones (digests, outbox mail, alerts) that only the deployment's user may read."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

__all__ = ["atomic_write", "private_dirs"]


def private_dirs(folder: Path, root: Path) -> Path:
    """`folder` (under `root`) with every level from `root` down created or tightened to 0700:
    subscriber addresses and digests must not be listed or read by other local users."""
    chain = [folder]
    while chain[-1] != root and chain[-1] != chain[-1].parent:
        chain.append(chain[-1].parent)
    chain[-1].parent.mkdir(parents=True, exist_ok=True)
    for level in reversed(chain):
        level.mkdir(mode=0o700, exist_ok=True)
        if level.stat().st_mode & 0o077:
            level.chmod(0o700)   # mkdir's mode goes through the umask; an older, wider folder is tightened
    return folder


def atomic_write(path: Path, data: str | bytes, private: bool = False) -> bool:
    """Write `data` to `path` via a temporary file in the same directory and os.replace, so a
    reader sees the old file or the new one, never half of one. Identical content is left alone
    (its mtime too: conditional GETs and syncs stay cheap). Returns True when the file changed.
    `private`: the file is 0600 (the caller makes its folder private with private_dirs)."""
    # "replace": a lone surrogate (never stored by PostgreSQL, but possible in a str) is no reason to fail.
    payload = data.encode("utf-8", "replace") if isinstance(data, str) else data
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        if private and path.stat().st_mode & 0o077:
            path.chmod(0o600)
        if path.stat().st_size == len(payload) and path.read_bytes() == payload:
            return False
    except FileNotFoundError:
        pass
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        # No fsync: the rename is what makes the swap atomic for readers; after a power cut the
        # next hour's run rewrites every file that differs (fsync per page cost ~7 ms each here).
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
        # mkstemp makes 0600; a web server must be able to read a published file
        os.chmod(tmp_name, 0o600 if private else 0o644)
        os.replace(tmp_name, path)
    except BaseException:
        try:
            os.unlink(tmp_name)
        except FileNotFoundError:
            pass
        raise
    return True
