"""Is DRA healthy on a cluster: checks of what it holds (Nodes, ResourceSlices, DeviceClasses, claims and templates,
quotas, DeviceTaintRules), and, given a stack's render, whether it holds what the stack renders.

Pure: the objects come in as dicts (from a live cluster or `kubectl get -o yaml` dumps), the findings go out. Every
finding names the object it concerns (`Node ip-10-0-3-7.ec2.internal`, `DeviceClass gpu-l4`, `ResourceSlice x`).
What the scheduler does with taints, pools and gated fields is decided by the cluster's version and platform
(`Target`), through the same facts explain uses (`features_for`, `with_taint_rules`).
"""

from __future__ import annotations

import copy
import difflib
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Any

import yaml

from gpu_dra.core.analysis.allocator import PREVENTING_EFFECTS, Features, tolerates
from gpu_dra.core.analysis.explain import Explainer, TaintRuleError
from gpu_dra.core.analysis.features import features_for
from gpu_dra.core.analysis.inventory import Inventory, from_documents
from gpu_dra.core.data import mapping
from gpu_dra.core.dra.claims import ResourceClaim, classes_from_objects, parse_claim, parse_device_class
from gpu_dra.core.dra.quantity import QuantityError, parse_quantity
from gpu_dra.core.dra.slices import DeviceTaint, ResourceSlice
from gpu_dra.core.facts.hardware import INSTANCE_TYPES
from gpu_dra.core.facts.labels import ALLOCATION_LABEL, DEVICE_PLUGIN_NODE_LABEL, DRA_NODE_LABEL
from gpu_dra.core.facts.nvidia import DEVICE_PLUGIN_GPU, DRIVER_NAME
from gpu_dra.core.facts.target import Platform, Target
from gpu_dra.core.findings import ERROR, WARNING, Finding
from gpu_dra.core.render.manifests import MANAGED_BY
from gpu_dra.core.yamlsource import Located

# rule -> (severity, what it catches): the SARIF rules and `--help` read these.
RULES: dict[str, tuple[str, str]] = {
    "gpu-node-without-slices": (ERROR, "A GPU node meant for DRA publishes no gpu.nvidia.com ResourceSlice: the "
                                       "DRA driver's kubelet plugin has not registered there"),
    "kubelet-dra-regression": (WARNING, "A DRA GPU node's kubelet is 1.34.0 or 1.34.1, whose connection to DRA "
                                        "drivers deadlocks once idle (kubernetes/kubernetes#133920)"),
    "double-allocation-risk": (ERROR, "A node offers its GPUs both as nvidia.com/gpu (device plugin) and in "
                                      "gpu.nvidia.com ResourceSlices: both hand out every GPU"),
    "extended-resource-dropped": (WARNING, "A DeviceClass's extendedResourceName does nothing: DRAExtendedResource "
                                           "is off on the cluster"),
    "stale-slices": (WARNING, "A ResourceSlice names a node that does not exist"),
    "pool-generations": (WARNING, "A pool has slices of several generations: the older ones' devices are invisible"),
    "pool-incomplete": (WARNING, "A pool's newest generation has fewer slices than its resourceSliceCount"),
    "devices-tainted": (WARNING, "Devices carry a NoSchedule or NoExecute taint: claims without a toleration "
                                 "cannot get them"),
    "drift-missing": (WARNING, "An object the stack renders is not in the cluster"),
    "drift-extra": (WARNING, "An object labelled as gpu-dra's is in the cluster but not in the stack"),
    "drift-changed": (WARNING, "An object's spec in the cluster differs from the stack's render"),
}
_ORDER = {rule: index for index, rule in enumerate(RULES)}

