"""Will a claim ever get a node from Karpenter (issue 29, section 2)? Each limit Karpenter 1.15 has before launch, one
case each, judged by gpu-dra's allocator over Karpenter's own metadata; then the verdict in `explain --stack`, the
pack's dra-claim-provisionable and the stack file's `gpu-dra:karpenter`, with their mistakes."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml

from gpu_dra.core.analysis.explain import Explainer
from gpu_dra.core.analysis.features import features_for
from gpu_dra.core.analysis.provisioning import LaunchedPool, Provisioning, ProvisioningJudge
from gpu_dra.core.dra.claims import ResourceClaim, parse_claim
from gpu_dra.core.facts.hardware import INSTANCE_TYPES
from gpu_dra.core.facts.karpenter_dra import KARPENTER_DRA
from gpu_dra.core.facts.nvidia import DEFAULT_LEVEL
from gpu_dra.core.facts.target import Target

from .conftest import ROOT, Project
from .test_cli import gpu_dra
from .test_config import _problems

GPU = "gpu.nvidia.com"
CLASSES = {"gpu-l40s": ["device.attributes['gpu.nvidia.com'].productName.contains('L40S')"],
           "mig-1g": ["device.attributes['gpu.nvidia.com'].type == 'mig'"]}


def _claim(*requests: dict[str, Any], constraints: list[dict[str, Any]] | None = None) -> ResourceClaim:
    claim = parse_claim({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "c"},
                         "spec": {"devices": {"requests": list(requests), "constraints": constraints or []}}})
    assert claim is not None
    return claim


def _exactly(name: str = "gpu", device_class: str = GPU, count: int = 1, *selectors: str) -> dict[str, Any]:
    return {"name": name, "exactly": {"deviceClassName": device_class, "count": count,
                                      "selectors": [{"cel": {"expression": s}} for s in selectors]}}


def _judge(claim: ResourceClaim, *types: str, dra: bool = True) -> Provisioning:
    explainer = Explainer(CLASSES, features=features_for(Target("1.35")))
    return ProvisioningJudge(explainer, DEFAULT_LEVEL).judge(claim, [LaunchedPool("pool", types, dra, "1.15.0", 2)])


def test_a_whole_gpu_is_provisionable_on_every_allowed_type_with_metadata() -> None:
    verdict = _judge(_claim(_exactly()), "g6.xlarge", "g6.12xlarge")
    assert verdict.provisionable and verdict.types == {"pool": ["g6.xlarge", "g6.12xlarge"]}
    assert verdict.summary() == "provisionable on pool: g6.xlarge, g6.12xlarge"


def test_a_count_only_the_larger_types_hold() -> None:
    assert _judge(_claim(_exactly(count=4)), "g6.xlarge", "g6.12xlarge").types == {"pool": ["g6.12xlarge"]}


@pytest.mark.parametrize("attribute", ["driverVersion", "cudaDriverVersion"])
def test_a_selector_on_what_the_driver_resolves_at_launch_is_never_provisionable(attribute: str) -> None:
    """Karpenter's templates carry no value for them (AttributeBindings): a real node would match, a template never."""
    selector = f"device.attributes['{GPU}'].{attribute} >= semver('1.0.0')"
    verdict = _judge(_claim(_exactly("gpu", GPU, 1, selector)), "g6.12xlarge")
    assert not verdict.provisionable
    assert verdict.reasons["pool"].startswith(f"a selector of request gpu reads {attribute}, which Karpenter cannot "
                                              "know before the node launches")


def test_a_selector_on_the_pcie_root_is_never_provisionable() -> None:
    selector = "device.attributes['resource.kubernetes.io'].pcieRoot == 'pci0000:44'"
    verdict = _judge(_claim(_exactly("gpu", GPU, 1, selector)), "p5.48xlarge")
    assert "reads resource.kubernetes.io/pcieRoot" in verdict.reasons["pool"]


def test_match_attribute_on_a_bound_attribute_holds_on_a_multi_gpu_type_only() -> None:
    """Karpenter binds driverVersion across an instance type's GPUs, and ignores a binding of fewer than two."""
    constraint = [{"matchAttribute": f"{GPU}/driverVersion"}]
    assert _judge(_claim(_exactly(count=2), constraints=constraint), "g6.12xlarge").types == {"pool": ["g6.12xlarge"]}
    one = _judge(_claim(_exactly(), constraints=constraint), "g6.xlarge")
    assert not one.provisionable and "driverVersion" in one.reasons["pool"]


