"""`gpu-dra migrate` on workloads as people write them (examples/migrate/) on the three stacks, whose versions and
fleets differ: dev (1.35, DRA groups only: every legacy workload has nowhere to run), prod (1.35, a device-plugin
group `legacy-a10g` of four 1-GPU nodes: the small legacy workloads stay there, phase 1) and staging (1.36, where the
chart's gpu.nvidia.com class maps nvidia.com/gpu: legacy workloads that fit a DRA node are served unchanged, phase 3).
The MIG job and the 16-GPU job have nowhere to run anywhere; the pod already on claims allocates where L40S exist."""

from __future__ import annotations

import copy
import functools
import io
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpu_dra.core.analysis import migrate
from gpu_dra.core.config.loader import load_stack
from gpu_dra.core.dra import k8s_schema
from gpu_dra.core.render import manifests
from gpu_dra.core.render.nodes import node_labels, node_taints
from gpu_dra.core.yamlsource import parse_documents

from .conftest import ROOT, STACKS, Project

EXAMPLES = ROOT / "examples" / "migrate"
GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}


# --------------------------------------------------------------------------------------------- helpers


def read(*paths: Path, version: str = "1.35") -> tuple[list[migrate.Workload], list[dict[str, Any]]]:
    files = [p for path in paths for p in (sorted(path.rglob("*.yaml")) if path.is_dir() else [path])]
    return migrate.read_workloads([(str(f.relative_to(ROOT) if f.is_relative_to(ROOT) else f),
                                    parse_documents(f.read_text(), str(f))) for f in files], version)


@functools.cache
def example_plan(stack: str) -> migrate.Plan:
    """The examples on a repo stack (computed once: the 16-GPU job costs the allocator its whole search)."""
    loaded = load_stack(ROOT, stack)
    workloads, claims = read(EXAMPLES, version=loaded.config.cluster.kubernetes_version)
    return migrate.plan(loaded, workloads, claims)


def verdicts(plan: migrate.Plan) -> dict[str, migrate.WorkloadVerdict]:
    return {v.workload.name: v for v in plan.verdicts}


def gpu_dra(capsys: pytest.CaptureFixture[str], *args: str, root: Path = ROOT,
            stdin: str | None = None) -> tuple[int, str, str]:
    """The gpu-dra command in process, through `main.execute` (its exit codes and error printing), a subprocess
    per call being slow for this many cases."""
    from gpu_dra.cli import main

    with pytest.MonkeyPatch.context() as patch:
        if stdin is not None:
            patch.setattr(sys, "stdin", io.StringIO(stdin))
        try:
            code = main.execute(["--project-dir", str(root), *args])
        except SystemExit as exit:  # argparse: --help, a missing argument
            code = int(exit.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def write(path: Path, *documents: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump_all(documents, sort_keys=False))
    return path


def deployment(name: str, namespace: str, gpus: Any, replicas: int = 1, resource: str = "nvidia.com/gpu",
               **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": namespace},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}}, "spec": {
                         "containers": [{"name": "main", "image": "registry.example.com/app:1",
                                         "resources": {"limits": {resource: gpus}}}], **spec}}}}


def containers(manifest: dict[str, Any]) -> Iterator[dict[str, Any]]:
    spec = migrate.pod_spec(manifest)
    yield from (*spec.get("initContainers", []), *spec["containers"])


# --------------------------------------------------------------------------------------------- reading


def test_reads_the_gpu_workloads_of_every_kind_and_ignores_the_rest() -> None:
    """The helm template stream's ServiceAccount, ConfigMap, Service and CPU-only router are not GPU workloads."""
    workloads, claims = read(EXAMPLES)
    assert [(w.kind, w.key) for w in workloads] == [
        ("CronJob", "inference/nightly-report"), ("DaemonSet", "inference/model-cache"),
        ("Deployment", "inference/web"), ("Deployment", "inference/vllm"), ("Job", "ml-training/mig-eval"),
        ("Job", "ml-training/pretrain-16"), ("Pod", "inference/embed-l40s"), ("StatefulSet", "ml-training/trainer")]
    assert claims == []
    by_name = {w.name: w for w in workloads}
    assert by_name["vllm"].where == "examples/migrate/helm-template-vllm.yaml:85"  # its `kind:` line
    assert {name: w.replicas for name, w in by_name.items()} == {
        "nightly-report": 1, "model-cache": None, "web": 2, "vllm": 1, "mig-eval": 1, "pretrain-16": 1,
        "embed-l40s": 1, "trainer": 1}
    assert by_name["embed-l40s"].per_pod() == {} and by_name["embed-l40s"].claims


def test_a_pod_needs_its_app_containers_or_its_largest_init_container_with_sidecars() -> None:
    """`PodRequests` (kubernetes/component-helpers@v0.35.0:resource/helpers.go): app containers and sidecars add up,
    an init container runs alone beside the sidecars started before it (KEP-753)."""
    workloads, _ = read(EXAMPLES)
    trainer = next(w for w in workloads if w.name == "trainer")
    assert [(c.name, c.role, dict(c.gpus)) for c in trainer.containers] == [
        ("gpu-check", "init", {"nvidia.com/gpu": 1}), ("trainer", "container", {"nvidia.com/gpu": 8})]
    assert trainer.per_pod() == {"nvidia.com/gpu": 8}  # the init container's GPU is one of the eight
    sidecar = migrate.Workload("x", None, {}, (
        migrate.Container("proxy", "sidecar", {"nvidia.com/gpu": 1}),
        migrate.Container("warm", "init", {"nvidia.com/gpu": 4}),
        migrate.Container("main", "container", {"nvidia.com/gpu": 2})), 1)
    assert sidecar.per_pod() == {"nvidia.com/gpu": 5}  # warm (4) beside the sidecar (1) beats 2 + 1
    sidecar.containers = (*sidecar.containers[:1], migrate.Container("main", "container", {"nvidia.com/gpu": 6}))
    assert sidecar.per_pod() == {"nvidia.com/gpu": 7}


def test_a_kubectl_list_as_json_is_read_like_yaml(tmp_path: Path) -> None:
    """`kubectl get deploy -o json` writes a List; JSON is YAML to the reader, and lines still point into it."""
    listing = {"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "inference"}},
        deployment("web", "inference", 1, replicas=2)]}
    path = tmp_path / "list.json"
    path.write_text(json.dumps(listing, indent=2))
    [workload], _ = read(path)
    assert workload.key == "inference/web" and workload.replicas == 2
    assert workload.line is not None and '"kind": "Deployment"' in path.read_text().splitlines()[workload.line - 1]


