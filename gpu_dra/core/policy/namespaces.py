"""Team namespaces keep what runs in them: a team file's namespace renamed, or a team dropped from a stack, would have
Pulumi replace or delete the Namespace, and Kubernetes deletes everything in a deleted namespace. The program keeps
the Namespace on deletion (retainOnDelete) and, where the stack protects team namespaces, the engine refuses it; this
rule tells the pull request, beside the change, what the stack would stop managing.

No resource carries what the namespaces were: `gpu-dra check --base REF` (and `--pack-config --base REF`, for the
engine run) reads the stack and team files at the base of the change and writes them to the pack config as
`namespacesBefore` (gpu_dra.cli.base_ref). Without it the rule has nothing to compare and stays silent.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpu_dra.core.data import UNKNOWN
from gpu_dra.core.facts.pulumi_types import kubernetes_type
from gpu_dra.core.findings import NOT_JUDGED, Finding
from gpu_dra.core.policy.resources import Context, Resource, error, rendered_by_chart
from gpu_dra.core.render import names

RULE = "team-namespace-kept"
NAMESPACE = kubernetes_type("v1", "Namespace")


def _lost(before: Mapping[str, Any]) -> str:
    """What the stack stops managing in the old namespace: its quota and claim templates, which Pulumi deletes."""
    parts = []
    if before.get("quota"):
        parts.append("its ResourceQuota")
    templates = [str(t) for t in before.get("templates") or []]
    if templates:
        parts.append(f"{len(templates)} ResourceClaimTemplate(s) ({', '.join(templates)})")
    deleted = " and ".join(parts) if parts else "nothing of its own"
    return (f"Pulumi deletes {deleted} in namespace {before['namespace']}; pods there keep the claims they hold, and "
            "new pods referring to those templates fail to start")


def _kept(protected: bool) -> str:
    if protected:
        return ("the Namespace is protected here, so `pulumi up` refuses the change until the stack's "
                "gpu-dra:protectTeamNamespaces is false")
    return ("the Namespace itself is kept (retainOnDelete) with everything running in it, no longer managed by the "
            "stack: delete it by hand once its workloads have moved")


def team_namespace_kept(resources: list[Resource], context: Context) -> list[Finding]:
    if context.namespaces_before is None:
        return []
    now = {r.name.removesuffix(names.namespace("")): r for r in resources
           if r.type == NAMESPACE and r.name.endswith(names.namespace("")) and not rendered_by_chart(r.urn)}
    out = []
    for before in context.namespaces_before:
        team, namespace = str(before["team"]), str(before["namespace"])
        resource = now.get(team)
        if resource is None:
            out.append(error(RULE, f"team {team} is no longer hosted by this stack: {_lost(before)}; "
                                   f"{_kept(context.protect_team_namespaces)}", None,
                             fix=f"keep team {team} in gpu-dra:teams until its workloads have moved, or accept the "
                                 "loss and approve the change"))
            continue
        name = resource.metadata.get("name")
        if name is UNKNOWN or name is None:
            out.append(Finding(RULE, NOT_JUDGED, f"the name of team {team}'s namespace is not known in this preview",
                               object=resource.urn, path="metadata.name"))
        elif name != namespace:
            out.append(error(RULE, f"team {team}'s namespace {namespace} would become {name}: Pulumi replaces the "
                                   f"Namespace; {_lost(before)}; {_kept(resource.protect)}", resource, "metadata.name",
                             fix=f"keep namespace.name {namespace} in the team's file, or move the team's workloads "
                                 f"to {name} first"))
    return out
