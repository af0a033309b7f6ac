"""Explaining a workload's pod on the stack's synthesized fleet with the faithful allocator (analysis/pods), once
per pod shape: what a plan reads of where its claims allocate."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from gpu_dra.core.analysis.explain import Explainer
from gpu_dra.core.analysis.features import features_for
from gpu_dra.core.analysis.inventory import SHARED, Inventory, synthesize
from gpu_dra.core.analysis.pods import PodReport, PodSpec, explain_pods, pods_from_objects
from gpu_dra.core.analysis.stack_nodes import GroupView, cluster_nodes
from gpu_dra.core.config.models import Stack
from gpu_dra.core.dra.claims import ResourceClaim, claims_from_objects, classes_from_objects
from gpu_dra.core.render import manifests


@dataclass(frozen=True)
class PodOutcome:
    """What a plan reads of a pod's report (pods.PodReport): whether its claims allocate together, where, or why not."""

    allocatable: bool
    node: str | None
    nodes: tuple[str, ...]
    reason: str


# The name a pod is explained under when pods alike but for their name share one explanation (PodExplainer.explain):
# not a DNS subdomain, so no object's name; the inputs saying it anywhere else turn the sharing off.
_ANY_NAME = "<a pod name: gpu-dra migrate>"


class PodExplainer:
    """The stack's fleet and claims, and the pod outcomes explained on them so far."""

    def __init__(self, stack: Stack, views: Sequence[GroupView], claim_objects: Sequence[Mapping[str, Any]],
                 cache: dict[str, PodOutcome | None] | None = None):
        self.nodes = cluster_nodes(views)
        self.inventory: Inventory = synthesize(stack.config)
        self.explainer = Explainer(classes_from_objects(manifests.stack_device_classes(stack)),
                                   features=features_for(stack.config.target),
                                   chart_classes=stack.config.installs_driver_chart)
        # The stack's templates and the claims given, parsed once: each workload's pod is explained against them.
        self.claims = claims_from_objects([
            *(manifests.claim_template(team, t) for team in stack.teams for t in team.claim_templates),
            *claim_objects])
        # Whether pods alike but for their name share an explanation (explain): not where the stack or the claims
        # given say _ANY_NAME, which a reason quoting them would have renamed.
        self.renames = not any(_ANY_NAME in text for text in (stack.model_dump_json(), json.dumps(claim_objects,
                                                                                                   default=str)))
        # Pod outcomes by what was explained: the DRA fleet is the same without a device-plugin group, so `--without`
        # reuses them (a claim for more devices than a node has costs the allocator's whole search, 0.5 s on prod).
        self.cache = {} if cache is None else cache

    def explain(self, obj: Mapping[str, Any], extra: Sequence[Mapping[str, Any]] = ()) -> PodOutcome | None:
        """The pod's claims allocated together on the fleet, on the nodes it may use (explain_pods).

        Pods alike but for their name are explained once, under _ANY_NAME: no verdict depends on a pod's name (the
        allocator reads none; explain keys its own verdicts on claims without their names, _claim_shape), which only
        the reason's words carry (the pod's, and its template claims' `<pod>-<entry>`), said with the pod's own."""
        meta = obj.get("metadata")
        name = meta.get("name") if isinstance(meta, Mapping) else None
        if isinstance(meta, Mapping) and isinstance(name, str) and self.renames:
            anonymous = {**obj, "metadata": {**meta, "name": _ANY_NAME}}
            key = json.dumps([anonymous, extra], sort_keys=True, default=str)
            if key.count(_ANY_NAME) == 1:  # else the inputs say it too, and it would be renamed there
                outcome = self._cached(key, anonymous, extra)
                return outcome if outcome is None else replace(outcome, reason=outcome.reason.replace(_ANY_NAME, name))
        return self._cached(json.dumps([obj, extra], sort_keys=True, default=str), obj, extra)

    def _cached(self, key: str, obj: Mapping[str, Any], extra: Sequence[Mapping[str, Any]]) -> PodOutcome | None:
        if key not in self.cache:
            self.cache[key] = self._explain(obj, extra)
        return self.cache[key]

    def _explain(self, obj: Mapping[str, Any], extra: Sequence[Mapping[str, Any]]) -> PodOutcome | None:
        """What explaining the pod says, or None for no pod (an object that names no resource claims)."""
        pods = pods_from_objects([obj])
        if not pods:
            return None
        claims = [*self.claims, *claims_from_objects(extra)]
        report = self._too_few(pods[0], claims) or explain_pods(pods, claims, self.inventory, self.explainer, None,
                                                                self.nodes)[0]
        return PodOutcome(report.allocatable, report.node, tuple(report.nodes), report.reason)

    def _too_few(self, pod: PodSpec, claims: Sequence[ResourceClaim]) -> PodReport | None:
        """The pod's report, said at once, when a claim asks for more devices than match on any one node: the faithful
        allocator, as upstream's, then tries device after device on every node (seconds for 16 of 8 GPUs; upstream
        bounds it with DRASchedulerFilterTimeout), to find what the match report already shows. The words are
        explain's (reasons.UnallocatableReasons, pods._explain_pod)."""
        namespace, _, name = pod.name.partition("/")
        by_name = {(c.kind, c.name): c for c in claims}
        for entry in pod.spec.get("resourceClaims") or []:
            if not isinstance(entry, Mapping):
                continue
            template, shared = entry.get("resourceClaimTemplateName"), entry.get("resourceClaimName")
            claim = by_name.get(("ResourceClaimTemplate", f"{namespace}/{template}") if template
                                else ("ResourceClaim", f"{namespace}/{shared}"))
            if claim is None or claim.allocated:
                continue
            made = f"{namespace}/{name}-{entry['name']}" if template else claim.name
            report, matched = self.explainer.match(claim, self.inventory)
            if matched is None or len(report.requests) != len(claim.requests):
                continue  # an error explain reports, or firstAvailable alternatives
            for request, matching in zip(claim.requests, report.requests, strict=True):
                [choice] = request.choices
                per_node = Counter(d.node for d in matching.matching)
                if choice.allocation_mode != "ExactCount" or not per_node or set(per_node) & set(SHARED):
                    continue
                most = max(per_node.values())
                node = min(n for n, count in per_node.items() if count == most)
                if most < choice.count:
                    return PodReport(pod.name, pod.kind, reason=(
                        f"claim {made} ({entry['name']}): request {request.name} needs "
                        f"{choice.count} device(s), but at most {most} match on one node ({node})"))
        return None
