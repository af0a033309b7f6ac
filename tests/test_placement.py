"""First-fit device-plugin placement (gpu_dra.core.analysis.placement), the one both `gpu-dra migrate` and the
policy pack's legacy-workloads-placed rule place pods by."""

from __future__ import annotations

from gpu_dra.core.analysis.placement import DevicePluginGroup, place

TAINT = {"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}
TOLERATES = {"tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]}


def group(name: str, nodes: int, gpus: int = 4, labels: dict[str, str] | None = None) -> DevicePluginGroup:
    return DevicePluginGroup(name, labels or {"pool": name}, [TAINT], gpus, [gpus] * nodes, "g5.12xlarge")


def test_a_pod_s_gpus_are_on_one_node() -> None:
    """Two nodes with 3 free GPUs each hold two 2-GPU pods, not three: a pod's GPUs are never split across nodes."""
    legacy = group("legacy", 2, gpus=3)
    fit = place(3, 2, TOLERATES, [legacy])
    assert (fit.placed, fit.left, legacy.free) == ({"legacy": 2}, 1, [1, 1])
    assert fit.outcomes[0].full


def test_pods_fill_a_node_before_the_next_and_a_group_before_the_next() -> None:
    first, second = group("first", 2), group("second", 2)
    fit = place(5, 2, TOLERATES, [first, second])
    assert (fit.placed, fit.left) == ({"first": 4, "second": 1}, 0)
    assert (first.free, second.free) == ([0, 0], [2, 4])


def test_the_workloads_placed_first_take_the_gpus_first() -> None:
    legacy = group("legacy", 1)
    assert place(1, 3, TOLERATES, [legacy]).left == 0
    later = place(1, 2, TOLERATES, [legacy])
    assert (later.left, later.outcomes[0].taken, later.outcomes[0].full) == (1, 3, True)


def test_a_group_the_pod_may_not_use_gets_none_of_its_pods() -> None:
    """Its taint untolerated, or its labels not selected: the pods go to the next group, and the reason is said."""
    tainted, other, chosen = group("tainted", 1), group("other", 1), group("chosen", 1)
    fit = place(1, 1, {**TOLERATES, "nodeSelector": {"pool": "chosen"}}, [other, chosen])
    assert fit.placed == {"chosen": 1} and "pool" in fit.outcomes[0].refused
    fit = place(1, 1, {}, [tainted])
    assert (fit.placed, fit.left) == ({}, 1) and "nvidia.com/gpu" in fit.outcomes[0].refused
    assert tainted.free == [4]


def test_a_pod_larger_than_a_node_fits_nowhere() -> None:
    small = group("small", 3, gpus=1)
    fit = place(1, 2, TOLERATES, [small])
    assert (fit.left, fit.outcomes[0].too_small, fit.outcomes[0].full, small.free) == (1, True, False, [1, 1, 1])


def test_a_daemonset_runs_one_pod_on_each_of_its_own_nodes() -> None:
    """Not first fit: one pod per node it runs on, however many GPUs the node has free; groups holding none of its
    nodes are not tried."""
    elsewhere, legacy = group("elsewhere", 2), group("legacy", 3)
    fit = place(2, 1, TOLERATES, [elsewhere, legacy], daemon_nodes={"legacy-0", "legacy-2"})
    assert (fit.placed, fit.left, legacy.free, elsewhere.free) == ({"legacy": 2}, 0, [3, 4, 3], [4, 4])
    assert [o.group.name for o in fit.outcomes] == ["legacy"]
