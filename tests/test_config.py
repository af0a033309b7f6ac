"""Stack and team config: every repo stack loads, and each class of mistake names the file, the key and the fix."""

from __future__ import annotations

import copy
import datetime
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpu_dra.core.config.loader import load_stack
from gpu_dra.core.config.models import Environment, SupportType
from gpu_dra.core.facts import eks
from gpu_dra.core.facts.gates import DEFAULT_KUBERNETES_VERSION
from gpu_dra.core.findings import ConfigError, Finding
from gpu_dra.core.yamlsource import read_yaml

from .conftest import ROOT, STACKS, Project, named


@pytest.mark.parametrize("stack", STACKS)
def test_repo_stacks_load(stack: str) -> None:
    loaded = load_stack(ROOT, stack)
    assert loaded.config.environment == Environment(stack)
    assert len(loaded.teams) >= 2


def test_dev_carries_the_guide_example() -> None:
    dev = load_stack(ROOT, "dev")
    templates = {t.name: t for team in dev.teams for t in team.claim_templates}
    request = templates["gpu-20gb-any"].requests[0]
    assert request.match is not None
    assert request.match.products == ["A100", "H100", "H200"]
    assert request.match.min_memory == "20Gi"


def test_prod_is_protected_and_private() -> None:
    prod = load_stack(ROOT, "prod")
    assert prod.config.protect
    assert not prod.config.cluster.endpoint.public_access
    assert not load_stack(ROOT, "dev").config.protect


def test_stack_override_merges_into_team_quota() -> None:
    prod = {t.name: t for t in load_stack(ROOT, "prod").teams}
    # stacks/teams/training.yaml: claims 32, gpu-h100 8, gpu-a100 8; prod overrides claims and gpu-h100.
    assert prod["training"].quota.claims == 16
    assert prod["training"].quota.devices == {"gpu-h100": 16, "gpu-a100": 8, "gpu.nvidia.com": 8}


def _set(path: list[Any], value: Any):
    def change(data: Any) -> None:
        for key in path[:-1]:
            data = data[key]
        data[path[-1]] = value
    return change


def _problems_of(project: Project, stack: str) -> list[Finding]:
    with pytest.raises(ConfigError) as caught:
        load_stack(project.root, stack)
    return caught.value.findings


def _problems(project: Project, stack: str = "prod") -> list[str]:
    """`file: key: message` of every problem, each of which must carry the line of its key (or nearest parent)."""
    problems = _problems_of(project, stack)
    assert all(p.line is not None for p in problems if p.path), [p for p in problems if p.line is None]
    return [f"{p.file}: {p.path}: {p.message}" if p.path else f"{p.file}: {p.message}" for p in problems]


