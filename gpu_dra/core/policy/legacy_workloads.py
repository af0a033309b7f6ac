"""The workloads the teams name (`workloads:` in their files), read once from the manifests the shell has read, for
two pack config entries: `legacyWorkloads`, which the rule legacy-workloads-placed (policy/migration.py) places (what
each asks of a node on a stack, computed with `gpu-dra migrate`'s core), and `queuedWorkloads`, which the rule
kueue-workloads-admissible (policy/queues.py) reports (analysis/queued_workloads.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from gpu_dra.core.analysis import migrate, queued_workloads
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


@dataclass(frozen=True)
class NamedWorkloads:
    """The GPU workloads of the manifests the teams name, in the order they name them, each with the manifest it is
    in, and the claims and claim templates given beside them."""

    workloads: list[tuple[NamedManifest, migrate.Workload]]
    claims: list[dict[str, Any]]


def read_named(stack: Stack, manifests: Iterable[NamedManifest]) -> NamedWorkloads:
    """Read `manifests` (as migrate reads its inputs, at the stack's Kubernetes version). A manifest that is not a
    valid workload, or a workload in two manifests, is a config error on the entry naming it; `manifests` may be
    read one by one as they are taken, so a mistake stops the reading there."""
    version = stack.config.cluster.kubernetes_version
    workloads: list[tuple[NamedManifest, migrate.Workload]] = []
    claims: list[dict[str, Any]] = []
    first_in: dict[tuple[str, str], NamedManifest] = {}
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
            workloads.append((manifest, workload))
        claims += more
    return NamedWorkloads(workloads, claims)


def needing_device_plugin(stack: Stack, named: NamedWorkloads) -> list[dict[str, Any]]:
    """The workloads the teams name whose pods need NVIDIA's device plugin on this stack: those not served by an
    effective extendedResourceName mapping, not on claims already and not DaemonSets (whose pods follow the nodes),
    with what one pod asks of a node."""
    read_from = {workload.source: manifest for manifest, workload in named.workloads}
    workloads = [workload for _, workload in named.workloads]
    claims = named.claims
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


def queued_entries(stack: Stack, named: NamedWorkloads) -> list[dict[str, Any]]:
    """The workloads the teams name that queue in Kueue on this stack and that Kueue would never admit, each at its
    manifest's file and line, with why."""
    out = []
    pairs = [(manifest.entry.team, workload) for manifest, workload in named.workloads]
    manifests = {id(workload): manifest for manifest, workload in named.workloads}
    for judged in queued_workloads.judge_all(stack, pairs):
        if not judged.problems:
            continue
        manifest = manifests[id(judged.workload)]
        out.append({"workload": judged.workload.label, "team": judged.team.name, "queue": judged.queue,
                    "file": manifest.path, "line": judged.workload.line, "problems": list(judged.problems)})
    return out