def test_a_product_no_allowed_type_has_names_the_product_karpenter_knows() -> None:
    verdict = _judge(_claim(_exactly("gpu", "gpu-l40s")), "p5.48xlarge")
    assert not verdict.provisionable
    assert "p5.48xlarge: request gpu: no device matches; most common: class gpu-l40s: selector #0" in (
        verdict.reasons["pool"])


def test_a_mig_request_is_never_provisionable_karpenter_knows_whole_gpus_only() -> None:
    verdict = _judge(_claim(_exactly("gpu", "mig-1g")), "p4de.24xlarge")
    assert not verdict.provisionable and "class mig-1g" in verdict.reasons["pool"]


def test_first_available_takes_the_alternatives_karpenter_can_judge() -> None:
    """sigs.k8s.io/karpenter takes firstAvailable (#3142); an alternative whose selector reads what Karpenter cannot
    know matches no template device (a CEL error is no match there), so the others decide."""
    unknowable = "device.attributes['gpu.nvidia.com'].driverVersion >= semver('550.0.0')"
    either = _claim({"name": "gpu", "firstAvailable": [
        {"name": "new-driver", "deviceClassName": GPU, "selectors": [{"cel": {"expression": unknowable}}]},
        {"name": "four", "deviceClassName": GPU, "count": 4}]})
    assert _judge(either, "g6.xlarge", "g6.12xlarge").types == {"pool": ["g6.12xlarge"]}
    only = _claim({"name": "gpu", "firstAvailable": [
        {"name": "new-driver", "deviceClassName": GPU, "selectors": [{"cel": {"expression": unknowable}}]}]})
    assert "request gpu/new-driver reads driverVersion" in _judge(only, "g6.12xlarge").reasons["pool"]


def test_distinct_attribute_is_refused() -> None:
    distinct = _claim(_exactly(count=2), constraints=[{"distinctAttribute": f"{GPU}/productName"}])
    assert "distinctAttribute" in _judge(distinct, "g6.12xlarge").reasons["pool"]


def test_an_instance_type_the_release_has_no_metadata_for_is_never_launched_for_a_claim() -> None:
    assert "g7e.2xlarge" in INSTANCE_TYPES and "g7e.2xlarge" not in KARPENTER_DRA["1.15.0"]
    verdict = _judge(_claim(_exactly()), "g7e.2xlarge")
    assert verdict.reasons == {"pool": "g7e.2xlarge: Karpenter 1.15.0 has no DRA metadata for it"}


def test_a_device_plugin_pool_serves_no_claim() -> None:
    assert _judge(_claim(_exactly()), "g6.xlarge", dra=False).reasons == {
        "pool": "a device-plugin NodePool runs no DRA driver"}


def test_karpenters_memory_figures_decide_not_the_drivers() -> None:
    """Karpenter 1.15.0 lists an H100's memory as 81152Mi, the driver publishes 81559Mi (gpu-dra's catalog): a
    claim for more than Karpenter's figure fits a running p5 and is never launched one."""
    selector = f"device.capacity['{GPU}'].memory.compareTo(quantity('81500Mi')) >= 0"
    verdict = _judge(_claim(_exactly("gpu", GPU, 1, selector)), "p5.48xlarge")
    assert not verdict.provisionable and "81152Mi" in verdict.reasons["pool"]


# ---------------------------------------------------------------------------------------- a stack with NodePools
def _karpenter_staging(project: Project, **pool: Any) -> None:
    """staging's a100 and h100 groups (desired 0: nothing scaled them) served by Karpenter NodePools instead, and a
    training template asking for an H100 with more memory than Karpenter 1.15.0 lists (81152Mi; the driver
    publishes 81559Mi)."""
    def change(config: dict[str, Any]) -> None:
        config["gpu-dra:nodeGroups"] = [g for g in config["gpu-dra:nodeGroups"] if g["name"] == "l40s"]
        config["gpu-dra:karpenter"] = {"nodePools": [
            {"name": "a100", "instanceTypes": ["p4de.24xlarge"], "maxNodes": 1},
            {"name": "h100", "instanceTypes": ["p5.48xlarge"], "maxNodes": 2, **pool}]}
    project.edit_stack("staging", change)
    project.edit("stacks/teams/training.yaml", lambda team: team["claimTemplates"].append(
        {"name": "h100-full-memory", "description": "An H100 with all of its 80 GB",
         "requests": [{"name": "gpu", "deviceClass": "gpu-h100", "match": {"minMemory": "81500Mi"}}]}))