GPU_RESOURCE = DEVICE_PLUGIN_GPU  # what NVIDIA's device plugin advertises in a node's status.allocatable
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"
# Kubelets with the DRA regression kubernetes/kubernetes#133920 ("Regression 1.34 -- Kubelet requires restart after
# gRPC connection to DRA driver goes idle"): once the kubelet's gRPC connection to a DRA driver has been idle for 30
# minutes, reconnecting deadlocks, so NodePrepareResources never reaches the driver and pods using claims hang in
# ContainerCreating (or Terminating) until the kubelet restarts. It does not unregister the driver or remove its
# slices. Fixed by https://github.com/kubernetes/kubernetes/pull/133926 ("DRA kubelet: avoid deadlock when gRPC
# connection to driver goes idle"); NVIDIA's DRA driver docs and EKS's DRA docs ask for 1.34.2 or later for it.
REGRESSED_KUBELET = re.compile(r"v?1\.34\.[01](?![0-9])")
REGRESSION = ("kubernetes/kubernetes#133920: once its gRPC connection to a DRA driver has been idle for 30 minutes "
              "the kubelet deadlocks reconnecting, and pods using claims hang in ContainerCreating or Terminating "
              "until it restarts; fixed in 1.34.2")
DRIFT_KINDS = ("DeviceClass", "ResourceClaimTemplate", "ResourceQuota")
SHOWN = 5  # names listed in a message before "and N more"
DIFF_LINES = 40  # lines of a drift diff shown


@dataclass
class Diagnosis:
    findings: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what was not judged, and why

    @property
    def errors(self) -> int:
        return sum(1 for f in self.findings if f.severity == ERROR)


def diagnose(sources: Sequence[tuple[str, Sequence[Mapping[str, Any]]]], target: Target,
             complete: Collection[str] = (), rendered: Sequence[Mapping[str, Any]] | None = None,
             stack: str = "") -> Diagnosis:
    """Every check on the objects of `sources` ((name, objects) per file or "cluster"). `complete`: the kinds the
    sources hold all of (what a cluster listed; a dump's kinds): checks that conclude from an absence (a node without
    slices, a slice without its node, an object missing from the cluster) run only on those. `rendered`: the
    objects `stack` renders, for drift. Raises inventory.InventoryError on a ResourceSlice or DeviceTaintRule that
    has not the API's shape."""
    inventory = Inventory()
    objects: list[Mapping[str, Any]] = []
    for name, found in sources:
        read = from_documents(name, [Located(obj, {}) for obj in found])
        inventory.slices += read.slices
        inventory.devices += read.devices
        inventory.taint_rules += read.taint_rules
        objects += [obj for obj in found if isinstance(obj, Mapping)]
    diagnosis = Diagnosis()
    judged = replace(target, feature_gates=gate_evidence(objects, target))
    features = features_for(judged)
    has_nodes, has_slices = "Node" in complete, "ResourceSlice" in complete
    nodes = [node for obj in objects if (node := _node(obj)) is not None]
    if has_nodes and has_slices:
        diagnosis.findings += node_findings(nodes, inventory.slices)
    elif nodes:
        diagnosis.notes.append("the inputs hold no ResourceSlices (`kubectl get resourceslices -o yaml`): which "
                               "GPU nodes publish none was not judged")
    if has_nodes:
        diagnosis.findings += stale_slices(inventory.slices, {node.name for node in nodes})
    diagnosis.findings += pool_findings(inventory.slices, target)
    diagnosis.findings += extended_resource_findings(objects, rendered, judged)
    diagnosis.findings += taint_findings(inventory, objects, features, judged, diagnosis.notes)
    if rendered is not None:
        gate_on = judged.enabled("DRAExtendedResource")
        diagnosis.findings += drift_findings(objects, rendered, complete, gate_on, stack, diagnosis.notes)
    diagnosis.findings.sort(key=lambda f: (f.severity != ERROR, _ORDER.get(f.rule, len(_ORDER)), f.object))
    return diagnosis


# --------------------------------------------------------------------------------------------- gates


def _stored(obj: Mapping[str, Any]) -> bool:
    """Whether the object went through an API server (which sets uid and resourceVersion): a manifest did not."""
    meta = mapping(obj.get("metadata"))
    return bool(meta.get("uid") or meta.get("resourceVersion"))