# --------------------------------------------------------------------------------------------- phases


EXPECTED = {
    # workload: (phase, where today, rewrite allocatable) on each stack. prod's A10G workloads are rewritten to
    # A10G claims (the GPUs they run on), which no DRA node of prod serves until legacy-a10g does.
    "prod": {"nightly-report": (1, "device-plugin", False), "model-cache": (2, "nowhere", True),
             "web": (1, "device-plugin", False), "vllm": (2, "nowhere", True), "mig-eval": (2, "nowhere", False),
             "pretrain-16": (2, "nowhere", False), "embed-l40s": (2, "claims", None),
             "trainer": (2, "nowhere", True)},
    "staging": {"nightly-report": (3, "mapping", True), "model-cache": (3, "mapping", True),
                "web": (3, "mapping", True), "vllm": (3, "mapping", True), "mig-eval": (2, "nowhere", False),
                "pretrain-16": (2, "nowhere", False), "embed-l40s": (2, "claims", None),
                "trainer": (3, "mapping", True)},
    "dev": {"nightly-report": (2, "nowhere", True), "model-cache": (2, "nowhere", False),
            "web": (2, "nowhere", True), "vllm": (2, "nowhere", True), "mig-eval": (2, "nowhere", False),
            "pretrain-16": (2, "nowhere", False), "embed-l40s": (2, "nowhere", None),
            "trainer": (2, "nowhere", True)},
}


@pytest.mark.parametrize("stack", STACKS)
def test_each_workload_gets_its_phase_on_each_stack(stack: str) -> None:
    """The phases differ by stack: prod keeps the 1-GPU workloads on its device-plugin group, staging's 1.36 serves
    every legacy workload that fits a DRA node through the chart's mapping, dev has neither."""
    plan = example_plan(stack)
    found = {name: (v.phase, v.placement.where, v.rewrite.allocatable if v.rewrite else None)
             for name, v in verdicts(plan).items()}
    assert found == EXPECTED[stack]
    assert plan.effective is (stack == "staging")
    assert {r: m.device_class for r, m in plan.mappings.items()} == {"nvidia.com/gpu": "gpu.nvidia.com"}
    for verdict in plan.verdicts:
        assert verdict.why.endswith(".") and verdict.why.count(". ") == 0  # one sentence
        assert verdict.stranded is (verdict.placement.where == "nowhere")


def test_why_names_the_cause() -> None:
    prod, staging, dev = (verdicts(example_plan(s)) for s in ("prod", "staging", "dev"))
    assert prod["web"].why.startswith("Runs on the device plugin (legacy-a10g) and may stay there; rewrite it to "
                                      "claims before legacy-a10g is removed; from Kubernetes 1.36 gpu.nvidia.com")
    assert prod["trainer"].why == ("Nowhere to run on stack prod (no device-plugin node has 8 GPUs; the "
                                   "gpu.nvidia.com mapping is dropped on 1.35): rewrite it to claims.")
    assert prod["mig-eval"].why == ("Nowhere to run on stack prod (the device plugin advertises no "
                                    "nvidia.com/mig-1g.10gb; no class maps nvidia.com/mig-1g.10gb): rewrite it to "
                                    "claims.")
    assert staging["trainer"].why.startswith("Served unchanged: DeviceClass gpu.nvidia.com (the DRA driver chart) "
                                             "maps nvidia.com/gpu and DRAExtendedResource is on in Kubernetes 1.36")
    assert dev["web"].why == ("Nowhere to run on stack dev (no device-plugin group; the gpu.nvidia.com mapping is "
                              "dropped on 1.35): rewrite it to claims.")
    assert "DRAExtendedResource is off (alpha in 1.35; EKS runs no alpha gates)" in dev["web"].placement.reason
    assert dev["model-cache"].placement.reason.startswith("no node of stack dev admits its pods")
    assert "at most 8 match on one node" in staging["pretrain-16"].placement.reason
    assert 'productName "NVIDIA A100-SXM4-40GB" does not match "L40S"' in dev["embed-l40s"].placement.reason


def test_prod_device_plugin_gpus_go_to_the_workloads_in_input_order() -> None:
    """legacy-a10g: 4 g5.2xlarge at max, 1 A10G each. The CronJob takes one, web's two replicas two; vllm's pod needs 4
    GPUs on one node, which no A10G node has."""
    plan = example_plan("prod")
    [group] = plan.groups
    assert (group.view.name, group.total, group.used, group.free) == ("legacy-a10g", 4, 3, [0, 0, 0, 1])
    found = verdicts(plan)
    assert found["nightly-report"].placement.gpus == {"legacy-a10g": 1}
    assert found["web"].placement.device_plugin == {"legacy-a10g": 2}
    assert "legacy-a10g: a pod needs 4 GPUs on one node; its g5.2xlarge nodes have 1" in \
        found["vllm"].placement.reason


def test_replicas_beyond_the_device_plugin_capacity_have_nowhere_to_run(tmp_path: Path) -> None:
    """Capacity is max nodes x GPUs per node less what the workloads before take: web takes 2 of 4, so only 2 of
    batch's 3 replicas fit."""
    workloads, claims = read(write(tmp_path / "w.yaml", deployment("web", "inference", 1, replicas=2),
                                   deployment("batch", "inference", "1", replicas=3)))
    found = verdicts(migrate.plan(load_stack(ROOT, "prod"), workloads, claims))
    batch = found["batch"]
    assert (batch.phase, batch.placement.placed, batch.placement.pending, batch.gpus_short) == (2, 2, 1, 1)
    assert batch.why.startswith("1 of its 3 pods have nowhere to run on stack prod (the device-plugin groups are full")
    assert ("legacy-a10g is full: 4 GPUs (4 x g5.2xlarge, 1 x NVIDIA A10G each), 2 taken by the workloads before it, "
            "2 by this one") in batch.placement.reason
    assert found["web"].phase == 1


