"""The feasibility screen's verdicts kept in the sweep's cache folder, so later searches (other
seeds, other sweeps over the same structures) do not check a layer again.

A verdict depends only on the layer (its signature, without its name), the accelerator without
costs and areas (its structure and the sizes and ports that decide a fit) and the search options
that choose spatial mappings and loop orderings (:mod:`zigzag.sweep.guided_screen`). The verdicts
of one such accelerator and options are one file, ``<cache>/screen/<digest>.json``, whose name
hashes that text and the package's model version (a change to the search's code gives other
files); inside, per layer signature (hashed), the reason the layer cannot run, or null when it
can. The file is sealed (:mod:`zigzag.io.sealed`: its key first, its SHA-256 last) and written
atomically; one that fails the check is said in one warning, never used, and removed (its
verdicts are checked again). A write merges what another search wrote meanwhile.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from zigzag.io.sealed import DamagedFile, damage_warning, read_sealed, write_sealed
from zigzag.io.written_notes import file_stamp

#: the folder under the cache
FOLDER = "screen"
#: a stored verdict for a layer that runs
RUNS = None


@dataclass
class ScreenStore:
    """Verdicts under ``cache``, per structure (:meth:`get`, :meth:`put`, :meth:`flush`); what
    was read or written is kept in memory (``_loaded``), new verdicts until :meth:`flush`."""

    cache: Path
    _loaded: dict[str, dict[str, str | None]] = field(default_factory=dict)
    _dirty: set[str] = field(default_factory=set)
    #: warnings of damaged files found, for the caller to tell (it may have silenced logging)
    damaged: list[str] = field(default_factory=list)
    #: each file's stamp when this store last read or wrote it (zigzag.io.written_notes)
    _stamps: dict[str, list[int] | None] = field(default_factory=dict)

    def path(self, structure: str) -> Path:
        return Path(self.cache) / FOLDER / f"{structure}.json"

    def get(self, structure: str, layer: str) -> tuple[bool, str | None]:
        """``(known, reason)`` for ``layer`` (a signature's digest) on ``structure`` (a digest)."""
        verdicts = self._verdicts(structure)
        return (layer in verdicts, verdicts.get(layer))

    def put(self, structure: str, layer: str, reason: str | None) -> None:
        self._verdicts(structure)[layer] = reason
        self._dirty.add(structure)

    def flush(self) -> None:
        """Write the structures with new verdicts, merged with what their files hold now (read
        again only when a file is no longer as this store last read or wrote it)."""
        for structure in sorted(self._dirty):
            path = self.path(structure)
            theirs = (
                {} if file_stamp(path) == self._stamps.get(structure) else self._read(structure)
            )
            verdicts = {**theirs, **self._loaded[structure]}
            self._loaded[structure] = verdicts
            write_sealed(path, {"verdicts": verdicts}, key=structure)
            self._stamps[structure] = file_stamp(path)
        self._dirty.clear()

    def _verdicts(self, structure: str) -> dict[str, str | None]:
        if structure not in self._loaded:
            self._loaded[structure] = self._read(structure)
        return self._loaded[structure]

    def _read(self, structure: str) -> dict[str, str | None]:
        path = self.path(structure)
        self._stamps[structure] = file_stamp(path)  # before reading: a later write shows
        try:
            data = read_sealed(path, key=structure)
            verdicts = data["verdicts"]
            if not isinstance(verdicts, dict) or not all(
                isinstance(v, str) or v is None for v in verdicts.values()
            ):
                raise DamagedFile(path, "its verdicts are not reasons or null")
            return dict(verdicts)
        except FileNotFoundError:
            return {}
        except (DamagedFile, KeyError) as exc:
            reason = (
                exc if isinstance(exc, DamagedFile) else DamagedFile(path, "not a verdicts file")
            )
            self.damaged.append(damage_warning(reason, "removed; its verdicts are checked again"))
            path.unlink(missing_ok=True)
            return {}
