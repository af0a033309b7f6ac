"""Will each claim template ever get a node? A template whose only nodes are ones Karpenter would launch is judged
as Karpenter judges it before launch, from its release's DRA metadata (analysis/provisioning): a selector on an
attribute Karpenter cannot know, or a product or memory no allowed type has as Karpenter lists it, leave it Pending
for good, with "no instance type can satisfy" in Karpenter's log as the only word of it."""

from __future__ import annotations

import dataclasses
import json
from functools import lru_cache

from gpu_dra.core.analysis.explain import Explainer
from gpu_dra.core.analysis.features import features_for
from gpu_dra.core.analysis.provisioning import LaunchedPool, ProvisioningJudge, only_launched
from gpu_dra.core.data import plain
from gpu_dra.core.dra.claims import claims_from_objects, classes_from_objects
from gpu_dra.core.facts.target import Platform, Target
from gpu_dra.core.findings import Finding
from gpu_dra.core.policy.resources import Context, Resource, dra_objects, error
from gpu_dra.core.policy.selectors import explain_on_fleet

RULE = "dra-claim-provisionable"


def dra_claim_provisionable(resources: list[Resource], context: Context) -> list[Finding]:
    # An Auto Mode NodePool's types are judged on the very nodes the fleet gives them (analysis/provisioning), so a
    # claim allocatable there is provisionable there: only Karpenter's pre-launch knowledge can say otherwise.
    karpenter = tuple(pool for pool in context.launched_pools if not pool.auto_mode)
    if not karpenter:
        return []
    reports, out = explain_on_fleet(RULE, resources, context)
    only_karpenter = [(claim, resource) for claim, report, resource in reports
                      if report.allocatable and only_launched(karpenter, report.nodes)]
    if not only_karpenter:
        return out
    known = [r for r in dra_objects(resources) if not r.unknown]
    target = context.target
    verdicts = dict(_verdicts(json.dumps([
        [plain(r.props) for r in known], [dataclasses.asdict(p) for p in karpenter],
        [target.kubernetes_version, target.platform.value, dict(target.feature_gates), list(target.driver_level)],
        target.enabled("DRAConsumableCapacity")])))
    for claim, resource in only_karpenter:
        summary = verdicts.get(claim)
        if summary is not None:
            out.append(error(RULE, f"claim template {claim} fits only nodes the stack's Karpenter NodePools would "
                                   f"launch, and Karpenter would never launch one for it: {summary}", resource,
                             fix="change the template as the reason says (Karpenter selects only on what it knows "
                                 "before launch: productName, architecture, brand, cudaComputeCapability, type, "
                                 "memory), or serve it from a node group"))
    return out


@lru_cache(maxsize=2)
def _verdicts(stack: str) -> tuple[tuple[str, str], ...]:
    """(claim, why never) for each claim Karpenter would never launch a node for; memoised on the stack's objects,
    NodePools and target, as JSON."""
    objects, pools, (version, platform, gates, level), consumable = json.loads(stack)
    target = Target(version, Platform(platform), gates, (level[0], level[1]))
    judge = ProvisioningJudge(Explainer(classes_from_objects(objects), consumable, features_for(target)),
                              target.driver_level)
    specs = [LaunchedPool(**{**p, "instance_types": tuple(p["instance_types"])}) for p in pools]
    found = []
    for claim in claims_from_objects(objects):
        verdict = judge.judge(claim, specs)
        if not verdict.provisionable:
            found.append((claim.name, verdict.summary().removeprefix("never: ")))
    return tuple(found)
