"""The workflow's warm job server: ``python -m zigzag.steps.server SOCKET PACKAGE_DIR``.

Started by the first :mod:`zigzag.steps.client` that finds none (detached, in a session of its
own, logging to ``<fingerprint>.log`` beside its socket). It imports the package and its heavy
dependencies once, then serves jobs: per connection it receives the job (arguments, working
folder, umask, environment, standard file descriptors) and forks a child that runs the step
from that same warm state, so jobs run in parallel, each in a process of its own, and nothing
one job does can leak into the next. The server tells the client the child's pid, then how it
ended; if the client goes away first, the child (and its process group) is killed. A child that
crashes ends only itself. The server exits after ``ZIGZAG_FLOW_IDLE`` seconds (default 60)
without jobs, or on SIGTERM once its running jobs are done.
"""

from __future__ import annotations

import gc
import importlib
import os
import selectors
import signal
import socket
import sys
import time
import traceback

from zigzag.steps.client import FORWARDED_SIGNALS, kill_group

#: third-party modules the steps import inside functions (the package's modules are all imported)
HEAVY_MODULES = (
    "numpy",
    "pandas",
    "yaml",
    "onnx",
    "networkx",
    "matplotlib.pyplot",
    "matplotlib.backends.backend_agg",
    "plotly.graph_objects",
    "plotly.io",
    "tqdm",
)
REQUEST_TIMEOUT = 10.0  # s for a connected client to send its job
MAX_REQUEST = 64 << 20


def main(argv: list[str] | None = None) -> int:
    socket_path, package = sys.argv[1:] if argv is None else argv
    idle = float(os.environ.get("ZIGZAG_FLOW_IDLE", "60"))
    log(f"starting for {package} (python {sys.executable}), idle timeout {idle:g} s")
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(
            name, "1"
        )  # as the workflow sets for its jobs; forking after a BLAS pool is unsafe
    started = time.perf_counter()
    preload(package)
    warm_up_figures()
    gc.freeze()  # the children's garbage collections leave the imported objects alone (and unshared pages unwritten)
    log(f"imported {len(sys.modules)} modules in {time.perf_counter() - started:.2f} s")
    os.chdir("/")
    Server(socket_path, idle).serve()
    log("stopped")
    return 0


def log(message: str) -> None:
    print(f"{time.strftime('%H:%M:%S')} [{os.getpid()}] {message}", flush=True)


def preload(package: str) -> None:
    """Import every module of the package and the heavy libraries the steps use (failures are
    logged: the job that needs such a module reports the error as it would in its own process)."""
    import zigzag

    if os.path.dirname(os.path.abspath(zigzag.__file__)) != package:
        raise SystemExit(
            f"this interpreter imports zigzag from {zigzag.__file__}, not from {package}"
        )
    import matplotlib

    matplotlib.use("Agg")
    names = [*HEAVY_MODULES]
    for folder, dirs, files in sorted(os.walk(package)):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        prefix = "zigzag" + folder[len(package) :].replace(os.sep, ".")
        names += [
            f"{prefix}.{name[:-3]}".removesuffix(".__init__")
            for name in sorted(files)
            if name.endswith(".py") and name != "__main__.py"
        ]
    for name in names:
        try:
            importlib.import_module(name)
        except Exception as exc:  # noqa: BLE001 - logged; the job needing it fails as it would alone
            log(f"cannot import {name}: {exc!r}")


def warm_up_figures() -> None:
    """Draw and encode one small figure, so that every child finds the fonts loaded and the PNG
    writer imported (matplotlib and Pillow do both on first use)."""
    import io

    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(2, 2))
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    axes.plot([0, 1], label="warm-up")
    axes.legend(title="warm-up")
    axes.set_xlabel("warm-up")
    for fmt in ("png", "svg", "pdf"):
        figure.savefig(io.BytesIO(), format=fmt)


