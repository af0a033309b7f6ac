"""The plan: every workload's verdict on the stack, in input order (the workloads before it take the device-plugin
GPUs first), its pods explained on the stack's synthesized fleet with the faithful allocator."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

import kubernetes_validate

from gpu_dra.core.analysis import placement as first_fit
from gpu_dra.core.analysis.inventory import launched_pools
from gpu_dra.core.analysis.migrate.explaining import PodExplainer, PodOutcome
from gpu_dra.core.analysis.migrate.rewriting import Rewrite, claim_entry, rewrite
from gpu_dra.core.analysis.migrate.stack_view import (
    admission_tolerations,
    gate_off_reason,
    gpu_tolerations,
    mappings,
    mappings_effective,
    without_groups,
)
from gpu_dra.core.analysis.migrate.templates import GPU, GPU_CLASS, TemplateChoice, Wanted, choose_template, wanted
from gpu_dra.core.analysis.migrate.verdicts import (
    GroupCapacity,
    Placement,
    Plan,
    Reason,
    WorkloadVerdict,
)
from gpu_dra.core.analysis.migrate.workloads import Workload, pod_spec, schema_validate
from gpu_dra.core.analysis.provisioning import only_launched
from gpu_dra.core.analysis.stack_nodes import GroupView, group_views
from gpu_dra.core.config.models import AllocationMode, ClaimTemplate, Stack
from gpu_dra.core.dra.scheduling import schedules_on
from gpu_dra.core.render import manifests


class _Planner:
    """One stack's view, mappings and fleet, kept across the workloads it judges in input order."""

    def __init__(self, stack: Stack, claim_objects: Sequence[Mapping[str, Any]],
                 cache: dict[str, PodOutcome | None] | None = None, rewrites: bool = True):
        self.rewrites = rewrites
        self.stack = stack
        self.target = stack.config.target
        self.views = group_views(stack)
        self.pods = PodExplainer(stack, self.views, claim_objects, cache)
        self.mappings = mappings(stack)
        self.effective = mappings_effective(stack)
        self.teams = {team.namespace_name: team for team in stack.teams}
        self.suggested: dict[str, dict[str, ClaimTemplate]] = {}  # namespace -> templates suggested in this run
        self.tolerations = gpu_tolerations(self.views)
        self.launched_pools = launched_pools(stack.config)  # whose nodes exist only once launched

    def runs_on(self, spec: Mapping[str, Any]) -> list[tuple[GroupView, str]]:
        """The nodes a DaemonSet's pods are made for: its pod template's node selection and tolerations (the
        DaemonSet controller judges the template, before any admission plugin adds to the pods)."""
        return [(view, name) for view in self.views for name in view.node_names()
                if schedules_on(spec, {**view.labels, "kubernetes.io/hostname": name}, view.taints)]

    def verdict(self, workload: Workload, capacity: dict[str, GroupCapacity]) -> WorkloadVerdict:
        need = workload.per_pod()
        notes: list[str] = []
        if workload.replicas is None:
            nodes = self.runs_on(workload.spec)
            pods = len(nodes)
        else:
            nodes, pods = [], workload.replicas
        placement = Placement(pods)
        if not need:  # on claims already
            report = self.pods.explain(workload.obj)
            if report is not None and report.allocatable:
                fit = set(report.nodes)
                placement.claims = sum(1 for _, n in nodes if n in fit) if workload.replicas is None else pods
            placement.reason = _pending_reason(report, placement) if placement.pending or not pods else ""
            return WorkloadVerdict(workload, placement, 2, _why_claims(placement, self.stack.name))
        mapping = self._map(workload, need, placement, nodes)
        plugin = self._device_plugin(workload, need, placement, nodes, capacity)
        placement.reason = "; ".join(r.long for r in (plugin, mapping) if r.long) if placement.pending else ""
        short = "; ".join(r.short for r in (plugin, mapping) if r.short)
        if workload.replicas is None and pods == 0:
            placement.reason = (f"no node of stack {self.stack.name} admits its pods (nodeSelector, node affinity, "
                                "taints)")
            short = "no node admits its pods"
        phase, why = self._phase(placement, need, short)
        verdict = WorkloadVerdict(workload, placement, phase, why, notes=notes)
        if self.rewrites:
            self._rewrite(verdict, need)
        if placement.pods > 1 and placement.mapped:
            notes.append("the DRA fleet is judged per pod at max size, as `gpu-dra explain --stack` does: its "
                         f"{placement.pods} pods each fit alone; they compete for the devices with each other and "
                         "the stack's other claims")
        return verdict

    def _map(self, workload: Workload, need: Mapping[str, int], placement: Placement,
             nodes: Sequence[tuple[GroupView, str]]) -> Reason:
        """Serve the pods through extendedResourceName mappings, if the stack has them effective and the scheduler's
        claim for the pod allocates: one request per resource for the pod's count, of the mapped class (the devices
        `createDeviceRequests` reaches for its containers, init containers' reused; kubernetes/kubernetes@v1.36.0
        pkg/scheduler/framework/plugins/dynamicresources/extendedresources.go)."""
        mapped = [self.mappings.get(r) for r in need]
        missing = [r for r, m in zip(need, mapped, strict=True) if m is None]
        if missing:
            return Reason(f"no DeviceClass maps {', '.join(missing)}", f"no class maps {', '.join(missing)}")
        first = mapped[0]
        assert first is not None
        placement.mapping = first
        names = ", ".join(f"{m.device_class} ({m.origin}) maps {m.resource}" for m in mapped if m)
        classes = ", ".join(dict.fromkeys(m.device_class for m in mapped if m))
        if not self.effective:
            return Reason(f"{names}, but {gate_off_reason(self.target)}",
                          f"the {classes} mapping is dropped on {self.target.kubernetes_version}")
        claim_name = f"{workload.name}-extended-resources"[:253]
        claim = {"apiVersion": manifests.RESOURCE_API, "kind": "ResourceClaim",
                 "metadata": {"name": claim_name, "namespace": workload.namespace},
                 "spec": {"devices": {"requests": [
                     {"name": claim_entry(m.resource, len(need) == 1),
                      "exactly": {"deviceClassName": m.device_class, "allocationMode": "ExactCount",
                                  "count": need[m.resource]}}
                     for m in mapped if m]}}}
        pod = copy.deepcopy(workload.obj)
        spec = pod_spec(pod)
        spec["tolerations"] = [*(spec.get("tolerations") or []), *admission_tolerations(need, self.target.platform)]
        spec["resourceClaims"] = [*(spec.get("resourceClaims") or []),
                                  {"name": "extended-resources", "resourceClaimName": claim_name}]
        report = self.pods.explain(pod, [claim])
        if report is None or not report.allocatable:
            reason = report.reason if report is not None else "no pod"
            return Reason(f"{names}, but {reason}", f"the {classes} mapping finds no node for it")
        if workload.replicas is not None and only_launched(self.launched_pools, report.nodes):
            # A DaemonSet's pods go to nodes that exist, launched ones among them; the others wait for a node.
            if self.launched_pools[0].auto_mode:  # one provisioner per stack
                return Reason(f"{names}, but only nodes of the stack's EKS Auto Mode NodePools fit it, and AWS does "
                              "not document whether Auto Mode launches a node for a pod asking for an extended "
                              "resource that a DeviceClass maps, nor which plugin would serve it there",
                              f"the {classes} mapping fits only nodes Auto Mode may not launch to serve it")
            return Reason(f"{names}, but only nodes of the stack's Karpenter NodePools fit it, and Karpenter does not "
                          "take a pod asking for an extended resource for a DRA pod, even where a DeviceClass maps "
                          "the resource (kubernetes-sigs/karpenter#3231): it sizes the pod by nvidia.com/gpu, which "
                          "no device plugin registers on a DRA node, so no node it launches for the pod serves it",
                          f"the {classes} mapping fits only nodes Karpenter would not launch to serve it")
        if workload.replicas is None:
            fit = set(report.nodes)
            placement.mapped = sum(1 for _, n in nodes if n in fit)
            if placement.mapped < len(nodes):
                return Reason(f"{names}, but its pods on other nodes get no mapped device",
                              f"the {classes} mapping serves only some of its nodes")
        else:
            placement.mapped = placement.pods
        return Reason()

    def _device_plugin(self, workload: Workload, need: Mapping[str, int], placement: Placement,
                       nodes: Sequence[tuple[GroupView, str]], capacity: dict[str, GroupCapacity]) -> Reason:
        """Place the pods the mapping left on device-plugin nodes, first fit, node by node (a pod needs its GPUs on
        one node; a DaemonSet's pod, on its own node). NVIDIA's device plugin advertises whole GPUs as nvidia.com/gpu
        only: gpu-dra sets no MIG strategy and no time-slicing config (render/charts.device_plugin_values; the
        chart's migStrategy and config default to none and unshared, NVIDIA/k8s-device-plugin@v0.18.2:deployments/
        helm/nvidia-device-plugin/values.yaml), and leaves the built-in plugin of Bottlerocket groups as it is."""
        if not placement.pending:
            return Reason()
        if not capacity:
            return Reason(f"stack {self.stack.name} has no device-plugin node group", "no device-plugin group")
        other = sorted(r for r in need if r != GPU)
        if other:
            return Reason(f"the device plugin advertises only {GPU} (gpu-dra configures no MIG strategy and no "
                          f"time-slicing), not {', '.join(other)}",
                          f"the device plugin advertises no {', '.join(other)}")
        count = need[GPU]
        spec = {**workload.spec, "tolerations": [*(workload.spec.get("tolerations") or []),
                                                 *admission_tolerations(need, self.target.platform)]}
        daemon = {name for _, name in nodes} if workload.replicas is None else None
        fit = first_fit.place(placement.pending, count, spec, list(capacity.values()), daemon)
        placement.usable = [o.group.name for o in fit.outcomes if not o.refused and count <= o.group.view.gpus]
        for name, pods in fit.placed.items():
            placement.device_plugin[name] = pods
            placement.gpus[name] = pods * count
        return _device_plugin_reason(fit, count) if fit.left else Reason()

    def _phase(self, placement: Placement, need: Mapping[str, int], short: str) -> tuple[int, str]:
        resources = ", ".join(f"{r}: {n}" for r, n in need.items())
        if placement.pods and not placement.pending and placement.mapped == placement.pods:
            mapping = placement.mapping
            assert mapping is not None
            return 3, (f"Served unchanged: DeviceClass {mapping.device_class} ({mapping.origin}) maps "
                       f"{mapping.resource} and DRAExtendedResource is on in Kubernetes "
                       f"{self.target.kubernetes_version}, so its pods ({resources}) run on DRA nodes as they are.")
        if placement.pods and not placement.pending:
            groups = ", ".join(placement.device_plugin)
            later = ""
            if placement.mapping is not None and not self.effective:
                later = (f"; from Kubernetes 1.36 {placement.mapping.device_class} serves it unchanged "
                         "(DRAExtendedResource on by default)")
            return 1, (f"Runs on the device plugin ({groups}) and may stay there; rewrite it to claims before {groups} "
                       f"is removed{later}.")
        if placement.placed:
            return 2, (f"{placement.pending} of its {placement.pods} pods have nowhere to run on stack "
                       f"{self.stack.name} ({short}): rewrite it to claims.")
        return 2, f"Nowhere to run on stack {self.stack.name} ({short}): rewrite it to claims."

    def _widens(self, want: Wanted) -> str:
        """What a claim of any GPU model lets the workload onto, said where a rewrite asks for one."""
        models = sorted({v.model.removeprefix("NVIDIA ") for v in self.views if v.model and v.mode == "dra"})
        classes = [c.name for c in self.stack.config.device_classes if c.match is not None and c.match.products]
        per_model = f" or one of the stack's classes ({', '.join(classes)})" if classes else ""
        return (f"{want.device_class} admits a GPU of any model ({', '.join(models) or 'none'} on stack "
                f"{self.stack.name}'s DRA nodes) and is charged to its own quota, not a per-model class's: name the "
                f"model the workload needs (match.products){per_model} to keep it on its hardware")

    def _rewrite(self, verdict: WorkloadVerdict, need: Mapping[str, int]) -> None:
        """The team's templates for the workload's requests and the workload rewritten to them, explained."""
        workload = verdict.workload
        team = self.teams.get(workload.namespace)
        suggested = self.suggested.setdefault(workload.namespace, {})
        choices: dict[str, TemplateChoice] = {}
        # The GPUs its pods run on today (the device-plugin groups they may use, however full): a rewrite keeps them,
        # and the per-model quota that charges them. Not a DaemonSet's: its pods follow the nodes, whatever their
        # model.
        ran_on = [v.model for v in self.views if v.model and v.name in verdict.placement.usable] \
            if workload.replicas is not None else []
        for resource, count in need.items():
            want = wanted(resource, count, self.stack, ran_on)
            if want is None:
                verdict.notes.append(f"gpu-dra does not know what {resource} is: map it to a class (gpu-dra:"
                                     "legacyMappings) or write its claim template yourself")
                return
            choice = choose_template(want, team, self.stack, workload.namespace, suggested)
            if want.device_class == GPU_CLASS and not want.match:
                choice.notes.append(self._widens(want))
            if not choice.exists:
                suggested[choice.name] = choice.template
            choices[resource] = choice
        verdict.templates = list(choices.values())
        manifest = rewrite(workload, choices, self.tolerations)
        result = Rewrite(manifest, self.target.kubernetes_version)
        try:
            schema_validate(manifest, self.target.kubernetes_version, strict=True)
        except kubernetes_validate.ValidationError as error:
            result.schema_error = f"{'.'.join(str(p) for p in error.path) or '(object)'}: {error.message}"
        verdict.rewrite = result
        if sum(1 for c in workload.containers if c.role != "init" and any(c.gpus.values())) > 1:
            verdict.notes.append("more than one of its containers asked for GPUs: each now sees every device of the "
                                 "pod's claim; give each container its own claim if they must not share")
        report = self.pods.explain(manifest, [c.rendered for c in choices.values()])
        assert report is not None
        result.node, result.nodes = report.node, list(report.nodes)
        if workload.replicas is None:
            result.runs_on = [n for _, n in self.runs_on(pod_spec(manifest))]
            missing = [n for n in result.runs_on if n not in set(report.nodes)] if report.allocatable \
                else list(result.runs_on)
            result.allocatable = bool(result.runs_on) and not missing
            if not result.runs_on:
                result.reason = (f"no node of stack {self.stack.name} admits its pods (nodeSelector, node affinity, "
                                 "taints)")
            elif missing:
                why = report.reason if not report.allocatable else "its claim does not allocate there"
                result.reason = (f"{len(missing)} of the {len(result.runs_on)} nodes it runs on get nothing "
                                 f"({', '.join(missing[:3])}{', ...' if len(missing) > 3 else ''}): {why}")
        else:
            result.allocatable = report.allocatable
            result.reason = "" if report.allocatable else report.reason
        dra_models = {v.model for v in self.views if v.mode == "dra"}
        if ran_on and not result.allocatable and not set(ran_on) & dra_models:
            groups = ", ".join(verdict.placement.device_plugin)
            verdict.notes.append(
                f"no DRA node of stack {self.stack.name} has the GPUs its pods run on today "
                f"({', '.join(sorted({m.removeprefix('NVIDIA ') for m in ran_on}))}): the rewrite waits for {groups} "
                "to serve DRA (its allocationMode: dra, docs/migration.md); a template of another model would move it "
                "to other hardware, and its quota")
        if team is None and result.allocatable:
            result.allocatable = False
            result.reason = (f"no team of stack {self.stack.name} owns namespace {workload.namespace}, so its "
                             "template is not created there (the fleet itself would allocate it)")


