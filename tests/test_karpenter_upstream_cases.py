"""Karpenter's own DRA tests and docs, case by case through gpu-dra's Karpenter judge: for each claim, the instance
types Karpenter would launch for it, or that it never would.

The cases are in tests/data/karpenter/upstream_cases.yaml, hand-transcribed from aws/karpenter-provider-aws and
sigs.k8s.io/karpenter (its header names each source, commit and licence; each case quotes its upstream lines). They
are judged against the vendored Karpenter 1.15.0 metadata. Where gpu-dra's verdict differs from upstream's, the case
is a strict xfail with the reason, so the mark has to go the day the two agree.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpu_dra.core.analysis.explain import Explainer
from gpu_dra.core.analysis.features import features_for
from gpu_dra.core.analysis.provisioning import LaunchedPool, ProvisioningJudge
from gpu_dra.core.dra.claims import parse_claim
from gpu_dra.core.facts.karpenter_dra import KARPENTER_DRA, KarpenterGpu
from gpu_dra.core.facts.nvidia import DEFAULT_LEVEL
from gpu_dra.core.facts.target import Target

TABLE: dict[str, Any] = yaml.safe_load(
    (Path(__file__).parent / "data" / "karpenter" / "upstream_cases.yaml").read_text())
KARPENTER = TABLE["karpenter_version"]
POOL = "upstream"

# case id -> why gpu-dra's verdict differs from upstream's (the lead decides which side moves)
DISAGREEMENTS = {
    "website/content/en/preview/tasks/dra.md:Running DRA drivers alongside device plugins": (
        "gpu-dra judges a device-plugin NodePool as never serving a DRA claim; Karpenter's docs say it launches a "
        "node there (where the pod then stays pending): gpu-dra answers 'will the claim be served', not 'will "
        "Karpenter launch'."),
}


def _types(entries: list[Any]) -> tuple[str, ...]:
    """Instance types from a list whose items are names or lists of names (the file's shared sets)."""
    return tuple(name for entry in entries for name in (entry if isinstance(entry, list) else [entry]))


def _cases() -> list[Any]:
    """Every case, the disagreements marked."""
    return [pytest.param(case, id=case["id"], marks=[pytest.mark.xfail(reason=DISAGREEMENTS[case["id"]], strict=True)]
                         if case["id"] in DISAGREEMENTS else []) for case in TABLE["cases"]]


@pytest.mark.parametrize("case", _cases())
def test_gpu_dra_judges_the_upstream_case_as_karpenter_does(case: dict[str, Any]) -> None:
    claim = parse_claim(case["claim"])
    assert claim is not None
    judge = ProvisioningJudge(Explainer(case["classes"], features=features_for(Target(TABLE["kubernetes_minor"]))),
                              DEFAULT_LEVEL)
    pool = LaunchedPool(POOL, _types(case["instance_types"]), dra=case.get("dra", True), version=KARPENTER)
    verdict = judge.judge(claim, [pool])
    if case["expected"] == "never":
        assert not verdict.provisionable, verdict.summary()
    else:
        assert sorted(verdict.types.get(POOL, [])) == sorted(_types(case["expected"]["launches"])), verdict.summary()


def test_every_case_has_an_upstream_source_and_a_verdict() -> None:
    sources = TABLE["sources"]
    for source in sources.values():
        assert re.fullmatch(r"[0-9a-f]{40}", source["commit"])
        assert source["repository"] and source["path"] and "Apache-2.0" in source["licence"]
    ids = [case["id"] for case in TABLE["cases"]]
    assert len(ids) == len(set(ids))
    for case in TABLE["cases"]:
        assert case["source"] in sources and case["upstream"].strip()
        assert case["expected"] == "never" or case["expected"]["launches"]
    assert set(DISAGREEMENTS) <= set(ids)


def _max_gpus_per_root(gpus: tuple[KarpenterGpu, ...]) -> int:
    return max(Counter(gpu.attributes["resource.kubernetes.io/pcieRoot"] for gpu in gpus).values())


def test_the_shared_instance_type_sets_are_what_upstream_selects_from_the_metadata() -> None:
    """The docs' supported types are the metadata's; the e2e sets are aws-e2e's predicates (testableFamilies, no
    .metal, atLeastGPUs(2), singleGPU, sharesAPCIeRoot, rootPerGPU) applied to it, as the file's header quotes them."""
    metadata = KARPENTER_DRA[KARPENTER]
    sets = TABLE["instance_type_sets"]
    assert sorted(sets["supported"]) == sorted(metadata)
    testable = {name: gpus for name, gpus in metadata.items()
                if name.split(".")[0] in ("g4dn", "g5", "g5g", "g6", "g6e", "gr6") and not name.endswith(".metal")}
    expected = {
        "e2e_multi_gpu": [name for name, gpus in testable.items() if len(gpus) >= 2],
        "e2e_single_gpu": [name for name, gpus in testable.items() if len(gpus) == 1],
        "e2e_shares_a_pcie_root": [name for name, gpus in testable.items() if _max_gpus_per_root(gpus) >= 2],
        "e2e_root_per_gpu": [name for name, gpus in testable.items()
                             if len(gpus) >= 2 and _max_gpus_per_root(gpus) == 1],
    }
    for name, types in expected.items():
        assert sorted(sets[name]) == sorted(types), name