def test_a_daemonset_needs_its_gpus_on_each_node_it_runs_on(tmp_path: Path) -> None:
    """A DaemonSet on the device-plugin nodes gets a pod per node; the node web and the CronJob filled have no GPU
    left for it."""
    pod = {"nodeSelector": {"gpu-dra.io/allocation": "device-plugin"},
           "containers": [{"name": "burn", "image": "i", "resources": {"limits": {"nvidia.com/gpu": 1}}}]}
    daemon = {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "burn", "namespace": "gpu-ops"},
              "spec": {"selector": {"matchLabels": {"a": "b"}},
                       "template": {"metadata": {"labels": {"a": "b"}}, "spec": pod}}}
    workloads, _ = read(EXAMPLES / "deployment-web.yaml", EXAMPLES / "cronjob-nightly-report.yaml",
                        write(tmp_path / "ds.yaml", daemon))
    found = verdicts(migrate.plan(load_stack(ROOT, "prod"), workloads))
    burn = found["burn"]
    assert (burn.placement.pods, burn.placement.device_plugin, burn.placement.pending) == (4, {"legacy-a10g": 1}, 3)
    # Its rewrite selects the DRA nodes where it selected the device-plugin ones: a pod on each of them, with a GPU.
    rewrite = burn.rewrite
    assert rewrite is not None
    assert migrate.pod_spec(rewrite.manifest)["nodeSelector"] == {"gpu-dra.io/allocation": "dra"}
    assert (rewrite.allocatable, len(rewrite.runs_on), rewrite.reason) == (True, 4 + 8, "")  # h100 and l40s at max


# --------------------------------------------------------------------------------------------- templates


def test_the_template_to_add_is_team_file_yaml() -> None:
    found = verdicts(example_plan("prod"))
    [eight] = found["trainer"].templates
    assert (eight.team, eight.team_file, eight.name, eight.exists) == (
        "training", "stacks/teams/training.yaml", "gpu-x8", False)
    assert eight.team_yaml == (
        "claimTemplates:\n"
        "  - name: gpu-x8\n"
        "    description: 8 x gpu.nvidia.com (whole GPUs of any model), for pods that asked for 8 nvidia.com/gpu\n"
        "    requests:\n"
        "      - name: gpu\n"
        "        deviceClass: gpu.nvidia.com\n"
        "        count: 8\n")
    [mig] = found["mig-eval"].templates
    assert yaml.safe_load(mig.team_yaml or "")["claimTemplates"][0]["requests"] == [
        {"name": "gpu", "deviceClass": "mig.nvidia.com", "match": {"migProfiles": ["1g.10gb"]}}]
    # The selector the shorthand compiles to reads the driver's `profile` attribute.
    selector = mig.rendered["spec"]["spec"]["devices"]["requests"][0]["exactly"]["selectors"][0]["cel"]["expression"]
    assert "device.attributes['gpu.nvidia.com'].profile in ['1g.10gb']" in selector
    [sixteen] = found["pretrain-16"].templates
    assert sixteen.notes == [
        "team training's quota allows 8 gpu.nvidia.com devices on stack prod; one claim of this template is charged "
        "16: raise the quota",
        "gpu.nvidia.com admits a GPU of any model (H100 80GB HBM3, L40S on stack prod's DRA nodes) and is charged to "
        "its own quota, not a per-model class's: name the model the workload needs (match.products) or one of the "
        "stack's classes (gpu-h100, gpu-l40s, gpu-a100) to keep it on its hardware"]
    # web, after the CronJob, is given the template suggested for it: one template per team, not one per workload;
    # both run on legacy-a10g's A10G today, and their template keeps them on A10G (issue 32: not any model).
    assert found["nightly-report"].templates[0].name == found["web"].templates[0].name == "a10g-x1"
    assert yaml.safe_load(found["nightly-report"].templates[0].team_yaml or "")["claimTemplates"][0]["requests"] == [
        {"name": "gpu", "deviceClass": "gpu.nvidia.com", "match": {"products": ["A10G"]}}]
    assert found["web"].templates[0].notes == []  # no widening to say


def test_a_pasted_template_loads_and_renders_what_migrate_explained(project: Project) -> None:
    """The YAML is the team file's schema exactly: appended to the team files, the stack loads and renders the
    ResourceClaimTemplate the rewrite was explained with."""
    plan = example_plan("prod")
    added: dict[str, list[migrate.TemplateChoice]] = {}
    for verdict in plan.verdicts:
        for choice in verdict.templates:
            if not choice.exists and choice.team and choice.name not in {c.name for c in added.get(choice.team, [])}:
                added.setdefault(choice.team, []).append(choice)
    assert {team: [c.name for c in choices] for team, choices in added.items()} == {
        "inference": ["a10g-x1", "gpu-x1", "gpu-x4"], "training": ["mig-1g.10gb-x1", "gpu-x16", "gpu-x8"]}
    for team, choices in added.items():
        def paste(data: dict[str, Any], choices: list[migrate.TemplateChoice] = choices) -> None:
            data["claimTemplates"] += [yaml.safe_load(c.team_yaml or "")["claimTemplates"][0] for c in choices]
        project.edit(f"stacks/teams/{team}.yaml", paste)
    loaded = load_stack(project.root, "prod")
    for team, choices in added.items():
        owner = next(t for t in loaded.teams if t.name == team)
        for choice in choices:
            pasted = next(t for t in owner.claim_templates if t.name == choice.name)
            assert manifests.claim_template(owner, pasted) == choice.rendered


def test_a_team_template_that_fits_is_used_and_names_are_not_reused(project: Project, tmp_path: Path) -> None:
    """inference's `one-a10g` asks for exactly one A10G, what web runs on: web uses it (a template of any model
    would not fit: it widens what web runs on). training's own `a10g-x1` is an L40S, which does not fit, so the
    suggestion for a 1-GPU training workload on the A10G group is named a10g-x1-2."""
    project.edit("stacks/teams/inference.yaml", lambda d: d["claimTemplates"].extend([
        {"name": "one-gpu", "requests": [{"name": "gpu", "deviceClass": "gpu.nvidia.com"}]},
        {"name": "one-a10g", "requests": [{"name": "gpu", "deviceClass": "gpu.nvidia.com",
                                           "match": {"products": ["A10G"], "deviceType": "gpu"}}]}]))
    project.edit("stacks/teams/training.yaml", lambda d: d["claimTemplates"].append(
        {"name": "a10g-x1", "requests": [{"name": "gpu", "deviceClass": "gpu-l40s"}]}))
    workloads, _ = read(EXAMPLES / "deployment-web.yaml", write(tmp_path / "t.yaml",
                                                                deployment("notebook", "ml-training", 1)))
    found = verdicts(migrate.plan(load_stack(project.root, "prod"), workloads))
    [web] = found["web"].templates
    assert (web.name, web.exists, web.team_yaml) == ("one-a10g", True, None)
    rewrite = found["web"].rewrite
    assert rewrite is not None and migrate.pod_spec(rewrite.manifest)["resourceClaims"] == [
        {"name": "gpu", "resourceClaimTemplateName": "one-a10g"}]
    assert found["notebook"].placement.device_plugin == {"legacy-a10g": 1}
    assert found["notebook"].templates[0].name == "a10g-x1-2"


