"""Whether Kueue would ever admit a team's named workload from the team's queue (issue 31): each case starts from the
Jobs Kueue documents for DRA (tests/data/kueue/sample-dra-rct-job.yaml and sample-dra-extended-resource-job.yaml,
v0.19.2), put in the inference team's namespace on staging (which queues inference: nominal gpu.nvidia.com 4,
gpu-l40s 8, no other queue to borrow from) and changed in one field per case."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
import yaml

from gpu_dra.core.analysis import queued_workloads
from gpu_dra.core.analysis.migrate import read_workloads
from gpu_dra.core.config.loader import load_stack
from gpu_dra.core.config.models import Stack
from gpu_dra.core.yamlsource import parse_documents

from .conftest import ROOT, Project
from .test_cli import gpu_dra

SAMPLES = ROOT / "tests" / "data" / "kueue"


def _sample(name: str) -> dict[str, Any]:
    """Kueue's sample Job, in the inference namespace, named (the samples use generateName), queued in the team's
    LocalQueue."""
    (job,) = [d for d in yaml.safe_load_all((SAMPLES / name).read_text()) if d and d["kind"] == "Job"]
    job = copy.deepcopy(job)
    meta = job["metadata"]
    meta["name"] = meta.pop("generateName").rstrip("-")
    meta["namespace"] = "inference"
    meta["labels"]["kueue.x-k8s.io/queue-name"] = "gpu"
    return job


def claim_job(**spec: Any) -> dict[str, Any]:
    """The ResourceClaimTemplate sample's Job, its claim made from inference's one-L40S template."""
    job = _sample("sample-dra-rct-job.yaml")
    job["spec"]["template"]["spec"]["resourceClaims"][0]["resourceClaimTemplateName"] = "l40s"
    job["spec"].update(spec)
    return job


def extended_job(**spec: Any) -> dict[str, Any]:
    """The extended-resource sample's Job asking for NVIDIA's name instead of example.com/gpu."""
    job = _sample("sample-dra-extended-resource-job.yaml")
    resources = job["spec"]["template"]["spec"]["containers"][0]["resources"]
    for part in ("requests", "limits"):
        resources[part]["nvidia.com/gpu"] = resources[part].pop("example.com/gpu")
    job["spec"].update(spec)
    return job


def judged(stack: Stack, obj: dict[str, Any]) -> queued_workloads.QueuedWorkload | None:
    (workload,), _ = read_workloads([("job.yaml", parse_documents(yaml.safe_dump(obj), "job.yaml"))],
                                    stack.config.cluster.kubernetes_version)
    found = queued_workloads.judge_all(stack, [("inference", workload)])
    return found[0] if found else None


@pytest.fixture(scope="module")
def staging() -> Stack:
    return load_stack(ROOT, "staging")


def test_kueues_claim_template_job_is_admitted_and_charged_its_devices(staging: Stack) -> None:
    found = judged(staging, claim_job())
    assert found is not None and found.problems == ()
    serving = claim_job()
    serving["metadata"]["labels"]["kueue.x-k8s.io/priority-class"] = "serving"  # one of staging's priorities
    assert judged(staging, serving).problems == ()  # type: ignore[union-attr]
    assert [(c.resource, c.device_class, c.devices) for c in found.charges] == [
        ("gpu-l40s.deviceclass.resource.k8s.io/devices", "gpu-l40s", 1)]


def test_a_job_is_charged_for_its_parallel_pods_together(staging: Stack) -> None:
    """Kueue admits a Job's parallel pods as one Workload (min(parallelism, completions), kueue@v0.19.2:pkg/
    controller/jobs/job/job_controller.go:451-458): 9 L40S at once is more than inference's queue ever holds (8)."""
    found = judged(staging, claim_job(parallelism=9))
    assert found is not None and found.pods == 9
    (problem,) = found.problems
    assert "charged 9 gpu-l40s device(s) for its 9 pod(s) admitted together" in problem
    assert "can ever hold (8" in problem
    capped = judged(staging, claim_job(parallelism=9, completions=8))
    assert capped is not None and capped.problems == () and capped.pods == 8


def test_deployment_pods_are_each_their_own_workload(staging: Stack) -> None:
    job = claim_job()
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": job["metadata"], "spec": {
        "replicas": 12, "selector": {"matchLabels": {"app": "x"}},
        "template": {"metadata": {"labels": {"app": "x"}}, "spec": {**job["spec"]["template"]["spec"],
                                                                     "restartPolicy": "Always"}}}}
    found = judged(staging, deployment)
    assert found is not None and (found.pods, found.problems) == (1, ())
    statefulset = {**deployment, "kind": "StatefulSet", "spec": {**deployment["spec"], "serviceName": "x"}}
    grouped = judged(staging, statefulset)  # a StatefulSet's replicas are one pod group
    assert grouped is not None and grouped.pods == 12 and len(grouped.problems) == 1