def gate_evidence(objects: Iterable[Mapping[str, Any]], target: Target) -> dict[str, bool]:
    """The gates the scheduler is judged with beyond the version's defaults: the declared ones and, on an existing
    cluster, what its API server shows it runs.

    EKS runs the upstream defaults and no alpha gate (gates.py), so there the version decides and a stored object
    carrying a gated field cannot change that. An existing cluster runs whatever gates it was started with: the
    API server drops a gated field on write when its gate is off (DeviceClass spec.extendedResourceName under
    DRAExtendedResource, device taints under DRADeviceTaints, and it serves DeviceTaintRules only with their gate),
    so a stored object carrying one shows the gate on there, and the control plane's components are taken to share
    their gates (as kubeadm's `featureGates` sets them). Declared gates (the stack's `featureGates`) win over this
    evidence: they say what the scheduler runs, which no object shows."""
    if target.platform is not Platform.existing:
        return dict(target.feature_gates)
    seen: dict[str, bool] = {}
    for obj in objects:
        if not _stored(obj):
            continue
        kind, spec = obj.get("kind"), mapping(obj.get("spec"))
        if kind == "DeviceClass" and spec.get("extendedResourceName"):
            seen["DRAExtendedResource"] = True
        elif kind == "ResourceSlice" and any(
                (mapping(d).get("taints") or mapping(mapping(d).get("basic")).get("taints"))
                for d in _list(spec.get("devices"))):
            seen["DRADeviceTaints"] = True
        elif kind == "DeviceTaintRule":
            seen[target.taint_rule_gate] = True
    return {**seen, **target.feature_gates}


# --------------------------------------------------------------------------------------------- nodes


@dataclass(frozen=True)
class _Node:
    name: str
    labels: Mapping[str, str]
    plugin_gpus: int  # status.allocatable nvidia.com/gpu: what NVIDIA's device plugin offers
    kubelet: str  # status.nodeInfo.kubeletVersion


def _node(obj: Mapping[str, Any]) -> _Node | None:
    if obj.get("kind") != "Node":
        return None
    meta, status = mapping(obj.get("metadata")), mapping(obj.get("status"))
    labels = {str(k): str(v) for k, v in mapping(meta.get("labels")).items()}
    allocatable = mapping(status.get("allocatable")).get(GPU_RESOURCE)
    try:  # parse_quantity refuses what no int64 holds (1e999999)
        gpus = int(parse_quantity(str(allocatable))) if allocatable is not None else 0
    except QuantityError:
        gpus = 0
    return _Node(str(meta.get("name", "")), labels, gpus,
                 str(mapping(status.get("nodeInfo")).get("kubeletVersion") or ""))


def _gpu_reason(node: _Node, by_label: bool) -> str | None:
    """Why the node is a DRA GPU node, or None. With some node labelled gpu-dra.io/allocation=dra, those nodes are
    (gpu-dra labels every DRA node so, render/nodes.py); else any node with NVIDIA GPUs that no device plugin
    serves."""
    if by_label:
        return f"labelled {ALLOCATION_LABEL}=dra" if node.labels.get(ALLOCATION_LABEL) == "dra" else None
    if node.labels.get(DEVICE_PLUGIN_NODE_LABEL[0]) == DEVICE_PLUGIN_NODE_LABEL[1] or node.plugin_gpus > 0:
        return None
    if node.labels.get(DRA_NODE_LABEL[0]) == DRA_NODE_LABEL[1]:
        return f"has NVIDIA GPUs (label {DRA_NODE_LABEL[0]}={DRA_NODE_LABEL[1]})"
    instance_type = node.labels.get(INSTANCE_TYPE_LABEL, "")
    if instance_type in INSTANCE_TYPES:
        hardware = INSTANCE_TYPES[instance_type]
        return f"has NVIDIA GPUs ({instance_type}: {hardware.gpus} x {hardware.gpu.product_name})"
    return None


def _slice_nodes(slice_: ResourceSlice) -> set[str]:
    """The nodes a slice names: spec.nodeName, or each device's nodeName (perDeviceNodeSelection)."""
    if slice_.node_selection is not None:
        return {slice_.node_selection.node_name} if slice_.node_selection.node_name else set()
    return {d.node_selection.node_name for d in slice_.devices
            if d.node_selection is not None and d.node_selection.node_name}


def silent_gpu_nodes(nodes: Sequence[_Node], slices: Sequence[ResourceSlice]) -> dict[str, str]:
    """The DRA GPU nodes (_gpu_reason) that publish no ResourceSlice of NVIDIA's driver: name -> why it is one."""
    publishing = {name for slice_ in slices if slice_.driver == DRIVER_NAME for name in _slice_nodes(slice_)}
    by_label = any(node.labels.get(ALLOCATION_LABEL) == "dra" for node in nodes)
    return {node.name: reason for node in nodes
            if (reason := _gpu_reason(node, by_label)) is not None and node.name not in publishing}