def test_a_time_sliced_gpu_becomes_a_template_with_sharing(tmp_path: Path) -> None:
    """NVIDIA's device plugin advertises time-sliced GPUs as nvidia.com/gpu.shared with renameByDefault
    (NVIDIA/k8s-device-plugin@v0.18.2:api/config/v1/resources.go DefaultSharedRename). The stacks model no
    device-plugin time-slicing (render/charts.device_plugin_values sets no config), so nothing advertises it; the
    template shares the GPU through the DRA driver's GpuConfig, which needs its TimeSlicingSettings gate: on in dev,
    off in prod, where the research team is not hosted either."""
    workloads, _ = read(write(tmp_path / "nb.yaml", deployment("notebook", "research", 1,
                                                                resource="nvidia.com/gpu.shared")))
    dev = verdicts(migrate.plan(load_stack(ROOT, "dev"), workloads))["notebook"]
    [choice] = dev.templates
    assert (choice.name, choice.template.sharing and choice.template.sharing.strategy.value) == (
        "gpu-shared-x1", "TimeSlicing")
    assert yaml.safe_load(choice.team_yaml or "")["claimTemplates"][0]["sharing"] == {"strategy": "TimeSlicing"}
    assert [n.split(" (")[0] for n in choice.notes] == ["gpu.nvidia.com admits a GPU of any model"]  # runs nowhere
    assert dev.rewrite is not None and dev.rewrite.allocatable
    assert choice.rendered["spec"]["spec"]["devices"]["config"][0]["opaque"]["parameters"]["sharing"] == {
        "strategy": "TimeSlicing"}
    prod = verdicts(migrate.plan(load_stack(ROOT, "prod"), workloads))["notebook"]
    assert "the device plugin advertises no nvidia.com/gpu.shared" in prod.why
    [choice] = prod.templates
    assert choice.team is None and choice.team_file is None
    assert choice.notes[0].startswith("no team of stack prod owns namespace research (its teams: training "
                                      "(ml-training), inference (inference), ops (gpu-ops))")
    assert "needs the DRA driver gate TimeSlicingSettings (alpha), off on stack prod" in choice.notes[1]
    assert prod.rewrite is not None and not prod.rewrite.allocatable
    assert prod.rewrite.reason.startswith("no team of stack prod owns namespace research")


# --------------------------------------------------------------------------------------------- rewrites


def dra_nodes(stack: str) -> list[dict[str, Any]]:
    """The stack's DRA nodes as Node objects, from render/nodes (labels, taints), named as the fleet synthesis names
    them: what `gpu-dra explain` needs to judge the pods' tolerations."""
    config = load_stack(ROOT, stack).config
    return [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"{g.name}-{n}", "labels": node_labels(g)},
             "spec": {"taints": [t.model_dump(mode="json", exclude_none=True) for t in node_taints(g)]}}
            for g in config.node_groups if g.allocation_mode.value == "dra" for n in range(g.scaling.max)]


@pytest.mark.parametrize("stack", STACKS)
def test_every_rewrite_is_on_claims_and_valid_under_the_strict_schema(stack: str) -> None:
    plan = example_plan(stack)
    for verdict in plan.verdicts:
        rewrite = verdict.rewrite
        if verdict.workload.per_pod() == {}:
            assert rewrite is None  # on claims already
            continue
        assert rewrite is not None and rewrite.schema_error is None
        k8s_schema.validate(rewrite.manifest, plan.target.kubernetes_version, strict=True)
        spec = migrate.pod_spec(rewrite.manifest)
        [template] = verdict.templates
        assert spec["resourceClaims"] == [{"name": "gpu", "resourceClaimTemplateName": template.name}]
        asked = [c.name for c in verdict.workload.containers if any(c.gpus.values())]
        for container in containers(rewrite.manifest):
            resources = container.get("resources", {})
            assert not [r for part in ("limits", "requests") for r in resources.get(part, {}) if "nvidia.com" in r]
            assert resources.get("claims", []) == ([{"name": "gpu"}] if container["name"] in asked else [])
        assert spec["tolerations"].count(GPU_TOLERATION) == 1
        assert "status" not in rewrite.manifest


def test_the_rewrite_changes_nothing_else() -> None:
    verdict = verdicts(example_plan("prod"))["trainer"]
    assert verdict.rewrite is not None
    expected = copy.deepcopy(verdict.workload.obj)
    spec = expected["spec"]["template"]["spec"]
    del spec["initContainers"][0]["resources"]["limits"]
    spec["initContainers"][0]["resources"]["claims"] = [{"name": "gpu"}]
    resources = spec["containers"][0]["resources"]
    del resources["requests"]["nvidia.com/gpu"], resources["limits"]["nvidia.com/gpu"]
    resources["claims"] = [{"name": "gpu"}]
    spec["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": "gpu-x8"}]
    spec["tolerations"] = [GPU_TOLERATION]
    assert verdict.rewrite.manifest == expected


@pytest.mark.parametrize(("stack", "name"), [("prod", "trainer"), ("prod", "vllm"), ("prod", "mig-eval"),
                                             ("staging", "web"), ("dev", "trainer"), ("dev", "nightly-report")])