STACK_MISTAKES = [
    # (id, path to set inside config:, value, expected message)
    ("max-below-min", ["gpu-dra:nodeGroups", 1, "scaling"], {"min": 4, "desired": 4, "max": 2},
     "stacks/Pulumi.prod.yaml: gpu-dra:nodeGroups[1].scaling.max: must be >= scaling.min (4)"),
    ("desired-outside", ["gpu-dra:nodeGroups", 0, "scaling"], {"min": 1, "desired": 9, "max": 4},
     "gpu-dra:nodeGroups[0].scaling.desired: must be between scaling.min (1) and scaling.max (4)"),
    ("misspelt-key", ["gpu-dra:nodeGroups", 0, "diskSze"], 300,
     "gpu-dra:nodeGroups[0].diskSze: unknown key; did you mean 'diskSize'?"),
    ("unknown-instance", ["gpu-dra:nodeGroups", 0, "instanceTypes"], ["p5.96xlarge"],
     "gpu-dra:nodeGroups[0].instanceTypes[0]: unknown GPU instance type 'p5.96xlarge'; did you mean 'p5.4xlarge'? p5 "
     "sizes: 4xlarge, 48xlarge"),
    ("instance-type-typo", ["gpu-dra:nodeGroups", 0, "instanceTypes"], ["g6e.12xlarg"],
     "unknown GPU instance type 'g6e.12xlarg'; did you mean 'g6e.12xlarge'? g6e sizes: xlarge, 2xlarge"),
    ("instance-family-unknown", ["gpu-dra:nodeGroups", 0, "instanceTypes"], ["x9.large"],
     "unknown GPU instance type 'x9.large'; GPU families: g4dn, g5, g5g,"),
    ("bad-environment", ["gpu-dra:environment"], "production",
     "gpu-dra:environment: must be one of 'dev', 'staging' or 'prod' (got 'production')"),
    ("old-kubernetes", ["gpu-dra:cluster", "kubernetesVersion"], "1.33",
     "gpu-dra:cluster.kubernetesVersion: 1.33 is too old: DRA's resource.k8s.io/v1 API is GA from 1.34"),
    ("future-kubernetes", ["gpu-dra:cluster", "kubernetesVersion"], "1.38",
     "gpu-dra:cluster.kubernetesVersion: 1.38 is not supported yet"),
    ("next-version", ["gpu-dra:cluster", "kubernetesVersion"], "1.37",
     "gpu-dra:cluster.kubernetesVersion: 1.37 is not supported yet: EKS does not offer 1.37 yet; stacks run 1.34, "
     "1.35, 1.36"),
    ("unquoted-version", ["gpu-dra:cluster", "kubernetesVersion"], 1.4,
     "gpu-dra:cluster.kubernetesVersion: 1.4 is ambiguous as a number"),
    ("world-open-prod", ["gpu-dra:cluster", "endpoint"],
     {"publicAccess": True, "publicAccessCidrs": ["0.0.0.0/0"]},
     "gpu-dra:cluster.endpoint.publicAccessCidrs[0]: prod's API endpoint is never open to the world"),
    ("public-without-cidrs", ["gpu-dra:cluster", "endpoint"], {"publicAccess": True},
     "gpu-dra:cluster.endpoint.publicAccessCidrs: publicAccess needs the CIDRs"),
    ("forged-allocation-label", ["gpu-dra:nodeGroups", 2, "labels"], {"gpu-dra.io/allocation": "dra"},
     "gpu-dra:nodeGroups[2].labels: gpu-dra.io/allocation: gpu-dra.io/ labels are gpu-dra's own (set from "
     "allocationMode and the group's name, and they decide which GPU plugin serves the nodes); remove it"),
    ("reserved-label-prefix", ["gpu-dra:nodeGroups", 0, "labels"], {"node-role.kubernetes.io/gpu": "true"},
     "gpu-dra:nodeGroups[0].labels['node-role.kubernetes.io/gpu']: node-role.kubernetes.io/gpu: EKS refuses it on a "
     "managed node group (\"Label cannot contain reserved prefixes [kubernetes.io/, k8s.io/, eks.amazonaws.com/]\": "
     "it contains kubernetes.io/); use a label of your own domain"),
    ("eks-label-prefix", ["gpu-dra:nodeGroups", 0, "labels"], {"eks.amazonaws.com/compute-type": "gpu"},
     "it contains eks.amazonaws.com/)"),
    ("reserved-taint-prefix", ["gpu-dra:nodeGroups", 0, "taints"], [{"key": "k8s.io/gpu", "effect": "NoSchedule"}],
     "gpu-dra:nodeGroups[0].taints[0].key: k8s.io/gpu: EKS refuses it on a managed node group (\"Taint cannot "
     "contain reserved prefixes"),
    ("label-key-not-a-qualified-name", ["gpu-dra:nodeGroups", 0, "labels"], {"team name": "ml"},
     "gpu-dra:nodeGroups[0].labels['team name']: 'team name' is not a qualified name"),
    ("taint-value-not-a-label-value", ["gpu-dra:nodeGroups", 0, "taints"], [{"key": "team", "value": "ml team"}],
     "gpu-dra:nodeGroups[0].taints[0].value: team: 'ml team' is not a label value"),
    ("forged-node-group-label", ["gpu-dra:nodeGroups", 0, "labels"], {"gpu-dra.io/node-group": "l40s"},
     "gpu-dra:nodeGroups[0].labels: gpu-dra.io/node-group: gpu-dra.io/ labels are gpu-dra's own"),
    ("arm-ami-on-x86", ["gpu-dra:nodeGroups", 1, "amiType"], "AL2023_ARM_64_NVIDIA",
     "gpu-dra:nodeGroups[1].amiType: AL2023_ARM_64_NVIDIA is for arm64 but g6e.12xlarge is x86_64"),
    ("capacity-block-without-reservation", ["gpu-dra:nodeGroups", 0, "capacityReservationId"], None,
     "gpu-dra:nodeGroups[0].capacityReservationId: required with capacityType CAPACITY_BLOCK"),
    ("capacity-block-without-zone", ["gpu-dra:nodeGroups", 0, "subnetIds"], [],
     "gpu-dra:nodeGroups[0].subnetIds: a capacity block lives in one AZ"),
    ("small-disk", ["gpu-dra:nodeGroups", 1, "diskSize"], 50,
     "gpu-dra:nodeGroups[1].diskSize: must be >= 100 (got 50)"),
    ("chart-class-clash", ["gpu-dra:deviceClasses", 0, "name"], "gpu.nvidia.com",
     "gpu-dra:deviceClasses[0].name: 'gpu.nvidia.com' is installed by NVIDIA's DRA driver chart"),
    ("compute-domain-class-clash", ["gpu-dra:deviceClasses", 0, "name"], "compute-domain-x.nvidia.com",
     "'compute-domain-x.nvidia.com' is installed by NVIDIA's DRA driver chart"),
    ("mapping-to-undeclared-class", ["gpu-dra:legacyMappings"],
     [{"extendedResourceName": "nvidia.com/gpu-h200", "deviceClass": "gpu-h200"}],
     "gpu-dra:legacyMappings[0].deviceClass: 'gpu-h200' is not declared in gpu-dra:deviceClasses"),
    ("unknown-team", ["gpu-dra:teams", "finance"], {},
     "stacks/Pulumi.prod.yaml: gpu-dra:teams.finance: no team file stacks/teams/finance.yaml; create it, or host one "
     "of the teams that have a file: inference, ops, research, serving, training"),
    ("driver-in-default-namespace", ["gpu-dra:draDriver", "namespace"], "default",
     "gpu-dra:draDriver.namespace: the chart refuses the default namespace"),
    ("driver-version-range", ["gpu-dra:draDriver", "version"], "^0.4",
     "gpu-dra:draDriver.version: '^0.4' does not have the expected form"),
    ("driver-version-unreleased", ["gpu-dra:draDriver", "version"], "0.99.0",
     "stacks/Pulumi.prod.yaml: gpu-dra:draDriver.version: dra-driver-nvidia-gpu 0.99.0 is not a release of that "
     "chart; releases gpu-dra supports: 0.4.0, 0.4.1"),
    ("driver-version-of-the-other-line", ["gpu-dra:draDriver", "version"], "25.12.0",
     "gpu-dra:draDriver.version: dra-driver-nvidia-gpu 25.12.0 is not a release of that chart (25.12.0 is a release "
     "of nvidia-dra-driver-gpu: set chart: nvidia-dra-driver-gpu)"),
    ("upgrade-policy-misspelt", ["gpu-dra:cluster", "upgradePolicy"], "EXTENDED_SUPPORT",
     "gpu-dra:cluster.upgradePolicy: must be one of 'STANDARD' or 'EXTENDED' (got 'EXTENDED_SUPPORT')"),
    ("feature-gates-on-eks", ["gpu-dra:cluster", "featureGates"], {"DRAConsumableCapacity": True},
     "gpu-dra:cluster.featureGates: EKS runs no alpha feature gates"),
    ("misspelt-namespace", ["gpu-draa:teams"], {},
     "gpu-draa:teams: unknown config namespace 'gpu-draa'; did you mean 'gpu-dra:teams'?"),
    ("upper-case-namespace", ["GPU-DRA:environment"], "dev",
     "GPU-DRA:environment: unknown config namespace 'GPU-DRA'; did you mean 'gpu-dra:environment'?"),
    ("no-namespace", ["environment"], "dev", "stacks/Pulumi.prod.yaml: environment: has no namespace; write it as "
                                             "gpu-dra:environment"),
    ("unknown-namespace", ["gpudra-platform:teams"], {},
     "gpudra-platform:teams: unknown config namespace 'gpudra-platform': nothing reads it. gpu-dra reads "
     "gpu-dra:<key>; the providers read aws:, eks:, kubernetes:, pulumi:"),
    ("bool-as-number", ["gpu-dra:nodeGroups", 1, "diskSize"], True,
     "gpu-dra:nodeGroups[1].diskSize: must be a whole number, not true/false (YAML also reads yes, no, on and off "
     "as true/false)"),
    ("float-as-number", ["gpu-dra:draDriver", "logVerbosity"], 4.0,
     "gpu-dra:draDriver.logVerbosity: must be a whole number (got 4.0)"),
    ("infinite-version", ["gpu-dra:cluster", "kubernetesVersion"], float("inf"),
     "gpu-dra:cluster.kubernetesVersion: inf is not a Kubernetes minor version such as \"1.34\""),
    ("key-with-brackets", ["gpu-dra:cluster", "tags[0]"], "x",
     "gpu-dra:cluster['tags[0]']: unknown key. Allowed: name, platform, kubernetesVersion"),
]