def silent_gpu_node_notes(objects: Iterable[Mapping[str, Any]], slices: Sequence[ResourceSlice]) -> list[str]:
    """silent_gpu_nodes of these Nodes as notes, for the verbs that show the devices but judge no node (inventory,
    explain); doctor reports each as a gpu-node-without-slices finding."""
    nodes = [node for obj in objects if (node := _node(obj)) is not None]
    return [f"node {name} {reason}, but publishes no ResourceSlice of driver {DRIVER_NAME}: is the DRA kubelet "
            "plugin running there?" for name, reason in sorted(silent_gpu_nodes(nodes, slices).items())]


def _newest(slices: Iterable[ResourceSlice]) -> dict[tuple[str, str], int]:
    """(driver, pool) -> the pool's newest generation: the only one the scheduler reads."""
    newest: dict[tuple[str, str], int] = {}
    for slice_ in slices:
        key = (slice_.driver, slice_.pool.name)
        newest[key] = max(newest.get(key, slice_.pool.generation), slice_.pool.generation)
    return newest


def node_findings(nodes: Sequence[_Node], slices: Sequence[ResourceSlice]) -> list[Finding]:
    """gpu-node-without-slices, kubelet-dra-regression and double-allocation-risk, per node."""
    newest = _newest(slices)
    published: dict[str, int] = {}  # node -> gpu.nvidia.com devices it offers (newest generations)
    silent = silent_gpu_nodes(nodes, slices)
    for slice_ in slices:
        if slice_.driver != DRIVER_NAME:
            continue
        for name in _slice_nodes(slice_):
            if slice_.pool.generation == newest[(slice_.driver, slice_.pool.name)]:
                published[name] = published.get(name, 0) + sum(
                    1 for d in slice_.devices if d.node_selection is None or d.node_selection.node_name == name)
    by_label = any(node.labels.get(ALLOCATION_LABEL) == "dra" for node in nodes)
    findings = []
    for node in sorted(nodes, key=lambda n: n.name):
        where = f"Node {node.name}"
        regressed = bool(REGRESSED_KUBELET.match(node.kubelet))
        reason = _gpu_reason(node, by_label)
        if reason is not None and node.name in silent:
            kubelet = (f" Its kubelet {node.kubelet} has a known DRA regression, {REGRESSION}." if regressed else "")
            fix = (f"see why the DRA driver's kubelet plugin is not serving the node: `kubectl get pods -A -o wide "
                   f"--field-selector spec.nodeName={node.name}` and that pod's logs")
            if regressed:
                fix += "; restart the node's kubelet, and replace the node with one on kubelet 1.34.2 or later"
            findings.append(Finding("gpu-node-without-slices", ERROR,
                                    f"{reason}, but publishes no ResourceSlice of driver {DRIVER_NAME}: the DRA "
                                    f"driver's kubelet plugin has not registered there, so none of its GPUs can be "
                                    f"allocated.{kubelet}", fix, object=where))
        elif reason is not None and regressed:
            findings.append(Finding("kubelet-dra-regression", WARNING,
                                    f"{reason}, and its kubelet {node.kubelet} has the DRA regression {REGRESSION}",
                                    "replace the node with one on kubelet 1.34.2 or later (an EKS AMI release of "
                                    "1.34.2+); meanwhile restart its kubelet when pods hang", object=where))
        offered = published.get(node.name, 0)
        if node.plugin_gpus > 0 and offered > 0:
            findings.append(Finding(
                "double-allocation-risk", ERROR,
                f"NVIDIA's device plugin offers {node.plugin_gpus} {GPU_RESOURCE} (status.allocatable) and the DRA "
                f"driver {offered} device(s) in {DRIVER_NAME} ResourceSlices on this node: each hands out every GPU "
                "without knowing of the other, so a pod requesting nvidia.com/gpu and a claim can get the same GPU",
                f"serve the node by one plugin only: label it {ALLOCATION_LABEL}=dra and keep NVIDIA's device plugin "
                f"off it (gpu-dra's device-plugin DaemonSet selects {ALLOCATION_LABEL}=device-plugin), or keep the "
                "DRA kubelet plugin off a device-plugin node", object=where))
    return findings


