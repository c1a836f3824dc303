"""``python -S .../zigzag/steps/client.py STEP ARGS...``: run one workflow step, warm if possible.

The workflow runs it without the site module (``-S``: the package's editable-install finder alone
costs more than the client); the site module is loaded only if the step runs in this process.
``python -m zigzag.steps.client STEP ARGS...`` does the same, with a slower start.

Every rule of the workflow runs its step through this command (``STEP`` is a ``zigzag step``
sub-command, e.g. ``sum PLAN --cache CACHE --output RESULTS --log LOG``). Starting Python and importing
numpy, pandas or matplotlib costs far more than most steps, so the step is handed to a per-user
job server (:mod:`zigzag.steps.server`) that has imported them once and forks one child per job.
The client sends its arguments, working folder, umask and environment, and its standard input,
output and error (file descriptors), so the job prints where it would print in this process;
it forwards SIGINT, SIGTERM and SIGHUP to the job and ends with the job's exit status (or the
signal that ended it). If it dies, the server kills the job.

The server is found by a socket whose name is a fingerprint of the code it runs (interpreter,
package files, installed packages), so an edited package never runs in a stale server. The first
client starts it, under a file lock (clients coming meanwhile wait for it); it exits after
``ZIGZAG_FLOW_IDLE`` seconds (default 60) without jobs. Where no server can be used
(``ZIGZAG_FLOW_WARM=0``, inside a SLURM job unless ``ZIGZAG_FLOW_WARM=1``, no Unix sockets or
``fork``, or the server failed to start), the step runs in this process: same outputs, messages
and exit status.

This module imports only the standard library (not even ``signal``, ``socket`` or ``json``: see
below), so a client costs little more than a bare interpreter start.
"""

from __future__ import annotations

# The public ``signal``, ``socket`` and ``json`` modules build enums or import ``re`` when imported,
# which costs more than everything else this client does; their C cores are used directly.
import _signal
import _socket
import marshal
import os
import select
import sys
import time
import zlib

#: environment variables in the fingerprint: those read when the server imports its modules, and
#: the SLURM job (where the server is forced on, one per SLURM job)
FINGERPRINT_ENV = (
    "PYTHONPATH",
    "PYTHONHASHSEED",
    "OPENBLAS_NUM_THREADS",
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "MPLBACKEND",
    "MPLCONFIGDIR",
    "SLURM_JOB_ID",
)
FORWARDED_SIGNALS = (_signal.SIGINT, _signal.SIGTERM, _signal.SIGHUP)
START_TIMEOUT = 120.0  # s to wait for a server that is importing its modules
FAILED_MARKER_AGE = 600.0  # s during which a failed start sends every client to the fallback
MAX_SOCKET_PATH = 100  # AF_UNIX paths are limited to ~107 bytes


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv == ["--start-server"]:  # no job: the server started, if it can be, for jobs to come
        return 0 if start_server() else 1
    status = run_warm(argv) if warm_enabled(os.environ) else None
    return run_step(argv) if status is None else status


def run_step(argv: list[str]) -> int:
    """Run one step in this process (the fallback, and what a server's child runs)."""
    if sys.flags.no_site:  # started with -S: find the installed packages now
        here = os.path.dirname(os.path.abspath(__file__))
        sys.path[:] = [entry for entry in sys.path if os.path.abspath(entry or ".") != here]
        import site

        site.main()
    from zigzag.steps.cli import main as step

    return step(argv)


def warm_enabled(environ) -> bool:
    """Whether to use the job server: ``ZIGZAG_FLOW_WARM`` 0/1, else on except in a SLURM job
    (a server outliving one SLURM job would run other jobs' work outside their allocation)."""
    switch = environ.get("ZIGZAG_FLOW_WARM", "").strip().lower()
    if switch in ("0", "no", "off", "false"):
        return False
    if switch not in ("1", "yes", "on", "true") and "SLURM_JOB_ID" in environ:
        return False
    return hasattr(_socket, "AF_UNIX") and hasattr(_socket, "SCM_RIGHTS") and hasattr(os, "fork")


# ---------------------------------------------------------------------------------------------
# where the server is: a socket named by the fingerprint of the code it runs
# ---------------------------------------------------------------------------------------------