def test_explain_agrees_with_what_migrate_says_of_a_rewrite(stack: str, name: str, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """`gpu-dra explain --stack` on the rewrite, its template and the stack's DRA nodes (with their GPU taint) gives
    the verdict migrate gave; without the toleration migrate added, the pod may use no DRA node."""
    verdict = verdicts(example_plan(stack))[name]
    assert verdict.rewrite is not None
    [choice] = verdict.templates
    pod = verdict.workload.key
    files = write(tmp_path / "rewrite.yaml", verdict.rewrite.manifest, choice.rendered, *dra_nodes(stack))
    code, out, err = gpu_dra(capsys, "explain", "--stack", stack, str(files), "--pod", pod, "--format", "json")
    assert code == (0 if verdict.rewrite.allocatable else 1), err
    assert json.loads(out)["pods"][0]["allocatable"] is verdict.rewrite.allocatable
    untolerated = copy.deepcopy(verdict.rewrite.manifest)
    migrate.pod_spec(untolerated)["tolerations"].remove(GPU_TOLERATION)
    write(files, untolerated, choice.rendered, *dra_nodes(stack))
    code, out, _ = gpu_dra(capsys, "explain", "--stack", stack, str(files), "--pod", pod, "--format", "json")
    assert code == 1 and "no node it may use" in json.loads(out)["pods"][0]["reason"]


# --------------------------------------------------------------------------------------------- mappings


def test_the_stack_version_decides_whether_the_chart_mapping_serves_legacy_pods(project: Project) -> None:
    """DRAExtendedResource is alpha (off, and never on on EKS) in 1.35 and beta, on, in 1.36 (facts/gates.py): the
    same dev fleet serves web unchanged once it runs 1.36."""
    workloads, _ = read(EXAMPLES / "deployment-web.yaml")
    project.edit_stack("dev", lambda c: c["gpu-dra:cluster"].update({"kubernetesVersion": "1.36"}))
    web = migrate.plan(load_stack(project.root, "dev"), workloads).verdicts[0]
    assert (web.phase, web.placement.where, web.placement.mapped) == (3, "mapping", 2)


def test_a_mapping_of_another_name_serves_only_pods_that_tolerate_the_gpu_taint(project: Project,
                                                                                tmp_path: Path) -> None:
    """The ExtendedResourceToleration admission plugin, on on EKS (https://docs.aws.amazon.com/eks/latest/userguide/
    platform-versions.html), tolerates the taint named after each extended resource the pod asks for: a pod asking
    for nvidia.com/gpu-l40s does not tolerate the DRA nodes' nvidia.com/gpu taint, so the mapping finds no node
    until the pod tolerates it. The claim template it needs asks for the class the stack maps the name to."""
    project.edit_stack("staging", lambda c: c.update(
        {"gpu-dra:legacyMappings": [{"extendedResourceName": "nvidia.com/gpu-l40s", "deviceClass": "gpu-l40s"}]}))
    stack = load_stack(project.root, "staging")
    plain = deployment("embed", "inference", 1, resource="nvidia.com/gpu-l40s")
    tolerant = deployment("embed-tolerant", "inference", 1, resource="nvidia.com/gpu-l40s",
                          tolerations=[GPU_TOLERATION])
    workloads, _ = read(write(tmp_path / "w.yaml", plain, tolerant), version="1.36")
    found = verdicts(migrate.plan(stack, workloads))
    assert found["embed"].phase == 2
    assert ("gpu-l40s (gpu-dra:legacyMappings[0]) maps nvidia.com/gpu-l40s, but claim inference/embed-extended-"
            "resources (extended-resources): request gpu: none of its matching devices is reachable from the nodes "
            "tried; none of the 3 nodes with matching devices admits the pod (l40s-0: the pod does not tolerate its "
            "taint nvidia.com/gpu=true:NoSchedule)"
            ) in found["embed"].placement.reason
    served = found["embed-tolerant"].placement
    assert (found["embed-tolerant"].phase, served.mapping and served.mapping.device_class) == (3, "gpu-l40s")
    [choice] = found["embed"].templates  # inference's own `l40s` asks for exactly that
    assert (choice.name, choice.exists, choice.device_class) == ("l40s", True, "gpu-l40s")


def test_an_existing_cluster_assumes_no_admission_tolerations(project: Project, tmp_path: Path) -> None:
    """On an existing cluster gpu-dra does not know ExtendedResourceToleration is on, so a legacy pod without the
    GPU toleration is not served by the mapping on a tainted DRA pool; its device-plugin pool still runs it."""
    def existing(config: dict[str, Any]) -> None:
        config["gpu-dra:cluster"] = {"name": "lab", "platform": "existing", "kubernetesVersion": "1.36",
                                     "kubeconfig": {"path": "~/.kube/config"}}
        config["gpu-dra:nodeGroups"] = []
        config["gpu-dra:nodePools"] = [
            {"name": "h100", "nodeSelector": {"node.kubernetes.io/instance-type": "p5.48xlarge"},
             "instanceType": "p5.48xlarge", "nodes": 1,
             "taints": [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}]},
            {"name": "old", "nodeSelector": {"pool": "old"}, "gpuModel": "A10G", "gpuCount": 1, "nodes": 2,
             "allocationMode": "device-plugin"}]
    project.edit_stack("dev", existing)
    workloads, _ = read(EXAMPLES / "deployment-web.yaml", EXAMPLES / "statefulset-trainer.yaml", version="1.36")
    found = verdicts(migrate.plan(load_stack(project.root, "dev"), workloads))
    assert (found["web"].phase, found["web"].placement.device_plugin) == (1, {"old": 2})
    assert found["trainer"].phase == 2  # 8 GPUs: the mapping would serve it, but it does not tolerate the taint
    assert "does not tolerate its taint nvidia.com/gpu=true:NoSchedule" in found["trainer"].placement.reason
    assert found["trainer"].rewrite is not None and found["trainer"].rewrite.allocatable


# --------------------------------------------------------------------------------------------- the command


def test_without_the_device_plugin_group_strands_the_workloads_on_it(capsys: pytest.CaptureFixture[str]) -> None:
    """web and the CronJob run on legacy-a10g: today everything given has a place (exit 0); without the group they
    have none (exit 1), 3 GPUs short, all of them phase 1 today."""
    files = (str(EXAMPLES / "deployment-web.yaml"), str(EXAMPLES / "cronjob-nightly-report.yaml"))
    code, out, err = gpu_dra(capsys, "migrate", "--stack", "prod", *files)
    assert code == 0, err
    code, out, err = gpu_dra(capsys, "migrate", "--stack", "prod", "--without", "legacy-a10g", "--format", "json",
                             *files)
    assert code == 1, err
    without = json.loads(out)["without"]
    assert [(b["workload"], b["phase"], b["gpus_short"]) for b in without["broken"]] == [
        ("inference/web", 1, 2), ("inference/nightly-report", 1, 1)]  # in input order
    assert without["shortfall"] == {"1": 3, "2": 0, "3": 0}
    assert without["broken"][0]["reason"].startswith("stack prod has no device-plugin node group")
    code, out, _ = gpu_dra(capsys, "migrate", "--stack", "prod", "--without", "legacy-a10g", *files)
    assert "Without legacy-a10g: 2 more workload(s) left with nowhere to run:" in out
    assert "  GPUs short per phase (of today): phase 1: 3, phase 2: 0, phase 3: 0" in out


