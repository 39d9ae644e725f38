"""A warm process for the per-turn hook (issue 24), started in the background
(:func:`.background.detached`).

Claude Code starts ``memsite hook`` afresh on every prompt, and a hybrid recall in a fresh
process spends most of its time getting ready: importing numpy, reading the tokenizer and
the vector file, opening the index (about 0.3 s at a year, against 60 ms for the recall
itself once they are loaded). So the hook asks a warm process instead: one per tree (and
ranking mode), started in the background by the hook, holding one ``Memory`` with its
index and model loaded, answering recalls over a Unix socket beside the index.

What keeps it safe to leave running:

- **It answers recall only**, from the same tree through the same ``Memory.recall``, which
  refreshes the index before it searches: a write by anyone is found at the next prompt.
  The hook itself still does the session's writes.
- **One per tree and mode**: a server holds a lock file for its whole life; a second one
  started beside it leaves at once.
- **It answers for its own tree only**: a request names its tree (real path, device and
  inode, ``identity``), and a request for another is refused (issue 34: a socket linked or
  moved to another tree's path answered for that tree).
- **It leaves by itself**: after ``IDLE`` seconds without a question, when the tree is gone
  or replaced, when its socket file is removed or replaced, and when memsite's code changed
  since it started (a client whose code differs is told so, and the server leaves).
- **Only its owner can ask**: the socket is created with mode 0600 (and the folder is the
  user's cache); a request is one JSON line of at most ``MAX_REQUEST`` bytes.
- **A hook never depends on it**: no socket, a refused connection, a slow or odd answer,
  and the hook answers in its own process as before (and starts a server for the next
  prompt). ``MEMSITE_WARM=off`` turns the warm process off.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import stat
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .background import detached

# seconds without a question before the server leaves: a pause longer than this costs one
# prompt answered without it (about 0.4 s more at a year); each server holds 35-180 MB
IDLE = 5 * 60
POLL = 2.0  # how often an idle server looks at its tree and socket
ASK_TIMEOUT = 2.0  # a client waits this long for an answer, then answers itself
MAX_REQUEST = 1 << 20
MAX_SOCKET_PATH = 100  # a Unix socket's path must fit sun_path (108 bytes on Linux)


def enabled() -> bool:
    """Whether hooks may use and start a warm process (``MEMSITE_WARM=off``: never)."""
    return os.environ.get("MEMSITE_WARM", "").strip().lower() not in ("off", "0", "no", "false")


def where(root: Path, cache_dir: Path | None, lexical: bool) -> Path | None:
    """The socket of the tree's warm process: beside its index, or, when that path is too
    long for a socket, in the user's own runtime folder; None when there is neither."""
    import hashlib

    from ..search.index.place import default_cache_dir, index_key

    folder = Path(cache_dir) if cache_dir is not None else default_cache_dir(Path(root))
    path = folder / f"{index_key(Path(root))}.warm{'-lexical' if lexical else ''}.sock"
    if len(os.fsencode(path)) <= MAX_SOCKET_PATH:
        return path
    private = _private_folder()
    if private is None:
        return None
    digest = hashlib.sha1(os.fsencode(path), usedforsecurity=False).hexdigest()[:20]
    short = private / f"{digest}.sock"
    return short if len(os.fsencode(short)) <= MAX_SOCKET_PATH else None


def _private_folder() -> Path | None:
    """``$XDG_RUNTIME_DIR/memsite``, else ``/tmp/memsite-UID``: made with mode 0700, and
    used only while it is this user's and nobody else's."""
    base = os.environ.get("XDG_RUNTIME_DIR")
    folder = Path(base) / "memsite" if base else Path("/tmp") / f"memsite-{os.getuid()}"
    try:
        folder.mkdir(mode=0o700, parents=bool(base), exist_ok=True)
        info = folder.lstat()
    except OSError:
        return None
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        return None
    return folder


def code_stamp() -> str:
    """memsite's version and the newest change to its code: a server older than its client
    leaves rather than answer with code the user has since replaced."""
    import memsite

    package = Path(memsite.__file__).parent
    newest = 0
    for path in package.rglob("*.py"):
        with contextlib.suppress(OSError):
            newest = max(newest, path.stat().st_mtime_ns)
    return f"{memsite.__version__}:{newest}"