@pytest.mark.parametrize("path,value,expected", [m[1:] for m in STACK_MISTAKES], ids=[m[0] for m in STACK_MISTAKES])
def test_stack_mistake_is_named(project: Project, path: list[Any], value: Any, expected: str) -> None:
    project.edit_stack("prod", _set(path, value))
    problems = _problems(project)
    assert any(expected in p for p in problems), problems


TEAM_MISTAKES = [
    ("zero-count", ["claimTemplates", 0, "requests", 0, "count"], 0,
     "stacks/teams/training.yaml: claimTemplates[0].requests[0].count: must be >= 1 (got 0)"),
    ("attribute-without-domain", ["claimTemplates", 1, "constraints", 0, "matchAttribute"], "pcieRoot",
     "claimTemplates[1].constraints[0].matchAttribute: 'pcieRoot' must be a domain and a name"),
    ("both-forms", ["claimTemplates", 2, "requests", 0, "deviceClass"], "gpu-h100",
     "claimTemplates[2].requests[0].deviceClass: set exactly one of deviceClass"),
    ("misspelt-team-key", ["claimTemplate"], [],
     "stacks/teams/training.yaml: claimTemplate: unknown key; did you mean 'claimTemplates'?"),
    ("constraint-on-unknown-request", ["claimTemplates", 1, "constraints", 0, "requests"], ["gpu"],
     "claimTemplates[1].constraints: 'gpu' is not a request of this template"),
    ("name-does-not-match-file", ["name"], "trainers",
     "stacks/teams/training.yaml: name: is 'trainers' but the file is for team 'training'"),
    ("bad-memory", ["claimTemplates", 0, "requests", 0, "match"], {"minMemory": "20 GB"},
     "'20 GB' is not a Kubernetes quantity"),
    ("all-with-count", ["claimTemplates", 0, "requests", 0, "allocationMode"], "All",
     "claimTemplates[0].requests[0].count: must not be set when allocationMode is All"),
    ("yes-as-count", ["claimTemplates", 0, "requests", 0, "count"], True,
     "claimTemplates[0].requests[0].count: must be a whole number, not true/false"),
    ("bool-as-quota", ["quota", "devices", "gpu-h100"], False,
     "quota.devices.gpu-h100: must be a whole number, not true/false"),
    ("number-as-text", ["description"], 12, "description: must be a string; quote it: \"12\""),
    ("list-as-text", ["description"], ["a"], "description: must be a string"),
    ("top-key-with-parenthesis", ["owner(s)"], "ml",
     "stacks/teams/training.yaml: ['owner(s)']: unknown key. Allowed: "),
    ("top-key-with-brackets", ["claimTemplates[0]"], [],
     "stacks/teams/training.yaml: ['claimTemplates[0]']: unknown key"),
]


@pytest.mark.parametrize("path,value,expected", [m[1:] for m in TEAM_MISTAKES], ids=[m[0] for m in TEAM_MISTAKES])
def test_team_mistake_is_named(project: Project, path: list[Any], value: Any, expected: str) -> None:
    project.edit("stacks/teams/training.yaml", _set(path, value))
    problems = _problems(project)
    assert any(expected in p for p in problems), problems


def test_every_problem_is_reported_at_once(project: Project) -> None:
    """Moving prod to an existing cluster with a few slips: one run names every mistake of the stack file and of
    the team files it hosts, each at its line, including rules that read only the keys that are valid."""
    def to_existing(config: dict[str, Any]) -> None:
        config["gpu-dra:environment"] = "qa"
        config["gpu-dra:nodeGroups"][0]["diskSze"] = 300
        config["gpu-dra:cluster"]["platform"] = "existing"  # region, networking, accessEntries left behind
        config["gpu-dra:cluster"]["featureGates"] = {"NotAGate": True}
        config["gpu-dra:deviceClasses"][0]["name"] = "gpu.nvidia.com"
    project.edit_stack("prod", to_existing)
    project.edit("stacks/teams/inference.yaml", _set(["quota", "claims"], -1))
    project.edit("stacks/teams/training.yaml", _set(["claimTemplate"], []))
    problems = _problems_of(project, "prod")
    stack, inference, training = "stacks/Pulumi.prod.yaml", "stacks/teams/inference.yaml", "stacks/teams/training.yaml"
    expected = {  # (file, key path): text of the line the problem must point at
        (stack, "gpu-dra:environment"): "gpu-dra:environment: qa",
        (stack, "gpu-dra:nodeGroups[0].diskSze"): "diskSze: 300",
        (stack, "gpu-dra:cluster.region"): "region: us-east-1",
        (stack, "gpu-dra:cluster.networking"): "networking:",
        (stack, "gpu-dra:cluster.accessEntries"): "accessEntries:",
        (stack, "gpu-dra:cluster.endpoint"): "endpoint:",
        (stack, "gpu-dra:cluster.deployFrom"): "deployFrom:",
        (stack, "gpu-dra:cluster.systemNodeGroup"): "systemNodeGroup:",
        (stack, "gpu-dra:cluster.featureGates.NotAGate"): "NotAGate: true",
        (stack, "gpu-dra:cluster.kubeconfig"): "gpu-dra:cluster:",  # absent: its parent's line
        (stack, "gpu-dra:deviceClasses[0].name"): "name: gpu.nvidia.com",
        (inference, "quota.claims"): "claims: -1",
        (training, "claimTemplate"): "claimTemplate: []",
    }
    assert {(p.file, p.path) for p in problems} == set(expected)
    for problem in problems:
        text = (project.root / problem.file).read_text().splitlines()
        assert problem.line is not None and expected[problem.file, problem.path] in text[problem.line - 1], problem
    assert str(problems[0]).startswith(f"{problems[0].file}:{problems[0].line}: {problems[0].path}: ")