def test_without_on_all_examples_counts_the_shortfall_per_phase(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = gpu_dra(capsys, "migrate", "--stack", "prod", "--without", "legacy-a10g", "--format", "json",
                             str(EXAMPLES))
    assert code == 1, err
    document = json.loads(out)
    # Today: model-cache 8 nodes x 1, vllm 4, mig-eval 1, pretrain-16 16, trainer 8 have nowhere to run.
    assert document["gpus_short"] == 37 and document["stranded"] == 5
    assert document["without"]["shortfall"] == {"1": 3, "2": 37, "3": 0}


@pytest.mark.parametrize(("stack", "group", "message"), [
    ("prod", "nope", "--without nope: stack prod has no node group 'nope'; its device-plugin groups: legacy-a10g"),
    ("prod", "h100", "--without h100: h100 is a dra group; its device-plugin groups: legacy-a10g"),
    ("dev", "legacy-a10g", "--without legacy-a10g: stack dev has no node group 'legacy-a10g'; it has no "
                           "device-plugin group (its GPU groups: l4, a100)"),
])
def test_without_an_unknown_group_is_a_usage_error(stack: str, group: str, message: str,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = gpu_dra(capsys, "migrate", "--stack", stack, "--without", group, str(EXAMPLES))
    assert (code, out, err) == (2, "", f"gpu-dra: {message}\n")


def test_exit_code_says_whether_every_workload_has_a_place(capsys: pytest.CaptureFixture[str]) -> None:
    placed = [str(EXAMPLES / f) for f in ("deployment-web.yaml", "statefulset-trainer.yaml", "helm-template-vllm.yaml",
                                         "daemonset-model-cache.yaml", "pod-on-claims.yaml")]
    assert gpu_dra(capsys, "migrate", "--stack", "staging", *placed)[0] == 0
    assert gpu_dra(capsys, "migrate", "--stack", "staging", *placed, str(EXAMPLES / "job-mig-eval.yaml"))[0] == 1
    assert gpu_dra(capsys, "migrate", "--stack", "prod", *placed)[0] == 1


BAD = [
    ("requests only", {"requests": {"nvidia.com/gpu": 1}},
     "w.yaml:{nvidia.com/gpu}: Deployment inference/bad: spec.template.spec.containers[0].resources.requests"
     "['nvidia.com/gpu']: Limit must be set for non overcommitable resources"),
    ("request below limit", {"requests": {"nvidia.com/gpu": 1}, "limits": {"nvidia.com/gpu": 2}},
     "Deployment inference/bad: spec.template.spec.containers[0].resources.requests['nvidia.com/gpu']: must be equal "
     "to nvidia.com/gpu limit of 2"),
    ("half a GPU", {"limits": {"nvidia.com/gpu": "500m"}},
     "resources.limits['nvidia.com/gpu']: 500m: must be an integer"),
    ("a misspelt key", {"limits": {"nvidia.com/gpu": 1}, "limtis": {}},
     "w.yaml:{resources}: Deployment inference/bad: spec.template.spec.containers[0].resources: Additional "
     "properties are not allowed ('limtis' was unexpected) (the strict OpenAPI schema of Kubernetes 1.35)"),
]


@pytest.mark.parametrize(("case", "resources", "message"), BAD, ids=[case for case, _, _ in BAD])
def test_a_workload_the_api_server_refuses_is_bad_input(case: str, resources: dict[str, Any], message: str,
                                                        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = deployment("bad", "inference", 1)
    bad["spec"]["template"]["spec"]["containers"][0]["resources"] = resources
    path = write(tmp_path / "w.yaml", {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}}, bad)
    lines = path.read_text().splitlines()
    for key in ("nvidia.com/gpu", "resources"):  # the line of the first such key, as the message names it
        message = message.replace(f"{{{key}}}", str(next(n for n, text in enumerate(lines, 1) if f"{key}:" in text)))
    code, out, err = gpu_dra(capsys, "migrate", "--stack", "prod", str(path))
    assert (code, out) == (2, ""), err
    assert err.startswith(f"gpu-dra: {tmp_path}/") and message in err and "Traceback" not in err


def test_unreadable_inputs_are_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "empty").mkdir()
    broken = tmp_path / "broken.yaml"
    broken.write_text("kind: Deployment\nspec: [\n")
    twice = write(tmp_path / "twice.yaml", deployment("web", "inference", 1), deployment("web", "inference", 2))
    cpu = write(tmp_path / "cpu.yaml", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}})
    second = [n for n, text in enumerate(twice.read_text().splitlines(), 1) if text == "kind: Deployment"][1]
    cases = {
        str(tmp_path / "missing.yaml"): "missing.yaml: cannot read: No such file or directory",
        str(tmp_path / "empty"): "empty: no *.yaml, *.yml, *.json files in this folder",
        str(broken): "broken.yaml:3: not valid YAML",
        str(twice): f"twice.yaml:{second}: Deployment inference/web: defined twice (first at "
                    f"{twice}:2); give each workload once",
        str(cpu): "no GPU workload in the inputs",
    }
    for path, message in cases.items():
        code, out, err = gpu_dra(capsys, "migrate", "--stack", "prod", path)
        assert (code, out) == (2, ""), (path, err)
        assert message in err and "Traceback" not in err, err