def test_an_extended_resource_is_charged_through_the_class_that_maps_it(staging: Stack) -> None:
    """On 1.36 the chart's gpu.nvidia.com maps nvidia.com/gpu and inference's queue rations that class: Kueue charges
    the request under the class's mapping, one quota for both ways of asking (kueue@v0.19.2:pkg/dra/
    extended_resources.go resolveQuotaKey)."""
    found = judged(staging, extended_job())
    assert found is not None and found.problems == ()
    assert [(c.resource, c.devices) for c in found.charges] == [
        ("gpu.nvidia.com.deviceclass.resource.k8s.io/devices", 1)]
    assert judged(staging, extended_job(parallelism=5)).problems  # type: ignore[union-attr]  # 5 > 4


def test_an_extended_resource_no_class_serves_is_blocked(project: Project) -> None:
    """On 1.35 EKS drops extendedResourceName: nvidia.com/gpu is no DRA resource, charged under its own name, which
    the queue does not cover."""
    project.edit_stack("staging", lambda config: config["gpu-dra:cluster"].update(kubernetesVersion="1.35"))
    found = judged(load_stack(project.root, "staging"), extended_job())
    assert found is not None
    (problem,) = found.problems
    assert problem.startswith("requests nvidia.com/gpu, which Kueue charges under its own name (gpu.nvidia.com "
                              "maps it, but DRAExtendedResource is off")
    assert "resource nvidia.com/gpu unavailable in ClusterQueue" in problem


@pytest.mark.parametrize("change, words", [
    (lambda job: job["metadata"]["labels"].update({"kueue.x-k8s.io/queue-name": "user-queue"}),
     "no LocalQueue 'user-queue' in namespace inference (gpu-dra renders the team's LocalQueue as 'gpu')"),
    (lambda job: job["spec"]["template"]["spec"]["resourceClaims"][0].update(
        resourceClaimName="shared", resourceClaimTemplateName=None),
     "pod claim gpu names a ResourceClaim; Kueue's DRA integration charges only claims made from a template"),
    (lambda job: job["metadata"]["labels"].update({"kueue.x-k8s.io/priority-class": "urgent"}),
     "its label kueue.x-k8s.io/priority-class: urgent names no WorkloadPriorityClass (the stack's "
     "gpu-dra:kueue.priorities: batch, serving): Kueue makes no Workload for it"),
])
def test_what_kueue_never_admits(staging: Stack, change: Any, words: str) -> None:
    job = claim_job()
    change(job)
    found = judged(staging, job)
    assert found is not None and [p for p in found.problems if words in p]


def test_a_team_without_a_queue_has_no_local_queue(staging: Stack) -> None:
    job = claim_job()
    job["metadata"]["namespace"] = "ml-training"  # training's: staging hosts it without a queue
    found = judged(staging, job)
    assert found is not None and found.team.name == "training"
    assert "no LocalQueue 'gpu' in namespace ml-training (team training has no queue on this stack" in found.problems[0]


def test_without_the_label_or_without_kueue_nothing_is_judged(staging: Stack) -> None:
    job = claim_job(parallelism=9)
    del job["metadata"]["labels"]["kueue.x-k8s.io/queue-name"]
    assert judged(staging, job) is None
    assert judged(load_stack(ROOT, "prod"), claim_job(parallelism=9)) is None  # prod runs no Kueue


def test_check_reports_a_named_workload_kueue_never_admits_on_its_line(project: Project) -> None:
    """The pack rule kueue-workloads-admissible, fed by `gpu-dra check` from the team file's `workloads:`."""
    folder = project.root / "workloads" / "inference"
    folder.mkdir()
    (folder / "jobs.yaml").write_text(yaml.safe_dump(claim_job()) + "---\n" + yaml.safe_dump(
        {**claim_job(parallelism=9), "metadata": {**claim_job()["metadata"], "name": "wide"}}))
    project.edit("stacks/teams/inference.yaml", lambda team: team.update(workloads=["workloads/inference/"]))
    result = gpu_dra("check", "--stack", "staging", "--format", "json", cwd=project.root)
    assert result.returncode in (0, 1), result.stderr
    (report,) = json.loads(result.stdout)["stacks"]
    (found,) = [v for v in report["violations"] if v["policy"] == "kueue-workloads-admissible"]
    assert (found["file"], found["enforcement"]) == ("workloads/inference/jobs.yaml", "advisory")
    lines = (folder / "jobs.yaml").read_text().splitlines()
    assert lines[found["line"] - 1] == "kind: Job" and found["line"] > lines.index("---")
    assert found["message"].startswith("Job inference/wide (team inference) queues in LocalQueue gpu and Kueue would "
                                       "never admit it: charged 9 gpu-l40s device(s)")
