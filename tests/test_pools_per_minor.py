"""A pool's slices on other nodes, as explain hands them to the allocator of each minor: from 1.35 a pool that looks
incomplete from a node is counted on every node (complete there: used; a newer generation published elsewhere: out
of date), where 1.34 used what the node saw. explain judges nodes alike once, so two nodes that see the same shapes
but whose pools differ elsewhere must still get their own verdicts."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from gpu_dra.core.analysis import inventory as inv
from gpu_dra.core.analysis.explain import Explainer
from gpu_dra.core.analysis.features import features_for
from gpu_dra.core.dra.claims import claim_from_devices
from gpu_dra.core.facts.target import Target
from gpu_dra.core.yamlsource import parse_documents

CLAIM = claim_from_devices("default/one", {"requests": [{"name": "gpu", "exactly": {
    "deviceClassName": "gpu.nvidia.com"}}]})


def _slice(name: str, node: str, pool: str, count: int, generation: int = 1, device: str = "gpu-0") -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": name},
            "spec": {"driver": "gpu.nvidia.com",
                     "pool": {"name": pool, "generation": generation, "resourceSliceCount": count},
                     "nodeName": node, "devices": [{"name": device, "attributes": {"type": {"string": "gpu"}}}]}}


def _nodes(items: list[dict[str, Any]], version: str) -> list[str]:
    text = yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": items})
    fleet = inv.from_documents("slices.yaml", parse_documents(text, "slices.yaml"))
    return Explainer({}, features=features_for(Target(version))).explain(CLAIM, fleet).nodes


# pool-a: two slices on two nodes, whole; pool-b: one of its two slices published. node-a and node-b look alike.
SPLIT = [_slice("a-1", "node-a", "pool-a", 2), _slice("a-2", "node-x", "pool-a", 2, device="gpu-1"),
         _slice("b-1", "node-b", "pool-b", 2)]
# pool-c's generation 2 is being published on node-y: node-c's generation 1 is out of date from 1.35.
REPLACED = [_slice("c-1", "node-c", "pool-c", 2), _slice("c-2", "node-y", "pool-c", 2, generation=2, device="gpu-1")]


@pytest.mark.parametrize(("version", "split", "replaced"), [
    ("1.34", ["node-a", "node-b", "node-x"], ["node-c", "node-y"]),
    ("1.35", ["node-a", "node-x"], []),
    ("1.36", ["node-a", "node-x"], []),
])
def test_a_pools_slices_on_other_nodes_decide_from_1_35(version: str, split: list[str], replaced: list[str]) -> None:
    assert _nodes(SPLIT, version) == split
    assert _nodes(REPLACED, version) == replaced