def package_dir() -> str:
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def fingerprint(package: str | None = None, environ=os.environ) -> str:
    """A hash of what the server's code depends on: interpreter, the package's ``.py`` files
    (paths, sizes, modification times), the site-packages folders and import-time variables."""
    import site

    package = package or package_dir()
    parts = [f"{sys.executable}\0{sys.version}\0{package}\0"]
    for folder, dirs, files in sorted(os.walk(package)):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py"):
                info = os.stat(os.path.join(folder, name))
                parts.append(f"{folder}/{name}\0{info.st_size}\0{info.st_mtime_ns}\0")
    for folder in site.getsitepackages() if hasattr(site, "getsitepackages") else []:
        if os.path.isdir(folder):
            parts.append(f"{folder}\0{os.stat(folder).st_mtime_ns}\0")
    for name in FINGERPRINT_ENV:
        parts.append(f"{name}={environ.get(name)}\0")
    data = "".join(parts).encode()
    # two 32-bit CRCs (zlib imports in no time, hashlib loads OpenSSL): a name, not a secret
    return f"{zlib.crc32(data):08x}{zlib.crc32(data[::-1], 0x5A5A5A5A):08x}"


def server_dir(environ=os.environ) -> str | None:
    """The private folder of the user's servers (mode 0700), or None if it is not safe to use."""
    folder = environ.get("ZIGZAG_FLOW_DIR") or f"/tmp/zigzag-flow-{os.getuid()}"
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        info = os.lstat(folder)
    except OSError:
        return None
    if info.st_uid != os.getuid() or info.st_mode & 0o077 or not os.path.isdir(folder):
        return None  # someone else's folder, or open to others: never trust its sockets
    return folder


class ServerFiles:
    """The files of one job server (its folder and fingerprint ``key``): the socket, the lock of
    its start, its log and the marker of a failed start. (A plain class: the client imports
    nothing it can do without, see above.)"""

    __slots__ = ("socket", "lock", "log", "failed")

    def __init__(self, folder: str, key: str):
        base = os.path.join(folder, key)
        self.socket = f"{base}.sock"
        self.lock = f"{base}.lock"
        self.log = f"{base}.log"
        self.failed = f"{base}.failed"


# ---------------------------------------------------------------------------------------------
# running a job in the server
# ---------------------------------------------------------------------------------------------


class _Job:
    """What the signal handlers see: whether the job was sent, its pid once the server forked it."""

    sent = False
    pid: int | None = None
    pending: list[int] | None = []
    wakeup: int = -1  # read end of the pipe signals write to (signal.set_wakeup_fd)


def run_warm(argv: list[str]) -> int | None:
    """Run the step in the job server; its exit status, or None if no server could take it
    (the job has not started then, so the caller runs it here)."""
    folder = server_dir()
    if folder is None:
        return None
    paths = ServerFiles(folder, fingerprint())
    if len(paths.socket) > MAX_SOCKET_PATH:
        return None
    previous = {sig: _signal.signal(sig, _forward) for sig in FORWARDED_SIGNALS}
    # A signal that comes just before the client blocks reading the server's reply would run its
    # handler only once the read returns, i.e. after the job: the signal also writes to this pipe,
    # which the reads wait on (see _Lines).
    _Job.wakeup, wakeup_w = os.pipe()
    for fd in (_Job.wakeup, wakeup_w):
        os.set_blocking(fd, False)
    previous_wakeup = _signal.set_wakeup_fd(wakeup_w)
    try:
        for _ in range(3):  # a server that just timed out closes connections not yet taken
            connection = _connect(paths)
            if connection is None:
                return None
            try:
                status = _request(connection, argv)
            finally:
                connection.close()
            if status is not None:
                return status
        return None
    finally:
        _signal.set_wakeup_fd(previous_wakeup)
        for sig, handler in previous.items():
            _signal.signal(sig, handler)
        for fd in (_Job.wakeup, wakeup_w):
            os.close(fd)


def start_server() -> bool:
    """Make sure the job server of this code and environment runs (started now if none does),
    without a job (``client.py --start-server``, as the jobs run the client: the fingerprint
    depends on ``-S``): for a caller that will run jobs soon (the Snakefile, in the background
    while Snakemake builds its DAG, so that the first jobs do not wait for the server's imports).
    Whether a server is listening."""
    folder = server_dir() if warm_enabled(os.environ) else None
    if folder is None:
        return False
    paths = ServerFiles(folder, fingerprint())
    if len(paths.socket) > MAX_SOCKET_PATH:
        return False
    connection = _connect(paths)
    if connection is None:
        return False
    connection.close()  # a connection without a request: the server drops it silently
    return True


def _forward(sig: int, frame) -> None:
    if _Job.pid is not None:
        kill_group(_Job.pid, sig)
    elif _Job.sent:  # the pid is on its way
        _Job.pending.append(sig)
    else:  # nothing started yet: end as the signal ends a process
        _die_of(sig)


def _die_of(sig: int) -> None:
    """End this process by the signal ``sig`` (its default action)."""
    if sig not in (_signal.SIGKILL, _signal.SIGSTOP):
        _signal.signal(sig, _signal.SIG_DFL)
    os.kill(os.getpid(), sig)