@pytest.mark.parametrize("cidr,reserved", [
    ("203.0.113.0/24", "is an address range reserved for documentation (RFC 5737)"),
    ("198.51.100.0/24", "is an address range reserved for documentation (RFC 5737)"),
    ("192.0.2.0/24", "is an address range reserved for documentation (RFC 5737)"),
    ("203.0.113.7/32", "is inside 203.0.113.0/24, an address range reserved for documentation (RFC 5737)"),
    ("2001:db8:1::/48", "is inside 2001:db8::/32, an address range reserved for documentation (RFC 3849)"),
])
def test_documentation_ranges_are_refused_as_endpoint_cidrs(project: Project, cidr: str, reserved: str) -> None:
    """dev and staging allowed the API from 203.0.113.0/24 only: it looks like an office range but admits nobody.
    Any stack, not only prod, is told which file and key to fix and what to put there."""
    project.edit_stack("dev", _set(["gpu-dra:cluster", "endpoint"],
                                   {"publicAccess": True, "publicAccessCidrs": ["52.94.76.0/22", cidr]}))
    (problem,) = _problems_of(project, "dev")
    assert (problem.file, problem.path) == ("stacks/Pulumi.dev.yaml", "gpu-dra:cluster.endpoint.publicAccessCidrs[1]")
    assert problem.message == (f"{cidr} {reserved}: it admits nobody. Set the egress CIDRs of the networks you run "
                               "kubectl and `pulumi up` from (your office or VPN), or publicAccess: false to keep the "
                               "endpoint private")
    assert cidr in _line_of(project, problem)


def test_dev_keeps_its_endpoint_private_until_someone_sets_real_cidrs() -> None:
    endpoint = load_stack(ROOT, "dev").config.cluster.endpoint
    assert (endpoint.private_access, endpoint.public_access, endpoint.public_access_cidrs) == (True, False, [])


def test_a_device_plugin_group_may_carry_gpu_present(project: Project) -> None:
    """From 1.35 the AL2023 nodeadm labels every NVIDIA node nvidia.com/gpu.present=true, device-plugin nodes too, so
    the label decides nothing and refusing it protected nothing; gpu-dra.io/allocation keeps the plugins apart."""
    def label(config: dict[str, Any]) -> None:
        named(config["gpu-dra:nodeGroups"], "legacy-a10g")["labels"] = {"nvidia.com/gpu.present": "true"}
    project.edit_stack("prod", label)
    (group,) = [g for g in load_stack(project.root, "prod").config.node_groups if g.name == "legacy-a10g"]
    assert group.labels == {"nvidia.com/gpu.present": "true"}


def test_upgrade_policy_defaults_to_standard_and_is_eks_only(project: Project) -> None:
    """EKS and pulumi-eks default to EXTENDED, which bills a version left behind; gpu-dra asks for it explicitly."""
    prod = load_stack(ROOT, "prod").config.cluster
    assert "upgrade_policy" not in prod.model_fields_set and prod.upgrade_policy is SupportType.STANDARD
    project.edit_stack("prod", _set(["gpu-dra:cluster", "upgradePolicy"], "EXTENDED"))
    assert load_stack(project.root, "prod").config.cluster.upgrade_policy is SupportType.EXTENDED

    def existing(config: dict[str, Any]) -> None:
        config.pop("gpu-dra:nodeGroups")  # refused on an existing cluster
        config["gpu-dra:cluster"] = {"name": "lab", "platform": "existing", "kubeconfig": {"path": "~/.kube/config"},
                                     "upgradePolicy": "STANDARD"}
    project.edit_stack("dev", existing)
    assert [(p.path, p.message) for p in _problems_of(project, "dev")] == [
        ("gpu-dra:cluster.upgradePolicy", "only for platform eks; an existing cluster's support is its provider's")]


def test_a_stack_without_kubernetes_version_gets_the_default(project: Project) -> None:
    def drop(config: dict[str, Any]) -> None:
        del config["gpu-dra:cluster"]["kubernetesVersion"]
    project.edit_stack("prod", drop)
    assert load_stack(project.root, "prod").config.cluster.kubernetes_version == DEFAULT_KUBERNETES_VERSION == "1.35"


def test_unknown_kubernetes_gate_is_named_with_the_known_ones(project: Project) -> None:
    def gates(config: dict[str, Any]) -> None:
        config.pop("gpu-dra:nodeGroups")  # refused on an existing cluster
        config["gpu-dra:cluster"] = {"name": "lab", "platform": "existing", "kubeconfig": {"path": "~/.kube/config"},
                                     "featureGates": {"NotAGate": True, "DRAAdminAcess": True, "DRAAdminAccess": True}}
    project.edit_stack("dev", gates)
    problems = {p.path: p for p in _problems_of(project, "dev")}
    assert set(problems) == {"gpu-dra:cluster.featureGates.NotAGate", "gpu-dra:cluster.featureGates.DRAAdminAcess"}
    unknown = problems["gpu-dra:cluster.featureGates.NotAGate"]
    assert unknown.message.startswith("unknown DRA feature gate; gpu-dra reads only the DRA gates")
    assert "DynamicResourceAllocation, DRAAdminAccess, DRAPrioritizedList" in unknown.message
    assert "did you mean 'DRAAdminAccess'?" in problems["gpu-dra:cluster.featureGates.DRAAdminAcess"].message
    lines = (project.root / "stacks/Pulumi.dev.yaml").read_text().splitlines()
    assert unknown.line is not None and "NotAGate: true" in lines[unknown.line - 1]