def stale_slices(slices: Sequence[ResourceSlice], nodes: Collection[str]) -> list[Finding]:
    """Slices naming a node the cluster does not have: the scheduler offers their devices nowhere. A slice owned by
    its Node is garbage-collected with it; these were left behind."""
    findings = []
    for slice_ in sorted(slices, key=lambda s: s.name):
        gone = sorted(_slice_nodes(slice_) - set(nodes))
        if gone:
            findings.append(Finding(
                "stale-slices", WARNING,
                f"names node {_names(gone)}, which does not exist: its {len(slice_.devices)} device(s) of driver "
                f"{slice_.driver} (pool {slice_.pool.name}) are offered nowhere",
                f"delete it (`kubectl delete resourceslice {slice_.name}`) once no driver on a node of that name "
                "will come back; a driver publishing for a node should set the Node as the slice's owner, so that "
                "it goes with the node", object=f"ResourceSlice {slice_.name}"))
    return findings


# --------------------------------------------------------------------------------------------- pools


def pool_findings(slices: Sequence[ResourceSlice], target: Target) -> list[Finding]:
    """Per pool (driver and pool name), as the scheduler gathers them (`GatherPools` in
    kubernetes/dynamic-resource-allocation@v0.34.9 and @v0.35.0 structured/internal/stable/pools_stable.go): only
    the newest generation's slices count, older ones are "out-dated" and skipped; the pool is incomplete when that
    generation has not resourceSliceCount slices (structured/pools.go until v0.33; split per allocator from
    v0.34). What an incomplete pool costs depends on the version's allocator (structured/internal/{stable,
    incubating,experimental}/allocator_*.go): at v0.34.x a request for all devices fails on it ("currently being
    updated") and other requests still take its devices; from v0.35.0 no request takes devices from an incomplete
    pool ("We don't allocate devices from invalid or incomplete pools")."""
    pools: dict[tuple[str, str], list[ResourceSlice]] = {}
    for slice_ in slices:
        pools.setdefault((slice_.driver, slice_.pool.name), []).append(slice_)
    findings = []
    for (driver, name), members in sorted(pools.items()):
        newest = max(s.pool.generation for s in members)
        current = [s for s in members if s.pool.generation == newest]
        outdated = sorted((s for s in members if s.pool.generation < newest), key=lambda s: s.name)
        pool = f"pool {driver}/{name}"
        if outdated:
            generations = ", ".join(str(g) for g in sorted({s.pool.generation for s in outdated}))
            devices = sum(len(s.devices) for s in outdated)
            findings.append(Finding(
                "pool-generations", WARNING,
                f"{pool} has slices of generation {newest} and older ({generations}): the scheduler reads only "
                f"generation {newest}'s {len(current)} slice(s), so the {devices} device(s) of "
                f"{len(outdated)} older slice(s) ({_names([s.name for s in outdated])}) are invisible to it",
                "the driver replaces a pool's slices by publishing a new generation and then deletes the old ones: "
                "if they stay, restart the driver's kubelet plugin on the node (it republishes the pool), or "
                "delete the outdated slices", object=f"ResourceSlice {outdated[0].name}"))
        expected = current[0].pool.slice_count
        if len(current) != expected:
            if _minor(target.kubernetes_version) >= (1, 35):
                cost = ("the scheduler of Kubernetes 1.35 and later takes none of its devices while it is incomplete, "
                        "and fails requests for all devices")
            else:
                cost = ("the scheduler of Kubernetes 1.34 fails requests for all devices (allocationMode All) while "
                        "it is incomplete (\"currently being updated\"); other requests still take its devices")
            findings.append(Finding(
                "pool-incomplete", WARNING,
                f"{pool} has {len(current)} of its {expected} slice(s) (resourceSliceCount) at generation "
                f"{newest}: {cost}",
                "a pool is incomplete while its driver publishes it; if it stays so, the driver lost slices or "
                "counts them wrong: restart its kubelet plugin on the node", object=f"ResourceSlice {current[0].name}"))
    return findings


def _minor(version: str) -> tuple[int, int]:
    major, _, minor = version.partition(".")
    return int(major), int(minor)