def test_explain_says_where_karpenter_would_launch_and_which_template_it_never_would(project: Project) -> None:
    _karpenter_staging(project)
    result = gpu_dra("explain", "--stack", "staging", cwd=project.root)
    lines = result.stdout.splitlines()
    at = lines.index("claim ml-training/h100-full-memory: NOT provisionable: it fits only nodes not launched yet, "
                     "and none would ever be launched for it")
    assert lines[at + 1].startswith("  Karpenter 1.15.0: never: a100: p4de.24xlarge: request gpu: no device matches")
    assert "h100: p5.48xlarge: request gpu: no device matches" in lines[at + 1] and "81152Mi" in lines[at + 1]
    at = next(i for i, line in enumerate(lines) if line.startswith("claim ml-training/h100-x8: allocatable"))
    assert lines[at + 1] == "  Karpenter 1.15.0: provisionable on h100: p5.48xlarge"
    at = next(i for i, line in enumerate(lines) if line.startswith("claim ml-training/h100-else-two-a100: allocatable"))
    assert lines[at + 1] == "  Karpenter 1.15.0: provisionable on a100: p4de.24xlarge; h100: p5.48xlarge"
    # a template the l40s node group serves is Karpenter's business nowhere
    at = next(i for i, line in enumerate(lines) if line.startswith("claim inference/l40s: allocatable"))
    assert not lines[at + 1].startswith("  Karpenter")
    assert result.returncode == 1


def test_a_pod_that_fits_only_nodes_karpenter_never_launches_is_not_allocatable(project: Project) -> None:
    _karpenter_staging(project)
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ml-training"},
           "spec": {"tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
                    "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "h100-full-memory"}],
                    "containers": [{"name": "main", "image": "x", "resources": {"claims": [{"name": "gpu"}]}}]}}
    (project.root / "pod.yaml").write_text(yaml.safe_dump(pod))
    result = gpu_dra("explain", "--stack", "staging", "pod.yaml", cwd=project.root)
    [line] = [line for line in result.stdout.splitlines() if line.startswith("pod ")]
    assert line.startswith("pod ml-training/p (Pod): NOT allocatable: it fits only nodes Karpenter has not launched, "
                           "and Karpenter 1.15.0 would never launch one for its template ml-training/h100-full-memory")
    assert "memory 81152Mi is less than 81500Mi" in line and result.returncode == 1


def test_the_pack_reports_the_template_karpenter_never_launches_a_node_for(project: Project) -> None:
    _karpenter_staging(project)
    result = gpu_dra("check", "--stack", "staging", "--format", "json", cwd=project.root)
    [stack] = json.loads(result.stdout)["stacks"]
    found = [v for v in stack["violations"] if v["policy"] == "dra-claim-provisionable"]
    assert [(v["resource"].rsplit("::", 1)[-1], v["file"], v["enforcement"]) for v in found] == [
        ("training.h100-full-memory", "stacks/teams/training.yaml", "advisory")]
    assert "Karpenter would never launch one for it: a100: p4de.24xlarge: request gpu: no device matches" in (
        found[0]["message"])

    # fitting a node group's nodes as well as the NodePool's, the template is Karpenter's business no longer
    project.edit_stack("staging", lambda c: c["gpu-dra:nodeGroups"].append(
        {"name": "h100-group", "instanceTypes": ["p5.48xlarge"], "scaling": {"min": 0, "desired": 0, "max": 1}}))
    [stack] = json.loads(gpu_dra("check", "--stack", "staging", "--format", "json", cwd=project.root).stdout)["stacks"]
    assert not [v for v in stack["violations"] if v["policy"] == "dra-claim-provisionable"]