def ask(path: Path, request: dict[str, Any], timeout: float = ASK_TIMEOUT) -> dict[str, Any] | None:
    """The warm process's answer to ``request``, or None when there is none to be had (or
    the socket, or the process behind it, is not this user's: its answer would go into the
    agent's context)."""
    try:
        info = path.lstat()
        if not stat.S_ISSOCK(info.st_mode) or info.st_uid != os.getuid():
            return None
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(timeout)
            conn.connect(os.fspath(path))
            if not _ours(conn):
                return None
            conn.sendall(json.dumps(request).encode("utf-8") + b"\n")
            said = _line(conn, MAX_REQUEST * 16, time.monotonic() + timeout)
    except (OSError, ValueError):
        return None
    try:
        answer = json.loads(said)
    except (ValueError, RecursionError):
        return None
    return answer if isinstance(answer, dict) else None


def _ours(conn: socket.socket) -> bool:
    """Whether the process at the other end of ``conn`` runs as this user (Linux tells;
    elsewhere the socket file's owner, checked above, has to do)."""
    if not hasattr(socket, "SO_PEERCRED"):
        return True
    import struct

    size = struct.calcsize("3i")
    _, uid, _ = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, size))
    return uid == os.getuid()


def identity(root: Path) -> dict[str, Any] | None:
    """Which tree ``root`` is: its real path, device and inode (two trees can share a path,
    seen from two containers, or one after the other); None when it is no folder."""
    try:
        real = Path(root).resolve()
        info = real.stat()
    except (OSError, RuntimeError):
        return None
    if not stat.S_ISDIR(info.st_mode):
        return None
    return {"root": str(real), "dev": info.st_dev, "ino": info.st_ino}


def recall(
    path: Path, root: Path, prompt: str, budget: int, session_file: str | None, stamp: str
) -> str | None:
    """The markdown the warm process of tree ``root`` recalls for ``prompt``, or None to
    recall here (no server, or the one at ``path`` answers for another tree)."""
    request = {
        "prompt": prompt,
        "budget": budget,
        "session_file": session_file,
        "stamp": stamp,
        "tree": identity(root),
    }
    answer = ask(path, request)
    markdown = None if answer is None else answer.get("markdown")
    return markdown if isinstance(markdown, str) else None


def start(root: Path, cache_dir: Path | None, lexical: bool) -> bool:
    """Start the tree's warm process in the background, unless one answers already; whether
    one was started."""
    path = where(root, cache_dir, lexical)
    if path is None or not enabled() or _alive(path):
        return False
    command = [sys.executable, "-c", _SERVE, str(Path(root).resolve()), "1" if lexical else "0"]
    detached(command, cache_dir, log=os.environ.get("MEMSITE_WARM_LOG"))
    return True


def started_note(lexical: bool) -> str:
    """The line a hook run by hand prints when it started a warm process (issue 39.7: a
    process that outlives the command must not be a surprise)."""
    return (
        f"memsite hook: started a warm process for this tree's recalls "
        f"({'lexical' if lexical else 'hybrid'}); it leaves after {IDLE // 60} minutes without a "
        "question, and MEMSITE_WARM=off turns it off"
    )


_SERVE = "import sys; from memsite.agents.warm import serve; serve(sys.argv[1], sys.argv[2] == '1')"


def serve(root: str | Path, lexical: bool, idle: float | None = None) -> None:
    """Answer recalls for the tree at ``root`` until idle for ``idle`` seconds (``IDLE``, or
    ``$MEMSITE_WARM_IDLE``), the tree or the socket is gone, or the code changed."""
    import fcntl

    from ..errors import FLAGS, MemsiteError, spelled
    from ..memory import Memory

    root = Path(root).resolve()
    cache_env = os.environ.get("MEMSITE_CACHE")
    cache_dir = Path(cache_env) if cache_env else None
    path = where(root, cache_dir, lexical)
    if path is None:
        return
    idle = idle if idle is not None else float(os.environ.get("MEMSITE_WARM_IDLE") or IDLE)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(f"{path}.lock", "a+") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return  # another server holds this tree
        stamp = code_stamp()
        mine = identity(root)
        lock.truncate(0)  # who holds it, for `memsite check` (the file is opened to append)
        lock.write(f"{os.getpid()} {time.time():.0f} {idle:g}\n")
        lock.flush()
        with (
            contextlib.suppress(MemsiteError),
            Memory(root, cache_dir=cache_dir, notify=lambda _: None) as memory,
            spelled(FLAGS),
        ):  # a tree gone or broken: the hooks answer themselves
            # ready before anyone can ask: the index, the model and the vectors loaded
            memory.recall("warm up", lexical=lexical)
            listener, inode = _listen(path)
            tally = [0]  # prompts answered

            def answer(conn: socket.socket) -> bool:
                return _answer(conn, stamp, mine, memory, lexical, tally)

            try:
                _loop(listener, path, inode, lambda: identity(root) == mine, idle, answer)
            finally:
                listener.close()
                if _inode(path) == inode:
                    with contextlib.suppress(OSError):
                        path.unlink()