def _device_plugin_reason(fit: first_fit.FirstFit[GroupCapacity], count: int) -> Reason:
    """Why the pods left have no device-plugin node: each group's reason, and the first in short (that the groups
    are full, if any is)."""
    reasons, shorts = [], []
    for outcome in fit.outcomes:
        group = outcome.group
        if not group.free or outcome.refused:
            reasons.append(f"{group.name}: {outcome.refused if group.free else 'it has no nodes'}")
            shorts.append("it may not use the device-plugin groups")
        elif outcome.too_small:
            reasons.append(f"{group.name}: a pod needs {count} GPUs on one node; its {group.instance_type} nodes "
                           f"have {group.gpus}")
            shorts.append(f"no device-plugin node has {count} GPUs")
        elif outcome.full:
            taken = f", {outcome.placed * count} by this one" if outcome.placed else ""
            reasons.append(f"{group.name} is full: {group.total} GPUs ({group.view.summary}), {outcome.taken} taken "
                           f"by the workloads before it{taken}")
            shorts.insert(0, "the device-plugin groups are full")
    return Reason("; ".join(reasons), shorts[0] if shorts else "")


def _pending_reason(report: PodOutcome | None, placement: Placement) -> str:
    if report is None:
        return "no pod"
    if placement.pods == 0:
        return "no node of the stack admits its pods (nodeSelector, node affinity, taints)"
    if report.allocatable and placement.pending:
        return "its claims do not allocate on some of the nodes it runs on"
    return report.reason


