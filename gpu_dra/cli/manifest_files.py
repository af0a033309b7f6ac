"""Kubernetes objects of a run written as YAML files, one per object, into a folder the user may share.

The folder may hold files of the user's own (a kustomization.yaml, notes) or be any folder at all (`--out .`);
cli/output_folder writes it and keeps the record of the files gpu-dra wrote there (`MANIFESTS`), so the next run
replaces and prunes only those.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from gpu_dra.cli.output_folder import MANIFESTS, FolderError, write_folder

if TYPE_CHECKING:  # the type only: lint writes YAML and loads no Pulumi
    from gpu_dra.cli.offline import ProgramRun

OUT_HELP = ("one YAML file per object under <namespace>/ or _cluster/. gpu-dra lists what it wrote in "
            f"<folder>/{MANIFESTS.name} and on the next run replaces and prunes only those files; it never deletes or "
            "overwrites a file of yours nor writes through a link, and stops before writing anything if one is in "
            "the way")


def kubernetes_objects(run: ProgramRun) -> list[dict[str, Any]]:
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


def write_manifests(objects: list[dict[str, Any]], out: Path, option: str = "--out") -> list[Path]:
    """One YAML file per object under `out/<namespace or _cluster>/`; files of an earlier run that are no longer
    produced are pruned (cli/output_folder: only those the record lists, never through a link, the run written
    whole). Raises FolderError, having written nothing, when a file would replace one of the user's.
    `option`: the command's flag naming the folder, as the messages name it."""
    files: dict[str, bytes] = {}
    for obj in objects:
        meta = obj.get("metadata", {})
        relative = f"{meta.get('namespace') or '_cluster'}/{obj['kind'].lower()}-{meta['name']}.yaml"
        if relative in files:
            raise FolderError(f"two objects would be written to {relative} ({obj.get('apiVersion')} {obj['kind']} "
                              f"{meta['name']}); nothing was written")
        ordered = {k: obj[k] for k in ("apiVersion", "kind", "metadata", "spec") if k in obj}
        files[relative] = dump_yaml(ordered).encode()
    return write_folder(out, files, MANIFESTS, option)
