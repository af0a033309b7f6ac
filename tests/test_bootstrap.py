"""The first `pulumi up` of a stack whose API endpoint is private only (issue 28, item 1): the loader refuses a stack
that does not say where `pulumi up` runs, the program declares only the AWS layer from outside the VPC and admits the
runner inside it, and the engine model shows which first `up` fails every Kubernetes object and chart."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gpu_dra.cli.offline import ProgramRun, run_program
from gpu_dra.core.config.loader import load_stack, stack_values
from gpu_dra.core.facts import pulumi_types
from gpu_dra.core.findings import ConfigError, Finding
from gpu_dra.core.policy.engine import Registered
from gpu_dra.core.policy.engine.first_up import first_up_failures

from .conftest import ROOT, Project
from .test_cli import gpu_dra

DEPLOYER_RULE = "aws:ec2/securityGroupRule:SecurityGroupRule"

# The program under gpu-dra's mocks as the engine's preview sees a VPC this up creates: with no id yet (an empty id
# is unknown to the SDK). In a child process: a refused run leaves its failed task for the next run of the process.
PREVIEW_OF_A_NEW_VPC = """
import sys
from pathlib import Path
from gpu_dra.cli import offline
from gpu_dra.core.config.loader import stack_values
created = offline._Mocks.new_resource
def new_resource(self, args):
    id_, state = created(self, args)
    return ("" if args.typ == "aws:ec2/vpc:Vpc" else id_), state