class Server:
    """The accept loop: one forked child per job, its end reported to its client."""

    def __init__(self, socket_path: str, idle: float):
        self.path, self.idle = socket_path, idle
        self.jobs: dict[int, socket.socket | None] = {}  # running child -> its client's connection
        self.started: dict[int, tuple[float, str]] = {}
        self.stopping = False
        self.selector = selectors.DefaultSelector()
        self.wakeup_r, wakeup_w = os.pipe()
        for fd in (self.wakeup_r, wakeup_w):
            os.set_blocking(fd, False)
        signal.set_wakeup_fd(wakeup_w)  # SIGCHLD and SIGTERM wake the selector
        self.wakeup_w = wakeup_w
        signal.signal(signal.SIGCHLD, lambda *_: None)
        for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
            signal.signal(sig, self._stop)
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        if os.path.exists(socket_path):
            os.unlink(socket_path)  # a dead server's socket (the client found nobody listening)
        self.listener.bind(socket_path)
        self.inode = os.stat(socket_path).st_ino
        self.listener.listen(128)
        self.listener.setblocking(False)
        self.selector.register(self.listener, selectors.EVENT_READ, self._accept)
        self.selector.register(self.wakeup_r, selectors.EVENT_READ, self._wakeup)
        log(f"listening on {socket_path}")

    def serve(self) -> None:
        last_active = time.monotonic()
        while True:
            if self.stopping:
                self._close_listener()
            now = time.monotonic()
            if self.jobs:
                last_active = now
            elif self.stopping or now - last_active >= self.idle:
                break
            timeout = None if self.jobs else self.idle - (now - last_active)
            for key, _ in self.selector.select(timeout):
                try:
                    key.data(key.fileobj)
                except Exception:  # noqa: BLE001 - one bad connection never stops the server
                    log("error while serving a connection:\n" + traceback.format_exc())
            self._reap()
        self._close_listener()

    def _stop(self, sig, frame) -> None:
        self.stopping = True  # the loop closes the socket, then waits for the running jobs

    def _close_listener(self) -> None:
        """Stop taking jobs: remove the socket (if it is still ours), close it."""
        if self.listener.fileno() < 0:
            return
        try:
            if os.stat(self.path).st_ino == self.inode:
                os.unlink(self.path)
        except OSError:
            pass
        self.selector.unregister(self.listener)
        self.listener.close()

    def _wakeup(self, fd) -> None:
        try:
            while os.read(fd, 512):
                pass
        except BlockingIOError:
            pass

    def _accept(self, listener) -> None:
        connection, _ = listener.accept()
        try:
            request, fds = _receive(connection)
        except EOFError:  # closed before any request: a client that only made sure we run
            connection.close()
            return
        except (OSError, ValueError) as exc:
            log(f"dropped a request: {exc!r}")
            connection.close()
            return
        # The job's signals wait until the child has its own handlers: a SIGTERM the client
        # forwards right after the fork must not reach the server's handler in the child.
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, FORWARDED_SIGNALS)
        try:
            pid = os.fork()
        except OSError as exc:  # the client runs the job itself
            log(f"cannot fork: {exc!r}")
            pid = None
        if pid == 0:
            self._run_child(connection, request, fds, blocked)
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        for fd in fds:
            os.close(fd)
        if pid is None:
            connection.close()
            return
        try:
            os.setpgid(pid, pid)
        except OSError:
            pass  # the child did it first (or has ended already)
        self.jobs[pid] = connection
        self.started[pid] = (time.perf_counter(), " ".join(request["argv"][:1]))
        log(f"job {pid} {self.started[pid][1]}: started")
        connection.setblocking(True)
        try:
            connection.sendall(f"pid {pid}\n".encode())
        except OSError:
            self._client_gone(connection)
            return
        self.selector.register(connection, selectors.EVENT_READ, self._client_gone)

    def _client_gone(self, connection) -> None:
        """The client closed its connection (it sends nothing after its job): kill its job."""
        for pid, owner in self.jobs.items():
            if owner is connection:
                log(f"client of job {pid} gone: killing the job")
                kill_group(pid, signal.SIGKILL)
                self.jobs[pid] = None
        self._drop(connection)

    def _drop(self, connection) -> None:
        try:
            self.selector.unregister(connection)
        except (KeyError, ValueError):
            pass
        connection.close()

    def _reap(self) -> None:
        while self.jobs:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            connection = self.jobs.pop(pid, None)
            started, step = self.started.pop(pid, (time.perf_counter(), "?"))
            outcome = (
                f"signal {os.WTERMSIG(status)}"
                if os.WIFSIGNALED(status)
                else f"exit {os.waitstatus_to_exitcode(status)}"
            )
            log(f"job {pid} {step}: {outcome} after {time.perf_counter() - started:.3f} s")
            if connection is not None:
                try:
                    connection.sendall(f"{outcome}\n".encode())
                except OSError:
                    pass
                self._drop(connection)

    def _run_child(self, connection, request: dict, fds: list[int], mask: set) -> None:
        """In the forked child: become the job's process, run the step, exit with its status
        (``mask``: the signal mask to restore once the job's handlers are in place)."""
        status = 1
        try:
            os.setpgid(0, 0)
            signal.set_wakeup_fd(-1)
            for sig in (signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP):
                signal.signal(sig, signal.SIG_DFL)
            signal.signal(signal.SIGINT, signal.default_int_handler)
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)  # signals sent meanwhile arrive now
            for fd in (self.wakeup_r, self.wakeup_w):
                os.close(fd)
            for other in [
                self.listener,
                connection,
                *(c for c in self.jobs.values() if c is not None),
            ]:
                other.close()
            self.selector.close()
            _become_job(request, fds)
            from zigzag.steps.client import run_step

            status = run_step(request["argv"])
        except SystemExit as exc:
            status = _exit_code(exc)
        except KeyboardInterrupt:
            traceback.print_exc()
            _flush()
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGINT)
        except BaseException:  # noqa: BLE001 - as an uncaught exception ends a process
            traceback.print_exc()
            status = 1
        finally:
            try:
                import atexit

                atexit._run_exitfuncs()
            finally:
                _flush()
                os._exit(status if isinstance(status, int) else 1)


