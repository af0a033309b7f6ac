"""How long a search for devices may run (issue 24 item 7): the allocator stops at its deadline, as upstream's stops
when its context is done; explain gives each node's search the scheduler's filter timeout and all of a command's
searches one budget, and says which node it did not decide and why. Unit tests read a clock that ticks once per
read, so a deadline is a number of search steps and nothing sleeps; the CLI tests run the command as a child process
against the clock on the wall."""

from __future__ import annotations

import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpu_dra.core.analysis import inventory as inv
from gpu_dra.core.analysis.allocator import AllocationError, AllocationTimeout, Features, allocate_claims
from gpu_dra.core.analysis.explain import FILTER_TIMED_OUT, FILTER_TIMEOUT, Explainer
from gpu_dra.core.analysis.features import features_for
from gpu_dra.core.analysis.pods import explain_pods, pods_from_objects
from gpu_dra.core.analysis.pools import Node
from gpu_dra.core.dra.claims import ResourceClaim, parse_claim
from gpu_dra.core.dra.slices import parse_slice
from gpu_dra.core.facts.target import Platform, Target
from gpu_dra.core.yamlsource import parse_documents

from .conftest import ROOT

DRIVER = "gpu.nvidia.com"
CLASSES = {"gpu": [f"device.driver == '{DRIVER}'"]}
DEVICE_CLASS = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
                "spec": {"selectors": [{"cel": {"expression": CLASSES["gpu"][0]}}]}}
CLI_DEADLINE = 60  # seconds: the bound on any run of the CLI
ONE_GIB = 1 << 30


class Ticks:
    """A clock that moves one tick each time it is read: the allocator reads it once per search step."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 1
        return self.now


def slice_of(node: str, count: int, group: int) -> dict[str, Any]:
    """`count` GPUs on `node`, `group` of them to each PCIe root (gpu-i is under root i // group)."""
    devices = [{"name": f"gpu-{i}", "attributes": {"pcieRoot": {"string": f"pci{i // group}"}}} for i in range(count)]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{node}-gpus"},
            "spec": {"driver": DRIVER, "nodeName": node, "devices": devices,
                     "pool": {"name": node, "generation": 1, "resourceSliceCount": 1}}}


def claim_of(name: str, count: int, same_root: bool = False, kind: str = "ResourceClaim") -> dict[str, Any]:
    devices: dict[str, Any] = {"requests": [{"name": "gpus", "exactly": {"deviceClassName": "gpu", "count": count}}]}
    if same_root:
        devices["constraints"] = [{"matchAttribute": f"{DRIVER}/pcieRoot"}]
    namespace, _, short = name.partition("/")
    return {"apiVersion": "resource.k8s.io/v1", "kind": kind, "metadata": {"name": short, "namespace": namespace},
            "spec": {"spec": {"devices": devices}} if kind == "ResourceClaimTemplate" else {"devices": devices}}


def parsed(obj: dict[str, Any]) -> ResourceClaim:
    claim = parse_claim(obj)
    assert claim is not None
    return claim


def inventory(*slices: dict[str, Any]) -> inv.Inventory:
    text = yaml.safe_dump_all(slices)
    return inv.from_documents("test", parse_documents(text, "test"))


# --------------------------------------------------------------------------------------------- the allocator


def test_upstream_interrupt_subtests_a_deadline_passed_stops_the_search() -> None:
    """Upstream's `interrupt` subtests after its table (kubernetes/dynamic-resource-allocation@v0.34.9
    structured/internal/allocatortesting/allocator_testing.go): 6 of 5 devices, without a deadline (off: no error,
    no allocation) and with one already passed (timeout, deadline: an error wrapping the context's)."""
    slices = [parse_slice(slice_of("node-1", 5, 5), "test")]
    claim = [parsed(claim_of("ns/claim-0", 6))]
    assert allocate_claims(claim, slices, Node("node-1", {}), CLASSES, [], Features()) is None
    with pytest.raises(AllocationTimeout, match="context deadline exceeded"):
        allocate_claims(claim, slices, Node("node-1", {}), CLASSES, [], Features(), deadline=time.monotonic())