def test_gate_missing_from_the_clusters_version_is_named(project: Project) -> None:
    def gates(config: dict[str, Any]) -> None:
        config.pop("gpu-dra:nodeGroups")  # refused on an existing cluster
        config["gpu-dra:cluster"] = {"name": "lab", "platform": "existing", "kubeconfig": {"path": "~/.kube/config"},
                                     "kubernetesVersion": "1.34", "featureGates": {"DRAListTypeAttributes": True}}
    project.edit_stack("dev", gates)
    assert [(f.path, f.message) for f in _problems_of(project, "dev")] == [
        ("gpu-dra:cluster.featureGates.DRAListTypeAttributes", "DRAListTypeAttributes does not exist in Kubernetes "
         "1.34 (it arrives in 1.36), and components refuse to start with an unknown gate; remove it")]


@pytest.mark.parametrize("written,expected", [
    ('"1.34.2"', '1.34.2 is a patch version; give the minor version ("1.34")'),
    ('"1.x"', "'1.x' is not a Kubernetes minor version such as \"1.34\""),
    ("134", '134 is not a Kubernetes minor version such as "1.34" (quote it in YAML)'),
    ("2.05", '2.05 is not a Kubernetes minor version such as "1.34" (quote it in YAML)'),
])
def test_quote_hint_only_for_unquoted_numbers(project: Project, written: str, expected: str) -> None:
    path = project.root / "stacks/Pulumi.prod.yaml"
    path.write_text(path.read_text().replace('kubernetesVersion: "1.35"', f"kubernetesVersion: {written}"))
    messages = [p.message for p in _problems_of(project, "prod")]
    assert any(m.startswith(expected) for m in messages), messages
    assert all("quote" not in m for m in messages) == written.startswith('"')


def test_problem_carries_the_line(project: Project) -> None:
    project.edit_stack("prod", _set(["gpu-dra:nodeGroups", 1, "scaling"], {"min": 4, "desired": 4, "max": 2}))
    with pytest.raises(ConfigError) as caught:
        load_stack(project.root, "prod")
    problem = caught.value.findings[0]
    lines = (project.root / "stacks/Pulumi.prod.yaml").read_text().splitlines()
    assert problem.line is not None and "max" in lines[problem.line - 1]


def test_malformed_yaml_names_file_and_line(project: Project) -> None:
    (project.root / "stacks/teams/inference.yaml").write_text("name: inference\nquota: {claims: 3\n")
    (problem,) = [p for p in _problems_of(project, "prod") if p.file == "stacks/teams/inference.yaml"]
    assert problem.message.startswith("not valid YAML: ") and problem.line == 3, problem


def test_existing_cluster_needs_a_kubeconfig(project: Project) -> None:
    def to_existing(config: dict[str, Any]) -> None:
        config["gpu-dra:cluster"] = {"name": "lab", "platform": "existing",
                                     "featureGates": {"DRAConsumableCapacity": True}}
    project.edit_stack("dev", to_existing)
    problems = _problems(project, "dev")
    assert any("gpu-dra:cluster.kubeconfig: an existing cluster needs kubeconfig.path" in p for p in problems)