# --------------------------------------------------------------------------------------------- extended resources


def extended_resource_findings(objects: Sequence[Mapping[str, Any]], rendered: Sequence[Mapping[str, Any]] | None,
                               target: Target) -> list[Finding]:
    """Where DRAExtendedResource is off (EKS 1.34 and 1.35: alpha, off; on from 1.36, gates.py), the API server
    drops `spec.extendedResourceName` on write and no scheduler serves an extended resource from a class. A class
    in the inputs carrying the field there does nothing (on a live EKS cluster none can: this catches dumps and
    manifests); a class the stack renders with the field whose cluster class has none lost it on apply. On an
    existing cluster whose API server kept the field, the gate is on (see gate_evidence): nothing to report."""
    if target.enabled("DRAExtendedResource"):
        return []
    off = f"DRAExtendedResource is off on {target.label}"
    fix = ("keep the class without it until the cluster runs Kubernetes 1.36 (the gate is on from there); meanwhile "
           "pods must ask for the devices through a ResourceClaim")
    classes = {c.name: c for obj in objects if (c := parse_device_class(obj)) is not None}
    findings = []
    for name, device_class in sorted(classes.items()):
        if device_class.extended_resource_name:
            findings.append(Finding(
                "extended-resource-dropped", WARNING,
                f"maps extended resource {device_class.extended_resource_name}, but {off}: the API server drops "
                f"spec.extendedResourceName on write and the scheduler serves no "
                f"{device_class.extended_resource_name} request from the class", fix, object=f"DeviceClass {name}"))
    for obj in rendered or ():
        wanted = parse_device_class(obj)
        if wanted is None or not wanted.extended_resource_name:
            continue
        have = classes.get(wanted.name)
        if have is not None and not have.extended_resource_name:
            findings.append(Finding(
                "extended-resource-dropped", WARNING,
                f"the stack maps extended resource {wanted.extended_resource_name} to this class (legacyMappings), "
                f"but the cluster's class has no spec.extendedResourceName: the API server dropped it, as {off}; "
                f"pods requesting {wanted.extended_resource_name} stay Pending",
                "remove the legacyMappings entry until the cluster runs Kubernetes 1.36, or move the pods to "
                "ResourceClaims", object=f"DeviceClass {wanted.name}"))
    return findings


# --------------------------------------------------------------------------------------------- taints


def taint_findings(inventory: Inventory, objects: Sequence[Mapping[str, Any]], features: Features, target: Target,
                   notes: list[str]) -> list[Finding]:
    """Devices with a taint that keeps claims off them (NoSchedule, NoExecute), per node and taint, as the
    scheduler sees them: the slices' own taints and, where the version's scheduler applies DeviceTaintRules, theirs
    (explain's `with_taint_rules`, one fact). With DRADeviceTaints off the scheduler ignores device taints."""
    explainer = Explainer(classes_from_objects(objects), features=features)
    try:
        tainted = explainer.with_taint_rules(inventory)
        seen, rules_applied = tainted.inventory, tainted.applied
        notes += tainted.notes
    except TaintRuleError as error:
        notes.append(f"{error}; its taint is not counted")
        seen, rules_applied = inventory, False
    if inventory.taint_rules and not rules_applied:
        notes.append(f"{len(inventory.taint_rules)} DeviceTaintRule(s) read; {target.taint_rule_gate} is "
                     f"off on {target.label}, so the scheduler applies none")
    if not features.device_taints:
        if any(d.taints for s in seen.slices for d in s.devices):
            notes.append(f"devices carry taints, but DRADeviceTaints is off on {target.label}: the scheduler "
                         "ignores them")
        return []
    claims = [claim for obj in objects if (claim := parse_claim(obj)) is not None]
    groups: dict[tuple[str, DeviceTaint, str], list[str]] = {}
    newest = _newest(seen.slices)
    for slice_ in seen.slices:
        if slice_.pool.generation != newest[(slice_.driver, slice_.pool.name)]:
            continue  # outdated: the scheduler does not read it (pool-generations says so)
        for device in slice_.devices:
            for taint in device.taints:
                if taint.effect not in PREVENTING_EFFECTS:
                    continue
                nodes = _slice_nodes(slice_)
                where = f"Node {min(nodes)}" if len(nodes) == 1 else f"ResourceSlice {slice_.name}"
                groups.setdefault((where, taint, taint.rule), []).append(f"{slice_.driver}/{device.name}")
    findings = []
    for (where, taint, rule), devices in sorted(groups.items(), key=lambda item: (item[0][0], item[0][1].label)):
        origin = f" (from DeviceTaintRule {rule})" if rule else ""
        effect = ("NoExecute also evicts the pods using them" if taint.effect == "NoExecute"
                  else "pods already using them keep them")
        tolerating = _tolerating(claims, taint)
        holders = (f"tolerated by {_names(tolerating)}" if tolerating
                   else "no ResourceClaim or ResourceClaimTemplate tolerates it")
        findings.append(Finding(
            "devices-tainted", WARNING,
            f"{len(devices)} device(s) tainted {taint.label}{origin}: {_names(devices)}; no claim without a "
            f"matching toleration gets them ({effect}); {holders}",
            "remove the taint once the devices are fit (`kubectl delete devicetaintrule " + rule + "`)" if rule
            else "the driver sets the slice's taints: see why it marks the devices (its kubelet plugin's logs); "
                 "claims that may use them anyway need a toleration in the request", object=where))
    return findings