@pytest.mark.parametrize("count", [11, 12])
def test_more_devices_than_can_match_are_refused_before_the_search(count: int) -> None:
    """11 or 12 of 10 GPUs took upstream's search e·10! steps (129 s and 111 s of `gpu-dra explain` before); now
    the first step sees too few devices. A budget of 5 steps would stop the old search."""
    slices = [parse_slice(slice_of("node-a", 10, 10), "test")]
    claim = [parsed(claim_of("ml/big", count))]
    assert allocate_claims(claim, slices, Node("node-a", {}), CLASSES, [], Features(), deadline=5,
                           clock=Ticks()) is None


def test_the_deadline_stops_a_search_enough_devices_cannot_shorten() -> None:
    """20 GPUs, 10 to each PCIe root, 11 on one root: enough devices match, so nothing is refused before the search,
    which tries every order of each root's 10 GPUs (minutes); the deadline stops it."""
    slices = [parse_slice(slice_of("node-a", 20, 10), "test")]
    claim = [parsed(claim_of("ml/big", 11, same_root=True))]
    clock = Ticks()
    with pytest.raises(AllocationTimeout):
        allocate_claims(claim, slices, Node("node-a", {}), CLASSES, [], Features(), deadline=20_000, clock=clock)
    assert clock.now == 20_000  # stopped at the first step past the deadline


def test_what_the_search_decides_is_left_to_it() -> None:
    """The check before the search counts only devices it can tell apart: a device shared by several results
    (consumable capacity) serves a count of 2 alone, and an invalid pool the search would reach fails it as the
    search does; a count the valid pool serves never reaches it."""
    shared = slice_of("node-a", 1, 1)
    shared["spec"]["devices"][0].update(allowMultipleAllocations=True, capacity={"memory": {"value": "80Gi"}})
    claim = claim_of("ml/pair", 2)
    claim["spec"]["devices"]["requests"][0]["exactly"]["capacity"] = {"requests": {"memory": "10Gi"}}
    (pair,) = allocate_claims([parsed(claim)], [parse_slice(shared, "test")], Node("node-a", {}), CLASSES, [],
                              Features(consumable_capacity=True)) or []
    assert [(d.device, d.shared) for d in pair.devices] == [("gpu-0", True), ("gpu-0", True)]

    good = slice_of("node-a", 2, 2)
    broken = slice_of("node-a", 2, 2)
    broken["metadata"]["name"], broken["spec"]["pool"]["name"] = "broken", "broken"
    broken["spec"]["devices"].append(broken["spec"]["devices"][0])  # a device named twice: the pool is invalid
    slices = [parse_slice(s, "test") for s in (good, broken)]
    assert allocate_claims([parsed(claim_of("ml/two", 2))], slices, Node("node-a", {}), CLASSES, [], Features())
    with pytest.raises(AllocationError, match="pool broken is invalid"):
        allocate_claims([parsed(claim_of("ml/three", 3))], slices, Node("node-a", {}), CLASSES, [], Features())


# --------------------------------------------------------------------------------------------- explain