def _listen(path: Path) -> tuple[socket.socket, int]:
    with contextlib.suppress(FileNotFoundError):
        path.unlink()  # stale: the lock says no server is alive
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)
    try:
        listener.bind(os.fspath(path))
    finally:
        os.umask(old)
    os.chmod(path, 0o600)
    listener.listen(8)
    listener.settimeout(POLL)
    return listener, path.stat().st_ino


def _inode(path: Path) -> int | None:
    try:
        return path.stat().st_ino
    except OSError:
        return None


def _loop(
    listener: socket.socket,
    path: Path,
    inode: int,
    same_tree: Callable[[], bool],
    idle: float,
    answer: Callable[[socket.socket], bool],
) -> None:
    last = time.monotonic()
    while True:
        try:
            conn, _ = listener.accept()
        except TimeoutError:
            gone = not same_tree() or _inode(path) != inode
            if gone or time.monotonic() - last > idle:
                return
            continue
        last = time.monotonic()
        with conn:
            if not answer(conn):
                return


def _answer(
    conn: socket.socket,
    stamp: str,
    mine: dict[str, Any] | None,
    memory: Any,
    lexical: bool,
    tally: list[int],
) -> bool:
    """Answer one request (``{"count": true}``: how many prompts it answered); False when the
    server should leave (its code is out of date). A request for another tree than ``mine``
    (its socket linked or moved to that tree's path) is refused."""
    from ..store.session import hot

    conn.settimeout(ASK_TIMEOUT)
    try:
        request = json.loads(_line(conn, MAX_REQUEST, time.monotonic() + ASK_TIMEOUT))
        if not isinstance(request, dict):
            raise ValueError("not an object")
        if request.get("count") is True:
            conn.sendall(json.dumps({"answered": tally[0]}).encode() + b"\n")
            return True
        if request.get("stamp") != stamp:
            conn.sendall(b'{"stale": true}\n')
            return False
        if request.get("tree") != mine:
            raise ValueError(f"this warm process answers for another tree ({memory.root})")
        prompt, budget = request.get("prompt"), request.get("budget")
        session_file = request.get("session_file")
        if not isinstance(prompt, str) or not isinstance(budget, int) or isinstance(budget, bool):
            raise ValueError("prompt and budget")
        with hot.using(session_file if isinstance(session_file, str) else None):
            markdown = memory.recall(prompt, budget=budget, lexical=lexical).markdown
        tally[0] += 1
        conn.sendall(json.dumps({"markdown": markdown}).encode("utf-8") + b"\n")
    except Exception as err:  # noqa: BLE001 - one bad question never stops the server
        with contextlib.suppress(OSError):
            conn.sendall(json.dumps({"error": " ".join(str(err).split())}).encode() + b"\n")
    return True


def _alive(path: Path) -> bool:
    """Whether a server answers at ``path``: its lock is held."""
    import fcntl

    try:
        with open(f"{path}.lock", "a+") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except FileNotFoundError:
        return False
    except OSError:
        return True
    return False


def _line(conn: socket.socket, limit: int, deadline: float) -> bytes:
    """One line from ``conn``, at most ``limit`` bytes, before ``deadline``."""
    data = b""
    while not data.endswith(b"\n"):
        if time.monotonic() > deadline:
            raise TimeoutError("no whole line in time")
        chunk = conn.recv(65536)
        if not chunk:
            break
        data += chunk
        if len(data) > limit:
            raise ValueError("over the size limit")
    return data