def _tolerating(claims: Sequence[ResourceClaim], taint: DeviceTaint) -> list[str]:
    return sorted(f"{claim.kind} {claim.name}" for claim in claims
                  if any(tolerates(toleration, taint) for request in claim.requests for choice in request.choices
                         for toleration in choice.tolerations))


# --------------------------------------------------------------------------------------------- drift


def _key(obj: Mapping[str, Any]) -> tuple[str, str] | None:
    kind = obj.get("kind")
    if kind not in DRIFT_KINDS:
        return None
    meta = mapping(obj.get("metadata"))
    name = f"{meta['namespace']}/{meta.get('name')}" if meta.get("namespace") else str(meta.get("name"))
    return str(kind), name


def drift_findings(objects: Sequence[Mapping[str, Any]], rendered: Sequence[Mapping[str, Any]],
                   complete: Collection[str], extended_resources: bool, stack: str, notes: list[str]) -> list[Finding]:
    """The cluster's DeviceClasses, ResourceClaimTemplates and ResourceQuotas against the stack's render: missing,
    extra (labelled app.kubernetes.io/managed-by=gpu-dra, as the render labels its objects) and changed specs.
    Specs are compared as the API server stores them (`normalised`), so a freshly applied stack shows no drift. A
    class's extendedResourceName the API server dropped (`extended_resources` off) is extended-resource-dropped's."""
    apply = f"`pulumi up --stack {stack}`" if stack else "`pulumi up`"
    wanted = {key: obj for obj in rendered if (key := _key(obj)) is not None}
    have = {key: obj for obj in objects if (key := _key(obj)) is not None}
    findings = []
    for kind in DRIFT_KINDS:
        if kind not in complete:
            if any(k == kind for k, _ in wanted):
                notes.append(f"the inputs hold no {kind} objects: drift of the stack's {kind} objects not judged")
            continue
        for (k, name), obj in sorted(wanted.items()):
            if k != kind:
                continue
            where = f"{kind} {name}"
            if (kind, name) not in have:
                findings.append(Finding("drift-missing", WARNING, f"the stack {stack} renders it; the cluster has "
                                        "none", f"apply the stack ({apply})", object=where))
                continue
            ours, theirs = normalised(obj), normalised(have[(kind, name)])
            if kind == "DeviceClass" and not extended_resources and "extendedResourceName" not in theirs:
                ours.pop("extendedResourceName", None)
            if ours != theirs:
                findings.append(Finding("drift-changed", WARNING,
                                        f"its spec differs from the stack {stack}'s render:\n{spec_diff(theirs, ours)}",
                                        f"apply the stack ({apply}) or change the stack to match"
                                        + (" (a template's spec is immutable: applying replaces it)"
                                           if kind == "ResourceClaimTemplate" else ""), object=where))
        for (k, name), obj in sorted(have.items()):
            labels = mapping(mapping(obj.get("metadata")).get("labels"))
            if k == kind and (k, name) not in wanted and all(labels.get(a) == b for a, b in MANAGED_BY.items()):
                findings.append(Finding("drift-extra", WARNING,
                                        f"labelled {_label(MANAGED_BY)} but not rendered by the stack {stack}",
                                        "delete it if nothing uses it any more (the stack no longer declares it), or "
                                        "declare it in the stack again", object=f"{kind} {name}"))
    return findings