def test_explain_stops_a_node_at_the_filter_timeout_in_the_scheduler_s_words_and_decides_the_others() -> None:
    """Each node's search has its own filter timeout, as each Filter call has: node-a's is stopped (not decided),
    node-b, whose 11 GPUs share one root, is still searched and fits."""
    fleet = inventory(slice_of("node-a", 20, 10), slice_of("node-b", 11, 11))
    explainer = Explainer(CLASSES, features=features_for(Target("1.35")), clock=Ticks(), filter_timeout=20_000,
                          search_budget=100_000)
    report = explainer.explain(parsed(claim_of("ml/big", 11, same_root=True)), fleet)
    assert (report.allocatable, report.nodes, report.timed_out) == (True, ["node-b"], ["node-a"])

    alone = explainer.explain(parsed(claim_of("ml/big", 11, same_root=True)), fleet, only={"node-a"})
    assert (alone.allocatable, alone.nodes, alone.timed_out) == (False, [], ["node-a"])
    assert alone.reason.startswith("not decided: on node-a: the search for devices did not end within the "
                                   "scheduler's filter timeout (20000 s)")
    assert f'reports "{FILTER_TIMED_OUT}" for the node and counts it unschedulable for this attempt' in alone.reason
    data = alone.as_dict()
    assert (data["allocatable"], data["timed_out"], data["reason"]) == (False, ["node-a"], alone.reason)


def test_all_searches_of_a_command_share_one_budget() -> None:
    """Three claims whose searches each run to the filter timeout: the third starts with 1,000 ticks of the budget
    left and is stopped there, said in gpu-dra's words, not the scheduler's; then no search starts at all."""
    fleet = inventory(slice_of("node-a", 20, 10))
    clock = Ticks()
    explainer = Explainer(CLASSES, features=features_for(Target("1.35")), clock=clock, filter_timeout=2_000,
                          search_budget=5_000)
    reports = [explainer.explain(parsed(claim_of(f"ml/big-{i}", 11 + i, same_root=True)), fleet) for i in range(4)]
    assert [r.timed_out for r in reports] == [["node-a"]] * 4
    assert "within the scheduler's filter timeout (2000 s)" in reports[1].reason
    assert reports[2].reason.startswith("not decided: on node-a: gpu-dra stopped the search for devices after "
                                        "998 s, when its 5000 s for all the searches of this command ran out")
    assert "after 0 s" in reports[3].reason
    assert explainer.searched <= 5_000 + 10


def test_without_the_gate_the_scheduler_has_no_filter_timeout_and_explain_says_so() -> None:
    fleet = inventory(slice_of("node-a", 20, 10))
    assert not features_for(Target("1.33")).filter_timeout and features_for(Target("1.34")).filter_timeout
    assert not features_for(Target("1.34", Platform.existing, {gate: False for gate in (
        "DRAAdminAccess", "DRAPrioritizedList", "DRAResourceClaimDeviceStatus")})).filter_timeout  # "stable"
    explainer = Explainer(CLASSES, features=features_for(Target("1.33")), clock=Ticks(), filter_timeout=2_000,
                          search_budget=100_000)
    report = explainer.explain(parsed(claim_of("ml/big", 11, same_root=True)), fleet)
    assert report.reason == ("not decided: on node-a: gpu-dra stopped the search for devices after 2000 s; with "
                             "DRASchedulerFilterTimeout off, the scheduler has no filter timeout and searches until "
                             "it ends, holding up the scheduling of every other pod meanwhile")


def test_a_pod_whose_claims_fit_alone_but_whose_search_together_is_stopped_is_not_decided() -> None:
    """6 and 7 of 12 GPUs: each claim fits alone at once; together they cannot, which the search learns only by
    trying every way of taking 6 of the 12 (665,280) for the first claim. Stopped, the pod is not decided, not
    said to lose to competition."""
    objects = [claim_of("ml/six", 6, kind="ResourceClaimTemplate"),
               claim_of("ml/seven", 7, kind="ResourceClaimTemplate"),
               {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "pair", "namespace": "ml"},
                "spec": {"containers": [{"name": "c"}],
                         "resourceClaims": [{"name": "a", "resourceClaimTemplateName": "six"},
                                            {"name": "b", "resourceClaimTemplateName": "seven"}]}}]
    claims = [parsed(o) for o in objects[:2]]
    explainer = Explainer(CLASSES, features=features_for(Target("1.35")), clock=Ticks(), filter_timeout=20_000,
                          search_budget=100_000)
    (report,) = explain_pods(pods_from_objects(objects), claims, inventory(slice_of("node-a", 12, 12)), explainer)
    assert [c.report.allocatable for c in report.claims if c.report] == [True, True]
    assert (report.allocatable, report.timed_out) == (False, ["node-a"])
    assert report.reason.startswith("not decided: on node-a: the search for devices did not end within the "
                                    "scheduler's filter timeout")
    assert report.as_dict()["timed_out"] == ["node-a"]