def _why_claims(placement: Placement, stack: str) -> str:
    if placement.pods and not placement.pending:
        return "On claims already (phase 2 done): its claims allocate on the stack's fleet."
    return f"On claims already, but its claims do not allocate on stack {stack} ({placement.reason})."


def plan(stack: Stack, workloads: Sequence[Workload], claim_objects: Sequence[Mapping[str, Any]] = (),
         without: Sequence[str] = (), cache: dict[str, PodOutcome | None] | None = None,
         rewrites: bool = True) -> Plan:
    """Every workload's verdict on the stack, in input order (earlier workloads take the device-plugin GPUs first).
    `cache`: pod outcomes of an earlier plan of the same stack and inputs, reused. `rewrites=False` where only where
    the pods run is read (the policy pack's legacy-workloads-placed, `--without`'s second plan): no templates,
    rewrites or their explanations, which placing the workloads does not depend on."""
    judged = without_groups(stack, without) if without else stack
    planner = _Planner(judged, claim_objects, cache, rewrites)
    capacity = {v.name: GroupCapacity.of(v) for v in planner.views
                if v.mode == AllocationMode.device_plugin.value}
    verdicts = [planner.verdict(w, capacity) for w in workloads]
    result = Plan(stack.name, planner.target, planner.effective, planner.mappings,
                  list(capacity.values()), verdicts, tuple(without))
    result.notes += [n for n in planner.pods.inventory.notes if "device-plugin" not in n]
    return result