def kill_group(pid: int, sig: int) -> None:
    """Send ``sig`` to the process group ``pid`` (a job's), if it still exists."""
    try:
        os.killpg(pid, sig)
    except OSError:
        pass


def _connect(paths: ServerFiles) -> _socket.socket | None:
    """A connection to the running server, starting it first if there is none. (Clients that come
    while it starts wait for it: running their jobs themselves meanwhile was measured to cost more
    CPU time, in imports, than the wait.)"""
    connection = _try_connect(paths.socket)
    if connection is not None:
        return connection
    if _recently_failed(paths.failed):
        return None
    import fcntl

    with open(paths.lock, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one client starts the server, the others wait here
        connection = _try_connect(paths.socket)
        if connection is None and not _recently_failed(paths.failed):
            connection = _start_server(paths)
    return connection


def _try_connect(path: str) -> _socket.socket | None:
    connection = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        connection.connect(path)
        return connection
    except OSError:
        connection.close()
        return None


def _recently_failed(marker: str) -> bool:
    try:
        return time.time() - os.stat(marker).st_mtime < FAILED_MARKER_AGE
    except OSError:
        return False


def _start_server(paths: ServerFiles) -> _socket.socket | None:
    """Start a detached server (new session, own log) and connect once it accepts."""
    import subprocess

    with open(paths.log, "w") as log:
        server = subprocess.Popen(
            [sys.executable, "-m", "zigzag.steps.server", paths.socket, package_dir()],
            cwd=os.path.dirname(package_dir()),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            close_fds=True,
            start_new_session=True,
        )
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        connection = _try_connect(paths.socket)
        if connection is not None:
            return connection
        if server.poll() is not None:
            with open(paths.failed, "w") as marker:
                marker.write(
                    f"the job server exited with status {server.returncode}; see {paths.log}\n"
                )
            return None
        time.sleep(0.01)
    return None  # still importing: this job runs here, later ones use the server


def _request(connection: _socket.socket, argv: list[str]) -> int | None:
    """Send the job; wait for its pid, then its end. None if the server did not start it."""
    fds = [fd for fd in (0, 1, 2) if _is_open(fd)]
    umask = os.umask(0)
    os.umask(umask)
    # marshal: the server runs the same interpreter (it is part of the fingerprint)
    message = marshal.dumps(
        {"argv": argv, "cwd": os.getcwd(), "umask": umask, "env": dict(os.environ), "fds": fds}
    )
    data = len(message).to_bytes(8, "big") + message
    try:
        _Job.sent = True
        rights = b"".join(fd.to_bytes(4, sys.byteorder, signed=True) for fd in fds)
        sent = connection.sendmsg([data], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, rights)])
        connection.sendall(data[sent:])
        reply = _Lines(connection)
        first = reply.next()
        if first is None or not first.startswith("pid "):
            return _not_started()  # not started (the server is stopping, or could not fork)
        _Job.pid = int(first.split()[1])
        for sig in _Job.pending:
            kill_group(_Job.pid, sig)
        _Job.pending = None
        outcome = reply.next()
    except OSError:
        if _Job.pid is None:
            return _not_started()
        outcome = None
    if outcome is None:  # the server died while the job ran: stop the job, report it
        kill_group(_Job.pid, _signal.SIGKILL)
        print(
            f"error: the job server stopped while running this job (pid {_Job.pid}); run it again",
            file=sys.stderr,
        )
        return 1
    kind, number = outcome.split()
    if kind == "signal":  # end as the job ended, so the caller sees the same status
        _die_of(int(number))
        return 128 + int(number)
    return int(number)


def _not_started() -> None:
    """The server did not take the job: honour a signal received meanwhile, else try again."""
    _Job.sent = False
    for sig in _Job.pending:
        _forward(sig, None)
    return None


def _is_open(fd: int) -> bool:
    try:
        os.fstat(fd)
        return True
    except OSError:
        return False


class _Lines:
    """Lines read from a socket (None at end of stream)."""

    def __init__(self, connection: _socket.socket):
        self.connection, self.buffer = connection, b""

    def next(self) -> str | None:
        while b"\n" not in self.buffer:
            # wait for the server or a signal: a signal's handler runs as soon as this returns
            readable, _, _ = select.select([self.connection, _Job.wakeup], [], [])
            if _Job.wakeup in readable:
                os.read(_Job.wakeup, 512)
            if self.connection not in readable:
                continue
            chunk = self.connection.recv(4096)
            if not chunk:
                return None
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return line.decode()


if __name__ == "__main__":
    sys.exit(main())