def normalised(obj: Mapping[str, Any]) -> dict[str, Any]:
    """An object's spec as the API server stores it, so that a render and what the server returns for it compare
    equal: the defaults of kubernetes/api@v0.35.0 resource/v1/types.go applied (ExactDeviceRequest and
    DeviceSubRequest: allocationMode ExactCount, then count 1; DeviceToleration: operator Equal, `+default="Equal"`),
    quantities in one form (the server writes them canonically: 1000m is 1), and empty and null fields dropped: the
    server omits empty ones (`omitempty`) but writes a template's spec.metadata as `{creationTimestamp: null}`."""
    spec = copy.deepcopy(dict(mapping(obj.get("spec"))))
    kind = obj.get("kind")
    if kind == "ResourceClaimTemplate":
        devices = mapping(mapping(spec.get("spec")).get("devices"))
        for request in _list(devices.get("requests")):
            request = mapping(request)
            for choice in [mapping(request.get("exactly")), *map(mapping, _list(request.get("firstAvailable")))]:
                _default_choice(choice)
    elif kind == "ResourceQuota":
        hard = spec.get("hard")
        if isinstance(hard, dict):
            spec["hard"] = {k: _quantity(v) for k, v in hard.items()}
    pruned = _pruned(spec)
    return pruned if isinstance(pruned, dict) else {}


def _default_choice(choice: Mapping[str, Any]) -> None:
    if not isinstance(choice, dict) or not choice:
        return
    choice.setdefault("allocationMode", "ExactCount")
    if choice["allocationMode"] == "ExactCount":
        choice.setdefault("count", 1)
    for toleration in _list(choice.get("tolerations")):
        if isinstance(toleration, dict):
            toleration.setdefault("operator", "Equal")
    capacity = choice.get("capacity")
    if isinstance(capacity, dict) and isinstance(capacity.get("requests"), dict):
        capacity["requests"] = {k: _quantity(v) for k, v in capacity["requests"].items()}


def _quantity(value: Any) -> Any:
    """A quantity's value in one form (`64`, `1.5`), or the value as it is when it is none."""
    try:
        number = parse_quantity(str(value))
    except QuantityError:
        return value
    return str(int(number)) if number == number.to_integral_value() else str(number.normalize())


def _pruned(value: Any) -> Any:
    """Without None, empty mappings and empty lists, at every level of mappings."""
    if isinstance(value, Mapping):
        out = {k: _pruned(v) for k, v in value.items()}
        return {k: v for k, v in out.items() if v is not None and v != {} and v != []}
    if isinstance(value, list):
        return [_pruned(v) for v in value]
    return value


def spec_diff(cluster: Mapping[str, Any], stack: Mapping[str, Any]) -> str:
    """A unified diff of two specs as YAML, as `kubectl diff` shows one (`--- cluster`, `+++ stack`), cut at
    DIFF_LINES lines."""
    def lines(spec: Mapping[str, Any]) -> list[str]:
        return yaml.safe_dump({"spec": _plain(spec)}, sort_keys=True, width=100).splitlines()

    diff = list(difflib.unified_diff(lines(cluster), lines(stack), "cluster", "stack", n=2, lineterm=""))
    if len(diff) > DIFF_LINES:
        diff = [*diff[:DIFF_LINES], f"... ({len(diff) - DIFF_LINES} more lines)"]
    return "\n".join(diff)


def _plain(value: Any) -> Any:
    """Plain dicts, lists and scalars for yaml.safe_dump (Decimal quantities as text)."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, Decimal):
        return str(value)
    return value


# --------------------------------------------------------------------------------------------- helpers


def _names(names: Sequence[str]) -> str:
    shown = ", ".join(names[:SHOWN])
    return shown + (f" and {len(names) - SHOWN} more" if len(names) > SHOWN else "")


def _label(labels: Mapping[str, str]) -> str:
    return ", ".join(f"{k}={v}" for k, v in labels.items())


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []
