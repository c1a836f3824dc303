"""The CACTI 7 executable: built once per user from the sources of the ``hwcomponents-cacti`` package.

The package's own binary needs a newer C library than many machines have, so its sources are copied
into the per-user cache folder (``$XDG_CACHE_HOME/zigzag-flow/cacti/<package version>/``, by default
under ``~/.cache``) and compiled there with ``make opt`` on first use; a file lock makes parallel
processes build it once. Nothing is ever written into the installed package.
See docs/reference/memory-costs.md.
"""

from __future__ import annotations

import fcntl
import importlib.util
import os
import shutil
import subprocess
from contextlib import contextmanager
from importlib import metadata
from pathlib import Path

PACKAGE = "hwcomponents-cacti"
#: how to get CACTI, for error messages
INSTALL_HINT = (
    f"install the {PACKAGE} package (Python >= 3.12: pip install -e . in the repository does it) "
    "and make sure g++ and make are on PATH"
)
_BUILD_TIMEOUT_S = 900


class CactiUnavailable(RuntimeError):
    """CACTI cannot be found, built or run here; the message says why and what to do."""


def cache_root() -> Path:
    """The per-user cache folder of zigzag-flow (``$XDG_CACHE_HOME/zigzag-flow`` or ``~/.cache/zigzag-flow``)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "zigzag-flow"


def package_sources() -> tuple[Path, str]:
    """The CACTI source folder of the installed package and the package's version."""
    try:
        version = metadata.version(PACKAGE)
        spec = importlib.util.find_spec("hwcomponents_cacti")  # located, not imported
    except (metadata.PackageNotFoundError, ImportError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        raise CactiUnavailable(
            f"the {PACKAGE} package, which provides CACTI 7, is not installed; {INSTALL_HINT}"
        ) from None
    sources = Path(next(iter(spec.submodule_search_locations))) / "cacti"
    if not (sources / "makefile").is_file():
        raise CactiUnavailable(
            f"the {PACKAGE} package at {sources.parent} has no CACTI sources; reinstall it"
        )
    return sources, version


def cacti_folder() -> Path:
    """The folder of this package version's CACTI build and its cached results."""
    return cache_root() / "cacti" / package_sources()[1]


def cacti_executable() -> Path:
    """The CACTI executable, built on first use (CACTI runs from its own folder: it reads tech_params/)."""
    sources, version = package_sources()
    folder = cache_root() / "cacti" / version
    build = folder / "build"
    if (build / "cacti").is_file():
        return build / "cacti"
    folder.mkdir(parents=True, exist_ok=True)
    with _locked(folder / "build.lock"):
        if not (build / "cacti").is_file():  # another process may have built it meanwhile
            _build(sources, build)
    return build / "cacti"


@contextmanager
def _locked(path: Path):
    with open(path, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _build(sources: Path, build: Path) -> None:
    """Copy the sources to a fresh folder, compile there, and move the result to ``build``."""
    work = build.with_name(f"build.{os.getpid()}.tmp")
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(
        sources, work, ignore=shutil.ignore_patterns("cacti", "obj_*", "*.o", "__pycache__")
    )
    try:
        if shutil.which("make") and shutil.which("g++"):
            jobs = f"-j{min(4, os.cpu_count() or 1)}"
            done = subprocess.run(
                ["make", jobs, "opt"],
                cwd=work,
                capture_output=True,
                text=True,
                timeout=_BUILD_TIMEOUT_S,
            )
            if done.returncode != 0 or not (work / "cacti").is_file():
                last = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
                raise CactiUnavailable(
                    f"building CACTI in {work} failed ({last[0]}); {INSTALL_HINT}"
                )
        elif not _bundled_binary_runs(sources, work):
            raise CactiUnavailable(
                f"g++ and make are needed to build CACTI ({PACKAGE}'s own binary does not run "
                f"here); {INSTALL_HINT}"
            )
        shutil.rmtree(build, ignore_errors=True)  # an incomplete build left by hand
        os.replace(work, build)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _bundled_binary_runs(sources: Path, work: Path) -> bool:
    """Copy the package's prebuilt binary into ``work`` if it runs on this machine."""
    binary = sources / "cacti"
    if not binary.is_file():
        return False
    shutil.copy2(binary, work / "cacti")
    try:
        probe = subprocess.run(
            ["./cacti", "-infile", "cache.cfg"], cwd=work, capture_output=True, timeout=120
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    finally:
        for leftover in work.glob("cache.cfg.out"):
            leftover.unlink()
    return probe.returncode == 0