# --------------------------------------------------------------------------------------------- the command


def _explain(tmp_path: Path, *objects: dict[str, Any], version: str = "1.35",
             ) -> tuple[subprocess.CompletedProcess[str], float]:
    """`gpu-dra explain` on the objects, as a child process held to the issue's bounds: 60 s, 1 GiB."""
    path = tmp_path / "input.yaml"
    path.write_text(yaml.safe_dump_all([DEVICE_CLASS, *objects]))

    def at_most_one_gib() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (ONE_GIB, ONE_GIB))

    started = time.monotonic()
    result = subprocess.run([sys.executable, "-m", "gpu_dra.cli.main", "explain", "--kubernetes-version", version,
                             str(path)], cwd=ROOT, capture_output=True, text=True, timeout=CLI_DEADLINE,
                            preexec_fn=at_most_one_gib)
    return result, time.monotonic() - started


@pytest.mark.parametrize("count", [11, 12])
def test_cli_refuses_more_gpus_than_the_node_has_before_a_filter_timeout(tmp_path: Path, count: int) -> None:
    """129 s for 11 and 111 s for 12 before (the search of a node explain knew too small); now well before the
    scheduler's filter timeout would have stopped it."""
    result, took = _explain(tmp_path, slice_of("node-a", 10, 10), claim_of("ml/big", count))
    assert (result.returncode, result.stderr) == (1, "")
    assert (f"claim ml/big: NOT allocatable: request gpus needs {count} device(s), but at most 10 match on one node "
            "(node-a)") in result.stdout
    assert took < FILTER_TIMEOUT


def test_cli_refuses_11_of_12_gpus_when_2_are_tainted_without_a_search(tmp_path: Path) -> None:
    """Two GPUs under maintenance (NoSchedule, not tolerated; DRADeviceTaints is on from 1.36): 12 match, so the
    node is searched, and only 10 can be taken, which the check before the search sees. Without it the search
    of 11 out of 10 is stopped at the filter timeout, not decided."""
    gpus = slice_of("node-a", 12, 12)
    for device in gpus["spec"]["devices"][10:]:
        device["taints"] = [{"key": "example.com/maintenance", "value": "firmware", "effect": "NoSchedule"}]
    result, took = _explain(tmp_path, gpus, claim_of("ml/big", 11), version="1.36")
    assert (result.returncode, result.stderr) == (1, "")
    assert ("claim ml/big: NOT allocatable: request gpus needs 11 device(s); on node-a 10 of its 12 matching "
            "device(s) are free: gpu-10, gpu-11: taint example.com/maintenance=firmware:NoSchedule from ResourceSlice "
            "node-a-gpus, not tolerated") in result.stdout
    assert took < FILTER_TIMEOUT


def test_cli_stops_a_search_at_the_filter_timeout(tmp_path: Path) -> None:
    """The search no check before it can shorten: the command ends after the scheduler's filter timeout (10 s)
    with the node not decided, within the issue's 60 s."""
    result, took = _explain(tmp_path, slice_of("node-a", 20, 10), claim_of("ml/big", 11, same_root=True))
    assert (result.returncode, result.stderr) == (1, "")
    assert "claim ml/big: NOT DECIDED: on node-a: the search for devices did not end within the " \
           "scheduler's filter timeout (10 s)" in result.stdout
    assert FILTER_TIMED_OUT in result.stdout
    assert FILTER_TIMEOUT <= took < CLI_DEADLINE