offline._Mocks.new_resource = new_resource
root = Path(sys.argv[1])
values, _ = stack_values(root, "dev")
run = offline.run_program(root, "dev", values)
print(len(run.resources), "resources")
"""


def _cluster(config: dict[str, Any]) -> dict[str, Any]:
    cluster: dict[str, Any] = config["gpu-dra:cluster"]
    return cluster


def refused(project: Project, stack: str) -> list[Finding]:
    with pytest.raises(ConfigError) as raised:
        load_stack(project.root, stack)
    return raised.value.findings


def program(root: Path, stack: str) -> ProgramRun:
    values, _ = stack_values(root, stack)
    return run_program(root, stack, values)


def registered(run: ProgramRun) -> list[Registered]:
    return [Registered(r.type, r.name, r.urn, r.parent, r.protect, r.inputs, r.outputs if r.custom else {})
            for r in run.resources]


def on_cluster(run: ProgramRun) -> list[str]:
    """The Kubernetes objects, charts and providers the run declares."""
    return [r.type for r in run.resources if pulumi_types.is_kubernetes_object(r.type)
            or r.type in (pulumi_types.CHART, pulumi_types.K8S_PROVIDER)]


# ------------------------------------------------------------------------------------------------ the loader
def test_a_new_vpc_behind_a_private_endpoint_must_say_where_pulumi_up_runs(project: Project) -> None:
    project.edit_stack("dev", lambda c: _cluster(c).pop("deployFrom"))
    result = gpu_dra("check", "--stack", "dev", cwd=project.root)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    line = next(line for line in result.stderr.splitlines() if "gpu-dra:cluster.endpoint" in line)
    # the file and the key's line, what fails, and both ways out
    assert line.startswith("stacks/Pulumi.dev.yaml:") and "this stack creates its VPC" in line
    assert "gpu-dra:cluster.deployFrom" in line and "{network: outside}" in line and "{network: vpc}" in line
    assert "publicAccessCidrs" in line and "docs/deploying.md" in line


def test_an_existing_vpc_behind_a_private_endpoint_must_name_the_runner_network(project: Project) -> None:
    project.edit_stack("prod", lambda c: _cluster(c).pop("deployFrom"))
    [finding] = refused(project, "prod")
    assert finding.path == "gpu-dra:cluster.endpoint"
    assert "security group admits only the control plane and the nodes" in finding.message
    assert "cidrs:" in finding.message

    project.edit_stack("prod", lambda c: _cluster(c).update(deployFrom={"network": "vpc"}))
    [finding] = refused(project, "prod")
    assert finding.path == "gpu-dra:cluster.deployFrom" and "list deployFrom.cidrs" in finding.message


@pytest.mark.parametrize(("cidr", "expected"), [
    ("198.51.100.0/24", "reserved for documentation (RFC 5737)"),
    ("0.0.0.0/0", "admits every address the VPC routes"),
    ("10.20.0.0/33", "is not a CIDR block"),
])
def test_deployer_cidrs_must_admit_a_real_network(project: Project, cidr: str, expected: str) -> None:
    project.edit_stack("prod", lambda c: _cluster(c)["deployFrom"].update(cidrs=["10.20.8.0/24", cidr]))
    [finding] = refused(project, "prod")
    assert finding.path.startswith("gpu-dra:cluster.deployFrom.cidrs") and expected in finding.message


def test_outside_takes_no_cidrs_and_existing_clusters_take_no_deploy_from(project: Project) -> None:
    project.edit_stack("dev", lambda c: _cluster(c).update(deployFrom={"network": "outside", "cidrs": ["10.9.0.0/16"]}))
    [finding] = refused(project, "dev")
    assert finding.path == "gpu-dra:cluster.deployFrom.cidrs" and "only with network: vpc" in finding.message

    def to_existing(config: dict[str, Any]) -> None:
        config["gpu-dra:cluster"] = {"name": "lab", "platform": "existing", "kubeconfig": {"path": "~/.kube/lab"},
                                     "deployFrom": {"network": "vpc"}}
        config["gpu-dra:nodeGroups"] = []
        config.pop("gpu-dra:karpenter")
    project.edit_stack("staging", to_existing)
    [finding] = refused(project, "staging")
    assert finding.path == "gpu-dra:cluster.deployFrom" and "reached through its kubeconfig" in finding.message


def test_a_public_endpoint_for_the_deployer_needs_no_deploy_from(project: Project) -> None:
    def public(config: dict[str, Any]) -> None:
        cluster = _cluster(config)
        cluster.pop("deployFrom")
        cluster["endpoint"] = {"privateAccess": True, "publicAccess": True, "publicAccessCidrs": ["100.24.13.7/32"]}
    project.edit_stack("dev", public)
    stack = load_stack(project.root, "dev")
    assert stack.config.cluster.deploy_from is None and stack.config.cluster.deployer_cidrs == ()
    assert first_up_failures(registered(program(project.root, "dev"))) == []


# ------------------------------------------------------------------------------------------------ the program
def test_outside_declares_the_aws_layer_only(project: Project) -> None:
    project.edit_stack("dev", lambda c: _cluster(c).update(deployFrom={"network": "outside"}))
    run = program(project.root, "dev")
    assert on_cluster(run) == []
    assert {"aws:eks/addon:Addon", "eks:index:Cluster", "eks:index:ManagedNodeGroup", "aws:ec2/vpc:Vpc"} <= {
        r.type for r in run.resources}
    assert not any(r.type == DEPLOYER_RULE for r in run.resources)
    assert "deployFrom.network: vpc" in run.outputs["inClusterLayer"] and "teams" not in run.outputs
    assert first_up_failures(registered(run)) == []


@pytest.mark.parametrize(("stack", "cidrs"), [("dev", ["10.40.0.0/16"]), ("prod", ["10.20.8.0/24"])])
def test_inside_the_vpc_the_control_plane_admits_the_runner(stack: str, cidrs: list[str]) -> None:
    """A new VPC's own block by default, the listed networks with an existing VPC: on 443, in EKS's cluster security
    group (otherwise it admits only the control plane and the nodes). The Kubernetes provider waits for the rule: in
    the up after an `outside` one its kubeconfig is known from the start, and it reads the cluster when it is
    configured."""
    run = program(ROOT, stack)
    [rule] = [r for r in run.resources if r.type == DEPLOYER_RULE]
    assert rule.inputs["type"] == "ingress" and rule.inputs["protocol"] == "tcp"
    assert (rule.inputs["fromPort"], rule.inputs["toPort"]) == (443, 443) and rule.inputs["cidrBlocks"] == cidrs
    [provider] = run.by_type(pulumi_types.K8S_PROVIDER)
    [eks] = run.by_type(pulumi_types.CLUSTER)
    assert {rule.urn, eks.urn} <= set(provider.dependencies)
    assert on_cluster(run)


# ------------------------------------------------------------------------------------------------ the engine model
@pytest.mark.parametrize("stack", ["dev", "staging"])
def test_the_first_up_of_a_new_vpc_from_inside_it_fails_every_kubernetes_object(stack: str) -> None:
    """`network: vpc` is the stacks' steady state; on the first up nothing runs inside the VPC that up creates, so
    the provider, configured once the cluster exists, cannot reach it: every object and the chart fail (their
    preview does not: the kubeconfig is unknown there, tests/test_engine_view.py)."""
    run = program(ROOT, stack)
    failures = first_up_failures(registered(run))
    kubernetes = [r for r in run.resources if pulumi_types.is_kubernetes_object(r.type) or r.type == pulumi_types.CHART]
    assert sorted(f.name for f in failures) == sorted(r.name for r in kubernetes)
    assert pulumi_types.CHART in {f.type for f in failures}
    assert all(f.error.startswith("configured Kubernetes cluster is unreachable: the API endpoint is private only "
                                  "and the VPC is created by this same up") for f in failures)


def test_the_first_up_of_an_existing_vpc_needs_the_runner_admitted() -> None:
    """prod's runner inside its VPC reaches the endpoint through the deployer rule; without it, nothing does."""
    every = registered(program(ROOT, "prod"))
    assert first_up_failures(every) == []
    failures = first_up_failures([r for r in every if r.type != DEPLOYER_RULE])
    assert failures and all("admit only the nodes" in f.error for f in failures)


def _preview_of_a_new_vpc(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", PREVIEW_OF_A_NEW_VPC, str(root)], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)})


def test_the_preview_of_the_up_that_creates_the_vpc_refuses_network_vpc(project: Project) -> None:
    """The program stops the first up of dev as committed in its preview, before anything is created, with what to
    run instead; with `network: outside` the same preview goes through."""
    refused_run = _preview_of_a_new_vpc(project.root)
    assert refused_run.returncode != 0 and "RunError: stacks/Pulumi.dev.yaml: gpu-dra:cluster.deployFrom" in (
        refused_run.stderr)
    assert "deployFrom: {network: outside}" in refused_run.stderr

    project.edit_stack("dev", lambda c: _cluster(c).update(deployFrom={"network": "outside"}))
    outside = _preview_of_a_new_vpc(project.root)
    assert outside.returncode == 0 and "resources" in outside.stdout, outside.stderr
