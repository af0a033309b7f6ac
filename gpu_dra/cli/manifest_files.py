"""Kubernetes objects of a run written as YAML files, one per object, into a folder the user may share.

The folder may hold files of the user's own (a kustomization.yaml, notes) or be any folder at all (`--out .`).
So gpu-dra records what it wrote in `<folder>/.gpu-dra-files` and on the next run replaces and prunes only the
files listed there. A file it would write that exists but is not listed is the user's: the run stops before
writing anything. The record is not a manifest (kubectl apply -f reads only .yaml, .yml and .json files).
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath
from typing import Any

import yaml

from gpu_dra.cli.common import cut, uninterrupted

RECORD = ".gpu-dra-files"
_HEADER = "# Files gpu-dra wrote here; the next render or preview replaces and prunes these, nothing else.\n"


class OutputError(Exception):
    """The folder cannot receive the files; nothing was written."""


def kubernetes_objects(run: Any) -> list[dict[str, Any]]:
    return [_integral(r.inputs) for r in run.resources
            if r.type.startswith("kubernetes:") and r.custom and "kind" in r.inputs]


def _integral(value: Any) -> Any:
    """The engine sends every number as a float; manifests are written with the integers users wrote."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: _integral(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_integral(v) for v in value]
    return value


class _BlockDumper(yaml.SafeDumper):
    """Multi-line strings (CEL expressions) as `|` blocks, the way people write them."""


_BlockDumper.add_representer(str, lambda dumper, text: dumper.represent_scalar(
    "tag:yaml.org,2002:str", text, style="|" if "\n" in text else None))


def dump_yaml(data: Any) -> str:
    return yaml.dump(data, Dumper=_BlockDumper, sort_keys=False)


def _recorded(out: Path) -> set[str]:
    """Relative paths listed in the record; anything that would leave the folder or is not YAML is ignored."""
    try:
        lines = (out / RECORD).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return set()
    paths = set()
    for line in lines:
        path = PurePosixPath(line.strip())
        if line.strip() and not line.startswith("#") and not path.is_absolute() and ".." not in path.parts \
                and path.suffix == ".yaml":
            paths.add(str(path))
    return paths


def _holds(path: Path, text: str) -> bool:
    try:
        return path.read_text(encoding="utf-8") == text
    except (OSError, UnicodeDecodeError):
        return False


def _write_record(out: Path, paths: set[str]) -> None:
    _atomic_write(out / RECORD, _HEADER + "".join(f"{p}\n" for p in sorted(paths)))


def _atomic_write(path: Path, text: str) -> None:
    """Readers (and an interrupted run) see the old file or the new one, never half of one."""
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)


def write_manifests(objects: list[dict[str, Any]], out: Path, option: str = "--out") -> list[Path]:
    """One YAML file per object under `out/<namespace or _cluster>/`; files of an earlier run that are no longer
    produced are pruned. Raises OutputError, having written nothing, when a file would replace one of the user's.
    A Ctrl-C while the files are written ends the run once they all are, so the folder holds one run's output.
    `option`: the command's flag naming the folder, as the messages name it."""
    try:
        if out.exists() and not out.is_dir():
            raise OutputError(f"{cut(str(out))} is a file; {option} takes a folder")
    except OSError as error:  # a name too long, a folder that cannot be searched
        raise OutputError(f"{option} {cut(str(out))}: {error.strerror or error}") from None
    files: dict[str, str] = {}
    for obj in objects:
        meta = obj.get("metadata", {})
        relative = f"{meta.get('namespace') or '_cluster'}/{obj['kind'].lower()}-{meta['name']}.yaml"
        if relative in files:
            raise OutputError(f"two objects would be written to {relative} ({obj.get('apiVersion')} {obj['kind']} "
                              f"{meta['name']}); nothing was written")
        ordered = {k: obj[k] for k in ("apiVersion", "kind", "metadata", "spec") if k in obj}
        files[relative] = dump_yaml(ordered)
    previous = _recorded(out)
    # A file already holding exactly what would be written loses nothing (an output folder from before the record).
    foreign = sorted(p for p in files if p not in previous and (out / p).exists() and not _holds(out / p, files[p]))
    if foreign:
        raise OutputError(f"{cut(str(out / foreign[0]))} exists and gpu-dra did not write it (it is not listed in "
                          f"{cut(str(out / RECORD))}); move it away or choose another {option}. Nothing was written")
    try:
        with uninterrupted():
            written = _write(files, previous, out)
    except OSError as error:
        raise OutputError(f"cannot write to {cut(str(out))}: {error.strerror or error}") from None
    return written


def _write(files: dict[str, str], previous: set[str], out: Path) -> list[Path]:
    """Write `files` (relative path -> text) and prune what `previous` listed and this run no longer writes."""
    out.mkdir(parents=True, exist_ok=True)
    _write_record(out, previous | set(files))  # first: a run that fails half-way still owns what it wrote
    written = []
    for relative, text in files.items():
        path = out / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        _atomic_write(path, text)
        written.append(path)
    for relative in sorted(previous - set(files)):
        stale = out / relative
        stale.unlink(missing_ok=True)
        if stale.parent != out and stale.parent.is_dir() and not any(stale.parent.iterdir()):
            stale.parent.rmdir()
    _write_record(out, set(files))
    return written