# ------------------------------------------------------------------------------------------------ the stack file
@pytest.mark.parametrize(("pool", "expected"), [
    ({"instanceTypes": ["p5.48xlarge", "p4de.24xlarge"]}, "gpu-dra:karpenter.nodePools[1].instanceTypes: mixes GPU "
                                                          "models"),
    ({"labels": {"karpenter.sh/capacity-type": "spot"}}, "Karpenter refuses it (label domain \"karpenter.sh\" is "
                                                         "restricted)"),
    ({"labels": {"gpu-dra.io/allocation": "dra"}}, "gpu-dra.io/ labels are gpu-dra's own"),
    ({"name": "l40s"}, "'l40s' is already used by nodeGroups[0]"),
    ({"capacityTypes": ["spot", "preemptible"]}, "gpu-dra:karpenter.nodePools[1].capacityTypes[1]"),
])
def test_nodepool_mistakes_name_their_key(project: Project, pool: dict[str, Any], expected: str) -> None:
    _karpenter_staging(project, **pool)
    problems = _problems(project, "staging")
    assert len(problems) == 1 and expected in problems[0], problems


def test_karpenter_needs_two_system_nodes(project: Project) -> None:
    _karpenter_staging(project)
    project.edit_stack("staging", lambda c: c["gpu-dra:cluster"].update(
        systemNodeGroup={"instanceTypes": ["m7i.large"], "scaling": {"min": 1, "desired": 1, "max": 2}}))
    [problem] = _problems(project, "staging")
    assert problem.startswith("stacks/Pulumi.staging.yaml: gpu-dra:cluster.systemNodeGroup.scaling.desired: 1 system "
                              "node, and Karpenter's controller runs two replicas that never share a node")


def test_a_karpenter_release_whose_metadata_is_unread_is_refused(project: Project) -> None:
    _karpenter_staging(project)
    project.edit_stack("staging", lambda c: c["gpu-dra:karpenter"].update(version="1.15.2"))
    [problem] = _problems(project, "staging")
    assert problem.startswith("stacks/Pulumi.staging.yaml: gpu-dra:karpenter.version: '1.15.2': gpu-dra installs "
                              "Karpenter 1.15.0, the releases whose DRA instance metadata it has read")


def test_migrate_never_counts_on_karpenter_for_a_pod_asking_for_an_extended_resource(tmp_path: Any) -> None:
    """staging (1.36) serves `nvidia.com/gpu` through the chart's gpu.nvidia.com class; a Deployment whose pods fit
    only the A100 NodePool's nodes waits for a node Karpenter never launches for it (kubernetes-sigs/karpenter#3231),
    while a DaemonSet's pods go to the nodes that exist, Karpenter's among them."""
    from gpu_dra.core.analysis import migrate
    from gpu_dra.core.config.loader import load_stack

    from .test_migrate import deployment, read

    on_a100 = {"nodeSelector": {"node.kubernetes.io/instance-type": "p4de.24xlarge"}}
    batch = deployment("a100-batch", "ml-training", 8, **on_a100)
    gpu_taint = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    daemon = {**deployment("a100-exporter", "ml-training", 1, tolerations=gpu_taint, **on_a100), "kind": "DaemonSet"}
    daemon["spec"] = {k: v for k, v in daemon["spec"].items() if k != "replicas"}
    path = tmp_path / "workloads.yaml"
    path.write_text(yaml.safe_dump_all([batch, daemon]))
    workloads, claims = read(path, version="1.36")
    found = {v.workload.name: v for v in migrate.plan(load_stack(ROOT, "staging"), workloads, claims).verdicts}
    assert found["a100-batch"].placement.where == "nowhere"
    assert ("only nodes of the stack's Karpenter NodePools fit it, and Karpenter does not take a pod asking for an "
            "extended resource for a DRA pod") in found["a100-batch"].placement.reason
    assert found["a100-exporter"].placement.where == "mapping"


def test_a_finding_on_a_nodepool_points_at_its_entry_in_the_stack_file(project: Project) -> None:
    """In a first preview the NodePools' state is unknown: what cannot be judged there is placed on each pool's
    `gpu-dra:karpenter.nodePools[i]` line, as a node group's finding is on its own."""
    _karpenter_staging(project)
    result = gpu_dra("check", "--stack", "staging", "--first-preview", "--format", "json", cwd=project.root)
    [stack] = json.loads(result.stdout)["stacks"]
    lines = (project.root / "stacks" / "Pulumi.staging.yaml").read_text().splitlines()
    placed = {v["resource"].rsplit("::", 1)[-1]: lines[v["line"] - 1].strip() for v in stack["notJudged"]
              if v["resource"].endswith(("NodePool::gpu-staging-a100", "NodePool::gpu-staging-h100"))}
    assert placed == {"gpu-staging-a100": "- name: a100", "gpu-staging-h100": "- name: h100"}