REVIEW_MISTAKES = [
    # (id, file, path, value, expected)
    ("undeclared-class", "stacks/teams/inference.yaml", ["claimTemplates", 1, "requests", 0, "deviceClass"],
     "gpu-b200", "stacks/teams/inference.yaml: claimTemplates[1].requests[0].deviceClass: class 'gpu-b200' is "
                 "neither declared"),
    ("undeclared-quota-class", "stacks/teams/inference.yaml", ["quota", "devices", "gpu-b200"], 4,
     "stacks/teams/inference.yaml: quota.devices['gpu-b200']: class 'gpu-b200' is not declared"),
    ("undeclared-class-in-stack-override", "stacks/Pulumi.prod.yaml",
     ["config", "gpu-dra:teams", "training", "quota", "devices", "gpu-b200"], 4,
     "stacks/Pulumi.prod.yaml: gpu-dra:teams.training.quota.devices['gpu-b200']: class 'gpu-b200' is not declared"),
    # What the API server refuses must not pass; Python's `$` matches before a final newline
    # (tests/test_api_validation.py).
    ("namespace-name-ending-in-newline", "stacks/teams/training.yaml", ["namespace", "name"], "ml-training\n",
     "namespace.name: 'ml-training\\n' must be a DNS label"),
    ("label-value-ending-in-newline", "stacks/teams/training.yaml", ["namespace", "labels", "team"], "training\n",
     "team: 'training\\n' is not a label value"),
    ("label-key-ending-in-newline", "stacks/teams/training.yaml", ["namespace", "labels", "team\n"], "training",
     "'team\\n' is not a qualified name"),
    ("annotation-key-not-a-qualified-name", "stacks/teams/training.yaml", ["namespace", "annotations"],
     {"owner:": "training"}, ": 'owner:' is not a qualified name"),
    ("annotations-over-256KiB", "stacks/teams/training.yaml", ["namespace", "annotations"],
     {"notes": "x" * 262_140},
     "annotations take 262,145 bytes in all; the API server allows at most 262,144 (256 KiB)"),
    ("description-over-256KiB", "stacks/teams/training.yaml", ["claimTemplates", 0, "description"], "x" * 262_144,
     "claimTemplates[0].description: annotations take 262,166 bytes in all"),
    ("class-name-ending-in-newline", "stacks/Pulumi.prod.yaml", ["config", "gpu-dra:deviceClasses", 0, "name"],
     "gpu-h100\n", "'gpu-h100\\n' must be a DNS subdomain"),
    ("bad-label-value", "stacks/teams/training.yaml", ["namespace", "labels", "team"], "x" * 70,
     "is not a label value"),
    ("mode-outside-alternatives", "stacks/teams/training.yaml", ["claimTemplates", 2, "requests", 0, "allocationMode"],
     "All", "claimTemplates[2].requests[0].allocationMode: belongs inside each firstAvailable alternative"),
    ("attribute-name-not-identifier", "stacks/teams/training.yaml",
     ["claimTemplates", 1, "constraints", 0, "matchAttribute"], "resource.kubernetes.io/pcie-root.x",
     "must be a domain and a name separated by a slash"),
    ("class-typo", "stacks/teams/inference.yaml", ["claimTemplates", 1, "requests", 0, "deviceClass"], "gpu-l40",
     "claimTemplates[1].requests[0].deviceClass: class 'gpu-l40' is neither declared by this stack's "
     "gpu-dra:deviceClasses nor installed by the chart; did you mean 'gpu-l40s'? known: "),
    ("class-name-without-its-prefix", "stacks/teams/inference.yaml", ["claimTemplates", 1, "requests", 0,
                                                                       "deviceClass"], "l40s",
     "class 'l40s' is neither declared by this stack's gpu-dra:deviceClasses nor installed by the chart; did you mean "
     "'gpu-l40s'? known: "),
    # Quoting a bare number (what a string field's hint says) would make it 20 bytes: a memory size needs its unit.
    ("unquoted-memory", "stacks/teams/inference.yaml", ["claimTemplates", 0, "requests", 0, "match", "minMemory"], 20,
     "minMemory: 20 needs a unit: 20Gi for 20 GiB (20 alone is 20 bytes, which every GPU has)"),
    ("memory-without-unit", "stacks/teams/inference.yaml", ["claimTemplates", 0, "requests", 0, "match", "minMemory"],
     "40", "minMemory: 40 is 40 bytes, which every GPU has: give a size in Gi, e.g. 40Gi"),
    ("memory-zero", "stacks/teams/inference.yaml", ["claimTemplates", 0, "requests", 0, "match", "minMemory"],
     "0", "minMemory: 0 is 0 bytes, which every GPU has: give a size in Gi, e.g. 20Gi"),
    ("class-memory-in-kilobytes", "stacks/Pulumi.prod.yaml", ["config", "gpu-dra:deviceClasses", 0, "match",
                                                              "minMemory"], "512Ki",
     "minMemory: 512Ki is 524288 bytes, which every GPU has: give a size in Gi, e.g. 20Gi"),
    ("system-group-name", "stacks/Pulumi.prod.yaml", ["config", "gpu-dra:nodeGroups", 0, "name"], "system",
     "gpu-dra:nodeGroups[0].name: 'system' is the CPU node group's name"),
    ("zone-outside-region", "stacks/Pulumi.staging.yaml",
     ["config", "gpu-dra:cluster", "networking", "newVpc", "availabilityZones"], ["us-west-2a", "eu-west-1b"],
     "gpu-dra:cluster.networking.newVpc.availabilityZones: 'eu-west-1b' is not a zone of us-west-2"),
    ("mixed-arch-system-group", "stacks/Pulumi.prod.yaml",
     ["config", "gpu-dra:cluster", "systemNodeGroup", "instanceTypes"], ["m7i.large", "m7g.large"],
     "gpu-dra:cluster.systemNodeGroup.instanceTypes: mixes Graviton (arm64) and x86_64 types"),
    ("system-group-size-typo", "stacks/Pulumi.prod.yaml",
     ["config", "gpu-dra:cluster", "systemNodeGroup", "instanceTypes"], ["m7i.xlarg"],
     "'m7i.xlarg' is not an EC2 instance type such as m7i.large (family.size); did you mean 'm7i.xlarge'? sizes: "),
    ("repeated-zone", "stacks/Pulumi.staging.yaml",
     ["config", "gpu-dra:cluster", "networking", "newVpc", "availabilityZones"], ["us-west-2a", "us-west-2a"],
     "availabilityZones: each zone once; repeated: us-west-2a"),
]


@pytest.mark.parametrize("file,path,value,expected", [m[1:] for m in REVIEW_MISTAKES],
                         ids=[m[0] for m in REVIEW_MISTAKES])
def test_cross_file_mistake_is_named(project: Project, file: str, path: list[Any], value: Any, expected: str) -> None:
    """A mistake reported on the file and line a user edits: the key set, in the stack or team file it is in."""
    project.edit(file, _set(path, value))
    stack = file.split(".")[1] if file.startswith("stacks/Pulumi.") else "prod"
    problems = [p for p in _problems_of(project, stack)
                if expected in (f"{p.file}: {p.path}: {p.message}" if p.path else f"{p.file}: {p.message}")]
    located = read_yaml(project.root / file, file)
    lines = {located.line(tuple(path))}  # the key set, or one of the keys of the mapping it was set to
    lines |= {located.line((*path, key)) for key in value} if isinstance(value, dict) else set()
    assert None not in lines and len(problems) == 1 and problems[0].file == file and problems[0].line in lines, (
        problems, lines)


def test_every_refused_label_is_named_on_its_own_line(project: Project) -> None:
    """Two labels the API server refuses, and a key with dots: each named on its key's line, in one run."""
    labels = {"team": "x" * 70, "example.com/owner": "ok", "cost-center": "cc 1120"}
    project.edit("stacks/teams/training.yaml", _set(["namespace", "labels"], labels))
    located = read_yaml(project.root / "stacks/teams/training.yaml", "training.yaml")
    found = [(p.path, p.line) for p in _problems_of(project, "prod")]
    assert found == [("namespace.labels.team", located.line(("namespace", "labels", "team"))),
                     ("namespace.labels.cost-center", located.line(("namespace", "labels", "cost-center")))]


