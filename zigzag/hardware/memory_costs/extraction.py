"""Run CACTI for a batch of memories: each distinct input once, in parallel, its output cached.

The cache holds CACTI's output file per input text (``<cacti folder>/results/<sha256 of the input>.out``),
so a memory asked about again, in this process or any later one, costs no CACTI run.
See docs/reference/memory-costs.md.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from itertools import count
from pathlib import Path
from typing import Sequence

from zigzag.hardware.memory_costs.cacti import CactiFigures, CactiRequest, parse_output
from zigzag.hardware.memory_costs.cacti_build import cacti_executable, cacti_folder

_RUN_TIMEOUT_S = 600
_RUN_NUMBER = count()


class CactiRunFailed(RuntimeError):
    """CACTI ran but gave no figures for one input; the message carries CACTI's last words."""

    def __init__(self, request: CactiRequest, reason: str):
        super().__init__(f"CACTI found no result for a {request.describe()} ({reason})")
        self.request = request


def results_folder() -> Path:
    """Where CACTI outputs are cached (per package version, under the per-user cache folder)."""
    return cacti_folder() / "results"


def cache_key(request: CactiRequest) -> str:
    return hashlib.sha256(request.config_text().encode()).hexdigest()


def extract(
    requests: Sequence[CactiRequest], *, results: Path | None = None, parallel: int | None = None
) -> list[CactiFigures]:
    """CACTI's figures for every request (in order); uncached distinct inputs run ``parallel`` at a
    time (default: the number of CPUs)."""
    folder = results or results_folder()
    outputs = {cache_key(r): r for r in requests}
    missing = {key: r for key, r in outputs.items() if not (folder / f"{key}.out").is_file()}
    if missing:
        executable = cacti_executable()
        folder.mkdir(parents=True, exist_ok=True)
        workers = max(1, min(len(missing), parallel or os.cpu_count() or 1))
        with ThreadPoolExecutor(workers) as pool:
            failures = [
                f
                for f in pool.map(lambda item: _run(executable, *item, folder), missing.items())
                if f
            ]
        if failures:
            raise failures[0]
    return [parse_output((folder / f"{cache_key(r)}.out").read_text()) for r in requests]


def _run(executable: Path, key: str, request: CactiRequest, folder: Path) -> CactiRunFailed | None:
    """Run CACTI on one input in a scratch folder beside the executable (CACTI wants a relative
    input path and its own folder as working directory); cache its output."""
    scratch = Path("runs") / f"{key[:16]}.{os.getpid()}.{next(_RUN_NUMBER)}"
    work = executable.parent / scratch
    work.mkdir(parents=True)
    try:
        (work / "cache.cfg").write_text(request.config_text())
        try:
            done = subprocess.run(
                [f"./{executable.name}", "-infile", str(scratch / "cache.cfg")],
                cwd=executable.parent,
                capture_output=True,
                text=True,
                timeout=_RUN_TIMEOUT_S,
            )
        except subprocess.TimeoutExpired:
            return CactiRunFailed(request, f"no answer within {_RUN_TIMEOUT_S} s")
        output = work / "cache.cfg.out"
        if done.returncode != 0 or not output.is_file():
            said = [
                line.strip() for line in (done.stderr + done.stdout).splitlines() if line.strip()
            ]
            return CactiRunFailed(
                request, f"exit status {done.returncode}: {said[-1] if said else 'no message'}"
            )
        try:
            parse_output(output.read_text())
        except ValueError as exc:
            return CactiRunFailed(request, str(exc))
        tmp = folder / f".{key}.{os.getpid()}.{next(_RUN_NUMBER)}.tmp"
        shutil.copyfile(output, tmp)
        os.replace(tmp, folder / f"{key}.out")
        return None
    finally:
        shutil.rmtree(work, ignore_errors=True)
