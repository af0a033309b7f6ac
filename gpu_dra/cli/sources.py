"""What explain, inventory and doctor judge, and where it came from: files, the live cluster (`--cluster`) and the
stack (`--stack`). The stack models (pydantic) are loaded only when a stack is read, the kubernetes client only when
the cluster is: reading a dump needs neither."""

from __future__ import annotations

import argparse
from typing import Any

import kubernetes_validate

from gpu_dra.cli.cluster import ClusterState
from gpu_dra.cli.inputs import read_inputs
from gpu_dra.cli.live import read_live_cluster
from gpu_dra.cli.process import UsageError
from gpu_dra.cli.text import cut
from gpu_dra.core.analysis import inventory as inv
from gpu_dra.core.analysis.inventory import InventoryError
from gpu_dra.core.analysis.pods import ClusterNode
from gpu_dra.core.dra import k8s_schema
from gpu_dra.core.yamlsource import Located


def gather(args: argparse.Namespace, cluster: ClusterState | None = None, with_stack: bool = True,
           files: dict[int, str] | None = None) -> tuple[inv.Inventory, list[dict[str, Any]], str]:
    """Inventory (devices, every typed slice read and the DeviceTaintRules), the other Kubernetes objects (classes,
    claims, pods and workloads, nodes) and a description of where they came from. `cluster`: what was read from
    the live cluster already, else it is read here with `--cluster`. `with_stack`: add the stack's classes and
    templates (not where the cluster's own are explained). `files`: filled with the input each object was read from
    (the object's id -> the file, `<stdin>` or `cluster`; the stack's are not in it), for a verb that tells objects
    of one name apart."""
    sources: list[tuple[str, list[Located]]] = read_inputs(args.paths, lines=False, args=args)
    origins = list(args.paths)
    if args.cluster:
        cluster = cluster or read_live_cluster(args)
        sources.append(("cluster", [Located(obj, {}) for obj in cluster.objects]))
        origins.append(f"cluster (context {cut(args.context)})" if args.context else "cluster")
    objects: list[dict[str, Any]] = []
    devices = inv.Inventory()
    for index, (name, documents) in enumerate(sources):
        try:
            found = inv.from_documents(name, documents)
        except InventoryError as error:
            raise UsageError(str(error)) from None
        if cluster is not None and args.cluster and index == len(sources) - 1:
            # the cluster's GPU nodes without slices, as doctor judges (doctor loads the stack models: only here)
            from gpu_dra.core.analysis.doctor import silent_gpu_node_notes

            devices.notes = silent_gpu_node_notes(cluster.of("Node"), found.slices) + cluster.notes
        devices.devices.extend(found.devices)
        devices.slices.extend(found.slices)  # those without devices too: they count in their pool
        devices.taint_rules.extend(found.taint_rules)
        mine = [obj for document in documents for obj in inv.objects_in_document(document.data)
                if obj.get("kind") not in ("ResourceSlice", "DeviceTaintRule")]
        validate_objects(mine, name)
        if files is not None:
            files.update((id(obj), name) for obj in mine)
        objects += mine
    origin = ", ".join(origins)
    if args.stack and with_stack:
        devices, origin = _with_stack(args, devices, objects, origin)
    if not devices.devices:
        raise UsageError(_no_devices([name for name, _ in sources], devices, objects))
    return devices, objects, origin


def _no_devices(names: list[str], devices: inv.Inventory, objects: list[dict[str, Any]]) -> str:
    """What the inputs lack to have devices (no ResourceSlice at all, or only slices that list none), and how to get
    them."""
    where = f" in {', '.join(cut(name) for name in names)}" if names else ""
    nodes = sum(1 for obj in objects if obj.get("kind") == "Node")
    if devices.slices:
        drivers = ", ".join(sorted({slice_.driver for slice_ in devices.slices}))
        what = (f"their {len(devices.slices)} ResourceSlice(s) (driver {drivers}) list no device: slices of "
                "shared counters only, or a driver whose kubelet plugin found nothing to publish")
    else:
        what = (f"they hold {nodes} Node(s) but no ResourceSlice (a DRA driver publishes a node's devices in "
                "ResourceSlices, not on the Node)" if nodes else "they hold no ResourceSlice")
    return (f"no devices{where}: {what}; give every driver's ResourceSlices (kubectl get resourceslices -o yaml > "
            "slices.yaml), --cluster, or --stack to synthesize the stack's fleet")


def _with_stack(args: argparse.Namespace, devices: inv.Inventory, objects: list[dict[str, Any]],
                origin: str) -> tuple[inv.Inventory, str]:
    """The stack's classes and templates added to `objects`; without devices, the stack's fleet synthesized."""
    from gpu_dra.cli.project import chosen_stack  # the stack models (pydantic) only when a stack is read
    from gpu_dra.core.analysis.stack_nodes import cluster_nodes, group_views
    from gpu_dra.core.render import manifests

    stack = chosen_stack(args)
    objects += manifests.dra_objects(stack)
    if devices.devices:
        return devices, origin
    rules = devices.taint_rules
    devices = inv.synthesize(stack.config)
    devices.taint_rules = rules  # the files' rules apply to the synthesized fleet as to any other
    if not any(obj.get("kind") == "Node" for obj in objects):  # the inputs' own Nodes stand for the fleet's
        objects += [_node_object(node) for node in cluster_nodes(group_views(stack))]
    if stack.config.auto_mode is not None:
        return devices, f"stack {args.stack}'s EKS Auto Mode NodePools at their node limits (synthesized)"
    launched = " and Karpenter NodePools at their node limits" if devices.launched_pools else ""
    return devices, f"stack {args.stack}'s GPU node groups at max size{launched} (synthesized)"


def _node_object(node: ClusterNode) -> dict[str, Any]:
    """A synthesized node as a Node object: what a pod's node selection and tolerations are judged against."""
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": node.node.name, "labels": dict(node.node.labels)},
            "spec": {"taints": [dict(taint) for taint in node.taints]}}


def validate_objects(objects: list[dict[str, Any]], source: str) -> None:
    """Claims and classes given to explain must have the API's shape; say which one does not, and where."""
    for obj in objects:
        if obj.get("kind") not in ("DeviceClass", "ResourceClaim", "ResourceClaimTemplate"):
            continue
        try:
            k8s_schema.validate(obj, "1.36", strict=False)
        except kubernetes_validate.ValidationError as error:
            meta: dict[str, Any] = obj["metadata"] if isinstance(obj.get("metadata"), dict) else {}
            location = ".".join(str(p) for p in error.path) or "(object)"
            raise UsageError(f"{cut(source)}: {obj.get('kind')} {cut(str(meta.get('name', '?')), 80)}: {location}: "
                             f"{cut(error.message)} (`gpu-dra lint` shows every problem)") from None
        except (kubernetes_validate.SchemaNotFoundError, kubernetes_validate.InvalidSchemaError) as error:
            raise UsageError(f"{cut(source)}: {obj.get('kind')}: {cut(str(error))}") from None