@pytest.mark.parametrize(("today", "policy", "refused"), [
    (datetime.date(2026, 12, 1), "STANDARD", False),  # the last day of 1.34's standard support
    (datetime.date(2026, 12, 2), "STANDARD", True),  # EKS upgrades a STANDARD cluster itself from this day
    (datetime.date(2026, 12, 2), "EXTENDED", False),  # stays, billed as extended support (the rule says so)
])
def test_a_version_past_standard_support_needs_extended_support_or_an_upgrade(
        project: Project, monkeypatch: pytest.MonkeyPatch, today: datetime.date, policy: str, refused: bool) -> None:
    """Judged by the day it runs, never a constant: 1.34 left EKS standard support on 2026-12-02."""
    monkeypatch.setattr(eks, "today", lambda: today)
    project.edit_stack("dev", lambda config: config["gpu-dra:cluster"].update(kubernetesVersion="1.34",
                                                                                upgradePolicy=policy))
    if not refused:
        load_stack(project.root, "dev")
        return
    [problem] = _problems_of(project, "dev")
    located = read_yaml(project.root / "stacks/Pulumi.dev.yaml", "dev")
    assert (problem.path, problem.line) == ("gpu-dra:cluster.kubernetesVersion", located.line(
        ("config", "gpu-dra:cluster", "kubernetesVersion")))
    assert problem.message == (
        "1.34 left EKS standard support on 2026-12-02, and with upgradePolicy STANDARD EKS upgrades the control plane "
        "to 1.35 itself: this stack would then name an older version than the cluster runs, which EKS cannot go "
        "back to. Raise kubernetesVersion to 1.35, or set upgradePolicy: EXTENDED to stay on 1.34 until "
        "2027-12-02, billed $0.60 instead of $0.10 per cluster-hour, which the cluster cannot leave but by upgrading")


def test_json_kubeconfig_from_the_engine_is_kept_as_text() -> None:
    """pulumi-eks emits JSON kubeconfigs; the engine passes secrets as text, which must not be decoded."""
    from gpu_dra.core.config.loader import load_stack_from_engine

    kubeconfig = '{"apiVersion": "v1", "kind": "Config", "users": [{"user": {"token": "s3cret"}}]}'
    values = {"gpu-dra:environment": "dev", "gpu-dra:kubeconfig": kubeconfig,
              "gpu-dra:cluster": '{"name": "lab", "platform": "existing"}'}
    stack = load_stack_from_engine(ROOT, "lab", values)
    assert stack.config.kubeconfig == kubeconfig


def _replace(project: Project, relative: str, old: str, new: str) -> None:
    """Edit a file as text: repeated keys, tags and aliases do not survive a YAML round trip."""
    path = project.root / relative
    text = path.read_text()
    assert old in text, (relative, old)
    path.write_text(text.replace(old, new, 1))


def _line_of(project: Project, problem: Finding) -> str:
    assert problem.line is not None, problem
    return (project.root / problem.file).read_text().splitlines()[problem.line - 1]


def test_a_repeated_stack_key_is_refused(project: Project) -> None:
    """The last one won: a second `gpu-dra:environment: prod` turned dev into prod."""
    _replace(project, "stacks/Pulumi.dev.yaml", "  gpu-dra:teams:", "  gpu-dra:environment: prod\n  gpu-dra:teams:")
    (problem,) = _problems_of(project, "dev")
    assert (problem.file, problem.path) == ("stacks/Pulumi.dev.yaml", "config.gpu-dra:environment"), problem
    first = next(i for i, line in enumerate((ROOT / "stacks/Pulumi.dev.yaml").read_text().splitlines(), 1)
                 if line.startswith("  gpu-dra:environment:"))
    assert problem.message == (f"repeats the key 'gpu-dra:environment' of line {first}, and the last one would win; "
                               "keep one")
    assert _line_of(project, problem) == "  gpu-dra:environment: prod"


def test_a_repeated_team_key_is_refused(project: Project) -> None:
    _replace(project, "stacks/teams/research.yaml", "  claims: 20\n", "  claims: 20\n  claims: 2000\n")
    problems = [p for p in _problems_of(project, "dev") if p.file == "stacks/teams/research.yaml"]
    assert [(p.path, _line_of(project, p)) for p in problems] == [("quota.claims", "  claims: 2000")]


def test_an_alias_bomb_in_a_team_file_is_refused(project: Project) -> None:
    """Eight nested levels of `&a [*a, ...]` in a 1.2 KB team file made `preview` use 8.9 GB; six (half a million
    strings) already cross the bound."""
    levels = ["x:", "  - &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    levels += [f"  - &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 6)]
    _replace(project, "stacks/teams/research.yaml", "claimTemplates:", "\n".join(levels) + "\nclaimTemplates:")
    (problem,) = [p for p in _problems_of(project, "dev") if p.file == "stacks/teams/research.yaml"]
    assert problem.message.startswith("aliases repeat more than 10,000 nodes in this document (alias *a3 here)")
    assert _line_of(project, problem).startswith("  - &a4 [*a3,")


def test_access_entries_are_one_per_name_and_per_principal(project: Project) -> None:
    """The program keys access entries by name, so a second platform-admins silently replaced the first (with the CI
    preview role and `view`); and EKS allows one access entry per IAM principal."""
    _replace(project, "stacks/Pulumi.dev.yaml", "      - name: ci-preview\n", "      - name: platform-admins\n")
    _replace(project, "stacks/Pulumi.dev.yaml", "role/ml-developers", "role/platform-admins")
    problems = {p.path: p for p in _problems_of(project, "dev")}
    assert set(problems) == {"gpu-dra:cluster.accessEntries[1].name", "gpu-dra:cluster.accessEntries[2].principalArn"}
    name, principal = problems.values()
    assert name.message == "'platform-admins' is already used by accessEntries[0]; give each entry its own name"
    assert _line_of(project, name) == "      - name: platform-admins"
    assert principal.message == ("arn:aws:iam::111122223333:role/platform-admins already has accessEntries[0], and "
                                 "EKS allows one access entry per IAM principal; keep one entry for it")
    assert _line_of(project, principal) == "        principalArn: arn:aws:iam::111122223333:role/platform-admins"