def test_stdin_and_folders_are_read_in_a_stable_order(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`helm template ... | gpu-dra migrate -`; a folder is read recursively, its files sorted."""
    helm = (EXAMPLES / "helm-template-vllm.yaml").read_text()
    code, out, err = gpu_dra(capsys, "migrate", "--stack", "staging", "--format", "json", "-", stdin=helm)
    assert code == 0, err
    [vllm] = json.loads(out)["workloads"]
    assert (vllm["workload"], vllm["source"], vllm["phase"]) == ("inference/vllm", "<stdin>:85", 3)
    (tmp_path / "b" / "deep").mkdir(parents=True)
    write(tmp_path / "b" / "deep" / "one.yml", deployment("one", "inference", 1))
    write(tmp_path / "a.yaml", deployment("two", "inference", 1))
    (tmp_path / "b" / "notes.txt").write_text("not read")
    code, out, err = gpu_dra(capsys, "migrate", "--stack", "staging", "--format", "json", str(tmp_path))
    assert code == 0, err
    assert [w["workload"] for w in json.loads(out)["workloads"]] == ["inference/two", "inference/one"]


def test_write_puts_one_file_per_workload_and_never_touches_the_users(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """As `gpu-dra render --out` (cli/manifest_files): the record lists what gpu-dra wrote; a later run replaces and
    prunes only those; a file of the user's where a rewrite would go stops the run before anything is written."""
    out_dir = tmp_path / "migrated"
    (out_dir / "inference").mkdir(parents=True)
    (out_dir / "kustomization.yaml").write_text("resources: []\n")
    code, out, err = gpu_dra(capsys, "migrate", "--stack", "prod", "--write", str(out_dir), str(EXAMPLES))
    assert code == 1, err
    written = sorted(p.relative_to(out_dir).as_posix() for p in out_dir.rglob("*.yaml"))
    assert written == ["inference/cronjob-nightly-report.yaml", "inference/daemonset-model-cache.yaml",
                       "inference/deployment-vllm.yaml", "inference/deployment-web.yaml", "kustomization.yaml",
                       "ml-training/job-mig-eval.yaml", "ml-training/job-pretrain-16.yaml",
                       "ml-training/statefulset-trainer.yaml"]
    trainer = yaml.safe_load((out_dir / "ml-training" / "statefulset-trainer.yaml").read_text())
    assert trainer == verdicts(example_plan("prod"))["trainer"].rewrite.manifest  # type: ignore[union-attr]
    assert "7 rewrite(s) written:" in out
    # A second run on fewer workloads prunes the rewrites it no longer makes; the user's file stays.
    code, _, err = gpu_dra(capsys, "migrate", "--stack", "prod", "--write", str(out_dir),
                           str(EXAMPLES / "deployment-web.yaml"))
    assert code == 0, err
    assert sorted(p.relative_to(out_dir).as_posix() for p in out_dir.rglob("*.yaml")) == [
        "inference/deployment-web.yaml", "kustomization.yaml"]
    # A file of the user's where a rewrite would go: exit 2, nothing written.
    mine = out_dir / "ml-training" / "statefulset-trainer.yaml"
    mine.parent.mkdir()
    mine.write_text("# mine\n")
    code, out, err = gpu_dra(capsys, "migrate", "--stack", "prod", "--write", str(out_dir), str(EXAMPLES))
    assert (code, out) == (2, "")
    assert "statefulset-trainer.yaml exists and gpu-dra did not write it" in err and "Nothing was written" in err
    assert mine.read_text() == "# mine\n" and not (out_dir / "inference" / "deployment-vllm.yaml").exists()


def test_text_output_says_it_all_per_workload(capsys: pytest.CaptureFixture[str],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    code, out, err = gpu_dra(capsys, "migrate", "--stack", "prod", "examples/migrate")
    assert code == 1, err
    assert out.startswith("Stack prod: Kubernetes 1.35 (eks), 8 GPU workload(s)\n"
                          "  mapping nvidia.com/gpu -> DeviceClass gpu.nvidia.com (the DRA driver chart): NOT "
                          "effective (DRAExtendedResource is off: the API server drops it)\n"
                          "  device-plugin group legacy-a10g: 4 x g5.2xlarge, 1 x NVIDIA A10G each: 4 GPUs, 3 taken "
                          "by these workloads\n")
    web = out.split("Deployment inference/web ")[1].split("\n\n")[0].splitlines()
    assert web == [
        "(examples/migrate/deployment-web.yaml:4): 2 pod(s) x nvidia.com/gpu: 1",
        "  today: device plugin on legacy-a10g (2 pod(s), 2 GPU(s))",
        "  phase 1: Runs on the device plugin (legacy-a10g) and may stay there; rewrite it to claims before "
        "legacy-a10g is removed; from Kubernetes 1.36 gpu.nvidia.com serves it unchanged (DRAExtendedResource on by "
        "default).",
        "  template: a10g-x1, to add as shown above",
        "  rewrite: valid under the strict schema of Kubernetes 1.35; NOT allocatable: claim inference/web-gpu (gpu): "
        "request gpu: no device matches; most common: selector #0: productName \"NVIDIA H100 80GB HBM3\" does not "
        "match \"A10G\" (32 devices)",
        "  note: no DRA node of stack prod has the GPUs its pods run on today (A10G): the rewrite waits for "
        "legacy-a10g to serve DRA (its allocationMode: dra, docs/migration.md); a template of another model would "
        "move it to other hardware, and its quota"]
    assert "    claimTemplates:\n      - name: gpu-x8\n" in out
    assert out.rstrip().endswith("Workloads per phase: phase 1: 2, phase 2: 6, phase 3: 0. Nowhere to run: 5 "
                                 "workload(s), 37 GPU(s) short.")


def test_help_has_examples(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = gpu_dra(capsys, "migrate", "--help")
    assert code == 0
    assert "gpu-dra migrate --stack prod --without legacy-a10g examples/migrate/" in out
    assert "exit codes: 0 every GPU workload has a place" in out


def test_the_gpu_dra_command_has_the_verb() -> None:
    """Registered in gpu_dra/cli/main.py (VERBS): `gpu-dra migrate` as users run it."""
    result = subprocess.run([sys.executable, "-m", "gpu_dra.cli.main", "migrate", "--stack", "staging",
                             str(EXAMPLES / "deployment-web.yaml")], cwd=ROOT, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert "phase 3: Served unchanged" in result.stdout


def test_a_claim_no_node_can_hold_is_judged_as_the_explain_engine_judges_it() -> None:
    """A request for more devices than match on any one node is said without running the allocator's search (seconds
    for 16 of 8 GPUs): the verdict and the words are the engine's own."""
    from gpu_dra.core.analysis.explain import Explainer
    from gpu_dra.core.analysis.features import features_for
    from gpu_dra.core.analysis.inventory import synthesize
    from gpu_dra.core.analysis.pods import explain_pods, pods_from_objects
    from gpu_dra.core.dra.claims import claims_from_objects, classes_from_objects
    from gpu_dra.core.facts.target import Target

    stack = load_stack(ROOT, "prod")
    verdict = verdicts(example_plan("prod"))["pretrain-16"]
    assert verdict.rewrite is not None
    [choice] = verdict.templates
    explainer = Explainer(classes_from_objects(manifests.stack_device_classes(stack)),
                          features=features_for(Target("1.35")))
    [report] = explain_pods(pods_from_objects([verdict.rewrite.manifest]), claims_from_objects([choice.rendered]),
                            synthesize(stack.config), explainer)
    assert not report.allocatable and not verdict.rewrite.allocatable
    assert verdict.rewrite.reason == report.reason == (
        "claim ml-training/pretrain-16-gpu (gpu): request gpu needs 16 device(s), but at most 8 match on one node "
        "(h100-0)")


def test_a_name_the_api_server_refuses_is_bad_input_and_writes_nothing(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """Names are DNS subdomains and namespaces DNS labels (ValidateObjectMeta), which also keeps --write's
    <namespace>/<kind>-<name>.yaml inside its folder."""
    escape = deployment("../../escape", "inference", 1)
    code, out, err = gpu_dra(capsys, "migrate", "--stack", "staging", "--write", str(tmp_path / "out"),
                             str(write(tmp_path / "w.yaml", escape)))
    assert (code, out) == (2, "")
    assert "Deployment inference/../../escape: metadata.name: '../../escape' must be a DNS subdomain" in err
    assert not (tmp_path / "out").exists() and not (tmp_path / "escape.yaml").exists()
    upper = deployment("web", "Inference", 1)
    code, _, err = gpu_dra(capsys, "migrate", "--stack", "staging", str(write(tmp_path / "w.yaml", upper)))
    assert code == 2 and "metadata.namespace: 'Inference' must be a DNS label" in err


def test_replicas_as_helm_and_the_api_server_allow(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`replicas: null` (helm template with an unset value) is the default 1; a negative count is refused, as the API
    server refuses it; a GPU count of 0 asks for nothing; a count beyond any quantity is bad input."""
    unset = deployment("web", "inference", 1)
    unset["spec"]["replicas"] = None
    code, out, err = gpu_dra(capsys, "migrate", "--stack", "prod", str(write(tmp_path / "unset.yaml", unset)))
    assert code == 0, err
    assert "Deployment inference/web (" in out and "1 pod(s) x nvidia.com/gpu: 1" in out
    negative = deployment("web", "inference", 1, replicas=-3)
    code, out, err = gpu_dra(capsys, "migrate", "--stack", "prod", str(write(tmp_path / "negative.yaml", negative)))
    assert code == 2 and "spec.replicas: -3: must be a whole number, 0 or more" in err, err
    none = write(tmp_path / "zero.yaml", deployment("cpu", "inference", 0))
    code, out, err = gpu_dra(capsys, "migrate", "--stack", "prod", str(none))
    assert code == 2 and "no GPU workload in the inputs" in err, err
    huge = write(tmp_path / "huge.yaml", deployment("web", "inference", "1e999999999"))
    code, out, err = gpu_dra(capsys, "migrate", "--stack", "prod", str(huge))
    assert code == 2 and "'1e999999999' is too large for a Kubernetes quantity" in err, err


def test_what_a_controller_made_and_finished_jobs_are_not_workloads(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """`kubectl get cronjob,job -o yaml` lists a CronJob's Jobs beside it: the CronJob is the workload, and a Job
    that has finished asks for nothing any more."""
    cronjob = yaml.safe_load((EXAMPLES / "cronjob-nightly-report.yaml").read_text())
    template = cronjob["spec"]["jobTemplate"]
    owned = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {
        "name": "nightly-report-29410", "namespace": cronjob["metadata"]["namespace"],
        "ownerReferences": [{"apiVersion": "batch/v1", "kind": "CronJob", "name": "nightly-report", "uid": "u1",
                             "controller": True}]}, "spec": template["spec"]}
    done = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "backfill", "namespace": "inference"},
            "spec": template["spec"], "status": {"conditions": [{"type": "Complete", "status": "True"}]}}
    listed = {"apiVersion": "v1", "kind": "List", "items": [cronjob, owned, done]}
    code, out, err = gpu_dra(capsys, "migrate", "--stack", "prod", "--format", "json",
                             str(write(tmp_path / "list.yaml", listed)))
    assert code == 0, err
    assert [(w["kind"], w["workload"]) for w in json.loads(out)["workloads"]] == [
        ("CronJob", f"inference/{cronjob['metadata']['name']}")]


def test_the_stacks_class_for_the_model_it_runs_on_is_chosen(project: Project) -> None:
    """A stack class that selects the GPUs a workload runs on today (the narrowest, by the catalog's models it
    matches) is its template's class: the per-model quota keeps charging it."""
    project.edit_stack("prod", lambda config: config["gpu-dra:deviceClasses"].extend([
        {"name": "gpu-ampere-small", "match": {"products": ["A10G", "A100"]}},
        {"name": "gpu-a10g", "match": {"products": ["A10G"], "deviceType": "gpu"}}]))
    project.edit("stacks/teams/inference.yaml", lambda d: d["quota"]["devices"].update({"gpu-a10g": 2}))
    workloads, _ = read(EXAMPLES / "deployment-web.yaml")
    [web] = verdicts(migrate.plan(load_stack(project.root, "prod"), workloads))["web"].templates
    assert (web.name, web.device_class) == ("gpu-a10g-x1", "gpu-a10g")
    assert web.template.requests[0].match is None and web.notes == []


@pytest.mark.parametrize("match", [{"migProfiles": ["1g.10gb"]}, {"migProfiles": ["1g.10gb"], "deviceType": "mig"}])
def test_the_stacks_class_for_a_mig_profile_is_chosen(project: Project, match: dict[str, Any]) -> None:
    """With or without deviceType: mig written, the stack's class for exactly the profile serves nvidia.com/mig-*."""
    project.edit_stack("prod", lambda config: config["gpu-dra:deviceClasses"].append(
        {"name": "mig-1g", "match": match}))
    project.edit("stacks/teams/training.yaml", lambda d: d["quota"]["devices"].update({"mig-1g": 2}))
    workloads, _ = read(EXAMPLES / "job-mig-eval.yaml")
    [mig] = verdicts(migrate.plan(load_stack(project.root, "prod"), workloads))["mig-eval"].templates
    assert mig.device_class == "mig-1g"