def _receive(connection: socket.socket) -> tuple[dict, list[int]]:
    """One request: an 8-byte length, then that many bytes of marshal data (the client runs this
    interpreter); the fds come with the first part."""
    import marshal

    connection.setblocking(True)
    connection.settimeout(REQUEST_TIMEOUT)
    data, fds, _, _ = socket.recv_fds(connection, 1 << 16, 3)
    if not data and not fds:
        raise EOFError("closed without a request")
    try:
        if len(data) < 8:
            raise ValueError("short request")
        size = int.from_bytes(data[:8], "big")
        if size > MAX_REQUEST:
            raise ValueError(f"request of {size} bytes")
        data = data[8:]
        while len(data) < size:
            chunk = connection.recv(min(1 << 20, size - len(data)))
            if not chunk:
                raise ValueError("truncated request")
            data += chunk
        request = marshal.loads(data)
        if not isinstance(request, dict):
            raise ValueError("not a job")
        if len(request["fds"]) != len(fds):
            raise ValueError("file descriptors missing")
        return request, fds
    except BaseException:
        for fd in fds:
            os.close(fd)
        raise


def _become_job(request: dict, fds: list[int]) -> None:
    """The client's standard streams, folder, umask, environment and arguments."""
    for target in (0, 1, 2):
        if target not in request["fds"]:
            os.close(target)
    for target, fd in zip(request["fds"], fds):
        if fd != target:
            os.dup2(fd, target)
            os.close(fd)
    os.chdir(request["cwd"])
    os.umask(request["umask"])
    os.environ.clear()
    os.environ.update(request["env"])
    from zigzag.steps import client

    sys.argv = [client.__file__, *request["argv"]]
    encoding, errors = sys.stdout.encoding, sys.stdout.errors
    if 0 in request["fds"]:
        sys.stdin = sys.__stdin__ = open(0, encoding=encoding, errors=errors, closefd=False)
    if 1 in request["fds"]:
        sys.stdout = sys.__stdout__ = open(
            1,
            "w",
            buffering=1 if os.isatty(1) else -1,
            encoding=encoding,
            errors=errors,
            closefd=False,
        )
    if 2 in request["fds"]:
        sys.stderr = sys.__stderr__ = open(
            2, "w", buffering=1, encoding=encoding, errors="backslashreplace", closefd=False
        )


def _exit_code(exc: SystemExit) -> int:
    """The status Python ends with for ``sys.exit(code)``."""
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code & 0xFF
    print(exc.code, file=sys.stderr)
    return 1


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass


if __name__ == "__main__":
    sys.exit(main())
