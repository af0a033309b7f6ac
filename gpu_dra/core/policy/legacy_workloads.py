"""The pack config's `legacyWorkloads`, which the rule legacy-workloads-placed (policy/migration.py) places: what
each workload the teams name (`workloads:` in their files) asks of a node on a stack, computed with `gpu-dra
migrate`'s core from the manifests the shell has read.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from gpu_dra.core.analysis import migrate
from gpu_dra.core.config.models import Stack
from gpu_dra.core.findings import ConfigError, config_finding
from gpu_dra.core.yamlsource import Located


@dataclass(frozen=True)
class WorkloadsEntry:
    """An entry of a team file's `workloads:`: a mistake in the manifests it names is reported on its line."""

    team: str
    team_file: str  # as findings show it
    index: int
    line: int | None

    def refused(self, message: str) -> ConfigError:
        return ConfigError([config_finding(self.team_file, f"workloads.{self.index}", message, self.line)])


@dataclass(frozen=True)
class NamedManifest:
    """A manifest file a team names, as read: the entry naming it, its path in the repository, the name it was read
    under (migrate's messages and each Workload's `source` carry it) and its documents."""

    entry: WorkloadsEntry
    path: str
    source: str
    documents: Sequence[Located]


def needing_device_plugin(stack: Stack, manifests: Iterable[NamedManifest]) -> list[dict[str, Any]]:
    """The workloads of `manifests`, in the order the teams name them, whose pods need NVIDIA's device plugin on
    this stack: those not served by an effective extendedResourceName mapping, not on claims already and not
    DaemonSets (whose pods follow the nodes), with what one pod asks of a node. A manifest that is not a valid
    workload, or a workload in two manifests, is a config error on the entry naming it; `manifests` may be read
    one by one as they are taken, so a mistake stops the reading there."""
    version = stack.config.cluster.kubernetes_version
    workloads: list[migrate.Workload] = []
    claims: list[dict[str, Any]] = []
    first_in: dict[tuple[str, str], NamedManifest] = {}
    read_from: dict[str, NamedManifest] = {}
    for manifest in manifests:
        try:
            found, more = migrate.read_workloads([(manifest.source, manifest.documents)], version)
        except migrate.MigrateError as error:
            raise manifest.entry.refused(str(error)) from None
        for workload in found:
            earlier = first_in.setdefault((workload.kind, workload.key), manifest)
            if earlier is not manifest:
                raise manifest.entry.refused(f"{workload.label} is in {manifest.path} and in {earlier.path}: give "
                                             "it once")
        read_from[manifest.source] = manifest
        workloads += found
        claims += more
    out: list[dict[str, Any]] = []
    platform = stack.config.cluster.platform
    for verdict in migrate.plan(stack, workloads, claims, rewrites=False).verdicts:  # in the order teams name them
        workload, placement = verdict.workload, verdict.placement
        need = workload.per_pod()
        pods = placement.pods - placement.mapped - placement.claims
        if not need or workload.replicas is None or pods <= 0:
            continue
        manifest = read_from[workload.source]
        spec = dict(workload.spec)
        # What admission adds before the scheduler sees the pod, as migrate places it.
        spec["tolerations"] = [*(spec.get("tolerations") or []), *migrate.admission_tolerations(need, platform)]
        out.append({
            "workload": workload.label, "team": manifest.entry.team, "teamFile": manifest.entry.team_file,
            "line": manifest.entry.line, "file": manifest.path, "pods": pods, "gpus": need.get(migrate.GPU, 0),
            "other": sorted(r for r in need if r != migrate.GPU),
            **{key: spec[key] for key in ("nodeSelector", "affinity", "tolerations") if spec.get(key)}})
    return out