@pytest.mark.parametrize("old,new,path,message", [
    ("claims: 20", "claims: !!int abc", "quota.claims", "'abc' is not a valid !!int; drop the tag or fix the value"),
    ("claims: 20", "claims: 2024-02-30", "quota.claims", "must be a whole number (got '2024-02-30')"),
    ("claims: 20", "claims: yes", "quota.claims", "must be a whole number, not true/false"),
    ("description: Notebooks", "description: !!binary aGVsbG8=\nx: Notebooks", "description",
     "!!binary values are not read"),
    ("description: Notebooks", 'description: "\\ud800"\nx: Notebooks', "",
     "not valid YAML: found invalid Unicode character escape code"),
    ("description: Notebooks", "description: " + "[" * 990 + "]" * 990 + "\nx: Notebooks", "description",
     "nests more than 100 levels deep here"),
])
def test_broken_values_name_the_file_line_and_key(project: Project, old: str, new: str, path: str,
                                                  message: str) -> None:
    """Each made `preview` exit 3 ("internal error") without naming the file; now each is a ConfigError (exit 2)."""
    _replace(project, "stacks/teams/research.yaml", old, new)
    problems = [p for p in _problems_of(project, "dev") if p.file == "stacks/teams/research.yaml"]
    assert problems and problems[0].path == path and problems[0].message.startswith(message), problems
    assert _line_of(project, problems[0]).lstrip().startswith(new.split(":")[0]), problems


def test_provider_namespaces_are_left_to_their_providers(project: Project) -> None:
    project.edit_stack("dev", lambda config: config.update({
        "aws:region": "us-west-2", "kubernetes:enableServerSideApply": True,
        "pulumi:disable-default-providers": ["*"]}))
    assert load_stack(project.root, "dev").config.environment is Environment.dev


@pytest.mark.parametrize("stack", STACKS)
def test_the_engines_values_load_as_the_file_does(stack: str) -> None:
    """Under `pulumi up` the engine passes objects JSON-encoded and scalars as text: strict types take both, and
    numbers written as YAML ints arrive as ints either way."""
    from gpu_dra.core.config.loader import load_stack_from_engine, stack_values

    values, _ = stack_values(ROOT, stack)
    engine = {key: value if isinstance(value, str) else json.dumps(value) for key, value in values.items()}
    assert load_stack_from_engine(ROOT, stack, engine) == load_stack(ROOT, stack)


@pytest.mark.parametrize("text,line,message", [
    ("name: [gpu-dra\n", 2, "not valid YAML: did not find expected ',' or ']'"),
    ("name: gpu-dra\nname: other\n", 2, "repeats the key 'name' of line 1"),
    ("name: &n [*n]\n", 1, "alias *n is inside the node &n it names"),
])
def test_a_malformed_project_file_is_a_config_error(tmp_path: Path, text: str, line: int, message: str) -> None:
    """A broken Pulumi.yaml made every verb exit 3; a ConfigError is exit 2, naming the file and the line."""
    from gpu_dra.cli.project import find_project_root

    (tmp_path / "Pulumi.yaml").write_text(text)
    with pytest.raises(ConfigError) as caught:
        find_project_root(tmp_path)
    (problem,) = caught.value.findings
    assert (problem.file, problem.line) == (str(tmp_path / "Pulumi.yaml"), line)
    assert problem.message.startswith(message), problem


def _many_templates(count: int) -> Any:
    def change(team: dict[str, Any]) -> None:
        first = team["claimTemplates"][0]
        team["claimTemplates"] = [{**copy.deepcopy(first), "name": f"t{i}"} for i in range(count)]
    return change


def test_a_team_file_holds_at_most_100_claim_templates(project: Project) -> None:
    """A team file with 6,000 templates made `gpu-dra check` run for minutes; 100 is far above a hand-written file."""
    project.edit("stacks/teams/training.yaml", _many_templates(100))
    load_stack(project.root, "prod")
    project.edit("stacks/teams/training.yaml", _many_templates(101))
    (problem,) = _problems_of(project, "prod")
    assert (problem.file, problem.path) == ("stacks/teams/training.yaml", "claimTemplates")
    assert "at most 100" in problem.message and _line_of(project, problem) == "claimTemplates:"


def test_a_stack_holds_at_most_500_claim_templates(project: Project) -> None:
    """Six teams of 100 and the others': within each file's limit, over the stack's."""
    project.edit("stacks/teams/training.yaml", _many_templates(100))
    for index in range(5):
        team = yaml.safe_load((project.root / "stacks/teams/training.yaml").read_text())
        team.update(name=f"team{index}", namespace={"name": f"team{index}"}, workloads=[])
        (project.root / f"stacks/teams/team{index}.yaml").write_text(yaml.safe_dump(team, sort_keys=False))
        project.edit_stack("prod", lambda config, index=index: config["gpu-dra:teams"].update({f"team{index}": {}}))
    (problem,) = _problems_of(project, "prod")
    assert (problem.file, problem.path) == ("stacks/Pulumi.prod.yaml", "gpu-dra:teams")
    assert problem.message.startswith("the teams hosted hold 603 claim templates (training 100, inference 2, ops 1, "
                                      "team0 100, ")
    assert _line_of(project, problem) == "  gpu-dra:teams:"


def test_cross_key_mistakes_of_several_rules_are_named_at_once(project: Project) -> None:
    """Each stack rule (stack_rules.STACK_RULES) runs, and each mistake is named on its own key's line in one run."""
    def mistakes(config: dict[str, Any]) -> None:
        config["gpu-dra:cluster"]["accessEntries"][1]["name"] = "platform-admins"
        config["gpu-dra:nodeGroups"][2]["name"] = "system"
        config["gpu-dra:deviceClasses"][2]["name"] = "gpu-l40s"
        config["gpu-dra:legacyMappings"] = [{"extendedResourceName": "nvidia.com/gpu", "deviceClass": "gpu-a10g"}]

    project.edit_stack("prod", mistakes)
    file = "stacks/Pulumi.prod.yaml"
    located = read_yaml(project.root / file, file)
    found = [(p.path, p.line) for p in _problems_of(project, "prod") if p.file == file]
    keys: list[tuple[str, tuple[Any, ...]]] = [
        ("gpu-dra:cluster.accessEntries[1].name", ("gpu-dra:cluster", "accessEntries", 1, "name")),
        ("gpu-dra:nodeGroups[2].name", ("gpu-dra:nodeGroups", 2, "name")),
        ("gpu-dra:deviceClasses[2].name", ("gpu-dra:deviceClasses", 2, "name")),
        ("gpu-dra:legacyMappings[0].deviceClass", ("gpu-dra:legacyMappings", 0, "deviceClass"))]
    assert found == [(path, located.line(("config", *loc))) for path, loc in keys]
    assert len({line for _, line in found}) == 4
