"""What devices a cluster has: from ResourceSlice dumps, or synthesized from a stack's GPU node groups.

ResourceSlices are read in the v1 shape and the older v1beta1 (`devices[].basic`) and v1beta2 shapes
(kubernetes/api@v0.34.0 resource/v1, v1beta1 and v1beta2 types.go; docs/sources.md#kubernetes-dra-api), with every
kind of node selection (nodeName, allNodes, nodeSelector, per device). Each device keeps its typed slice, which the
faithful allocator reads (pools, counters, taints, node selection). DeviceTaintRules read with the slices are kept
beside them, typed, for explain to apply where the scheduler would. A synthesized fleet puts every DRA node group
at its max size with the attributes NVIDIA's driver publishes on that instance type
(`gpu_dra.core.facts.hardware`, each row sourced).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from gpu_dra.core.dra.cel import attributes_convert
from gpu_dra.core.dra.objects import ObjectError
from gpu_dra.core.dra.slices import NodeSelection, ResourcePool, ResourceSlice, SliceDevice, parse_slice
from gpu_dra.core.dra.taint_rules import DeviceTaintRule, parse_taint_rule
from gpu_dra.core.facts.hardware import GPU_MODELS, INSTANCE_TYPES, InstanceType
from gpu_dra.core.facts.nvidia import DRIVER_NAME, STANDARD_DOMAIN, published_attributes
from gpu_dra.core.yamlsource import Located

if TYPE_CHECKING:
    from gpu_dra.core.config.models import NodePool, StackConfig

ALL_NODES = "*"  # a device reachable from every node (spec.allNodes)
SELECTED_NODES = "(nodeSelector)"  # a device reachable from the nodes a NodeSelector selects (network-attached)
SHARED = (ALL_NODES, SELECTED_NODES)  # `Device.node` values that name no node


# Whether attributes convert to their CEL types, by the attributes that can fail (Device.unreadable).
_CONVERTS: dict[tuple[Any, ...], bool] = {}


@dataclass(frozen=True)
class Device:
    node: str
    driver: str
    pool: str
    name: str
    attributes: Mapping[str, Mapping[str, Any]]
    capacity: Mapping[str, str]
    source: str = ""
    allow_multiple_allocations: bool = False
    # The typed slice the device was read from (None for a Device built by hand: explain then assumes a slice of
    # its own node and pool). Not part of equality.
    slice: ResourceSlice | None = field(default=None, compare=False, repr=False)
    # Whether every attribute converts to its CEL type, where the slice's reader judged it (SliceDevice's); None:
    # judged when asked (`unreadable`).
    convertible: bool | None = field(default=None, compare=False, repr=False)

    @property
    def shape(self) -> tuple[Any, ...]:
        """What selectors can see: equal shapes give equal results, so each is evaluated once."""
        return (self.driver, tuple(sorted((k, tuple(sorted(v.items()))) for k, v in self.attributes.items())),
                tuple(sorted(self.capacity.items())), self.allow_multiple_allocations)

    @cached_property
    def unreadable(self) -> bool:
        """Some attribute does not convert to its CEL type (a bad version string): every selector errors on it.
        Judged once per distinct set of the attributes that can fail: strings and booleans always convert, and a
        fleet's devices, which differ in those (uuids, bus ids), share a few versions."""
        if self.convertible is not None:
            return not self.convertible
        try:
            key = tuple((name, *value.items()) for name, value in self.attributes.items()
                        if "int" in value or not ("string" in value or "bool" in value))
            known = _CONVERTS.get(key)
        except (TypeError, AttributeError):  # an unhashable value, or an attribute that is no mapping
            return not attributes_convert(self.attributes)
        if known is None:
            known = _CONVERTS[key] = attributes_convert(self.attributes)
        return not known

    def typed_attribute(self, qualified: str) -> tuple[str, Any] | None:
        """(type, value) of an attribute, as the allocator compares them: same type and value (lists as tuples)."""
        domain, _, ident = qualified.rpartition("/")
        for key in (qualified, ident if domain == self.driver else None):
            if key is not None and key in self.attributes:
                (kind, value), = self.attributes[key].items()
                return kind, tuple(value) if isinstance(value, list) else value
        return None

    def attribute(self, qualified: str) -> Any:
        """An attribute's value by fully qualified name (the bare id too when the domain is the driver's)."""
        found = self.typed_attribute(qualified)
        return found[1] if found is not None else None


@dataclass
class Inventory:
    devices: list[Device] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    slices: list[ResourceSlice] = field(default_factory=list)  # those without devices too (they count in pools)
    taint_rules: list[DeviceTaintRule] = field(default_factory=list)  # as read: not applied to the devices
    # The Karpenter and Auto Mode NodePools whose nodes a stack's synthesized fleet includes: not launched yet, so a
    # claim they alone serve waits on their provisioner's own judgement (analysis/provisioning).
    launched_pools: list[LaunchedPool] = field(default_factory=list)

    def nodes(self) -> list[str]:
        """The nodes the slices name, in name order (shared slices name none)."""
        return sorted({d.node for d in self.devices if d.node not in SHARED}
                      | {s.node_selection.node_name for s in self.slices
                         if s.node_selection is not None and s.node_selection.node_name})

    def slice_members(self) -> list[tuple[ResourceSlice, list[Device]]]:
        """The typed slices with their devices, in the order read: those the devices came from, then any other
        read (a slice without devices still counts in its pool); devices without a slice get one per (node,
        driver, pool)."""
        found: dict[int, tuple[ResourceSlice, list[Device]]] = {}
        made: dict[tuple[str, str, str], list[Device]] = {}
        for device in self.devices:
            if device.slice is not None:
                found.setdefault(id(device.slice), (device.slice, []))[1].append(device)
            else:
                made.setdefault((device.node, device.driver, device.pool), []).append(device)
        for slice_ in self.slices:
            found.setdefault(id(slice_), (slice_, []))
        out = list(found.values())
        for (node, driver, pool), devices in made.items():
            selection = NodeSelection(all_nodes=True) if node == ALL_NODES else NodeSelection(node_name=node)
            out.append((ResourceSlice(f"{node}-{driver}", driver, ResourcePool(pool, 0, 1), selection,
                                      tuple(SliceDevice(d.name, d.attributes, d.capacity,
                                                        d.allow_multiple_allocations) for d in devices),
                                      {}, devices[0].source), devices))
        return out


class InventoryError(ValueError):
    pass


def _node_of(selection: NodeSelection | None) -> str:
    if selection is None:
        return ""
    if selection.node_name:
        return selection.node_name
    return ALL_NODES if selection.all_nodes else SELECTED_NODES if selection.node_selector is not None else ""


def read_slice(obj: Mapping[str, Any], source: str) -> ResourceSlice:
    """One ResourceSlice (any served version), typed; an error names the slice and what is missing."""
    try:
        slice_ = parse_slice(obj, source)
    except ObjectError as error:
        raise InventoryError(str(error)) from None
    per_device = slice_.node_selection is None
    if not slice_.driver or (not per_device and not _node_of(slice_.node_selection)) or (
            per_device and slice_.devices and not all(_node_of(d.node_selection) for d in slice_.devices)):
        raise InventoryError(f"{source}: ResourceSlice {slice_.name}: needs spec.driver and one of spec.nodeName, "
                             "allNodes, nodeSelector or perDeviceNodeSelection (then each device's own)")
    return slice_


def devices_of(slice_: ResourceSlice, source: str) -> Iterator[Device]:
    """The devices of a typed slice, each on the node that reaches it: its name, ALL_NODES or SELECTED_NODES."""
    node = _node_of(slice_.node_selection)
    for device in slice_.devices:
        yield Device(node=node or _node_of(device.node_selection), driver=slice_.driver, pool=slice_.pool.name,
                     name=device.name, attributes=device.attributes, capacity=device.capacity, source=source,
                     allow_multiple_allocations=device.allow_multiple_allocations, slice=slice_,
                     convertible=device.convertible)


def objects_in_document(document: Any) -> Iterator[dict[str, Any]]:
    """The objects of a parsed document (a kubectl List's items), themselves and not copies: a dump of millions of
    objects is not held twice."""
    if isinstance(document, dict):
        kind = document.get("kind")
        if isinstance(kind, str) and kind.endswith("List") and isinstance(document.get("items"), list):
            yield from (item for item in document["items"] if isinstance(item, dict))
        else:
            yield document


def from_documents(source: str, documents: list[Located]) -> Inventory:
    """The ResourceSlices and DeviceTaintRules of the documents (a kubectl List too); an error names the object."""
    inventory = Inventory()
    for document in documents:
        for obj in objects_in_document(document.data):
            if obj.get("kind") == "ResourceSlice":
                slice_ = read_slice(obj, source)
                inventory.slices.append(slice_)
                inventory.devices.extend(devices_of(slice_, source))
            elif obj.get("kind") == "DeviceTaintRule":
                try:
                    inventory.taint_rules.append(parse_taint_rule(obj, source))
                except ObjectError as error:
                    raise InventoryError(str(error)) from None
    return inventory


# --------------------------------------------------------------------------------------------- synthesized

# Attributes the catalog cannot know per device; values as published by current drivers (the real p5 dump).
SYNTHETIC_DRIVER_VERSION = "580.105.8"
SYNTHETIC_CUDA_DRIVER_VERSION = "13.0.0"
# NVML's addressing mode: HMM on x86 hosts (real EKS p5 dump), ATS on Grace (real GB200 dump); tests/data.
ADDRESSING_MODES = {"x86_64": "HMM", "arm64": "ATS"}


@dataclass(frozen=True)
class GroupSpec:
    """A GPU node group as the fleet synthesis needs it; from config, or from node group resources (policies)."""

    name: str
    instance_type: str
    max_nodes: int
    dra: bool
    # An existing cluster's pool may name its GPUs instead of an instance type: a model of the catalog and a count.
    gpu_model: str = ""
    gpus: int = 0

    def hardware(self) -> InstanceType | None:
        """The instance type (from the catalog, or made up of the pool's GPU model and count), or None if unknown."""
        if self.instance_type:
            return INSTANCE_TYPES.get(self.instance_type)
        model = GPU_MODELS.get(self.gpu_model)
        if model is None or self.gpus < 1:
            return None
        return InstanceType(f"{self.gpus} x {model.key}", model, self.gpus, "x86_64", "the stack's node pool")


@dataclass(frozen=True)
class LaunchedPool:
    """A GPU NodePool whose nodes are launched on demand, as the judgement needs it: Karpenter's (`version`, its
    release) or EKS Auto Mode's (`version` empty); from a stack's config, or from the pack's config."""

    name: str
    instance_types: tuple[str, ...]
    dra: bool
    version: str  # the Karpenter release; "" for an Auto Mode NodePool
    max_nodes: int = 1

    @property
    def auto_mode(self) -> bool:
        return not self.version

    @property
    def launcher(self) -> str:
        """Who launches its nodes."""
        return "EKS Auto Mode" if self.auto_mode else "Karpenter"

    @property
    def provisioner(self) -> str:
        """Who launches its nodes, with Karpenter's release, as explain and the findings name it."""
        return self.launcher if self.auto_mode else f"{self.launcher} {self.version}"

    def fleet(self) -> list[GroupSpec]:
        """The nodes the NodePool may have once launched, for the verdicts judged on nodes that exist (explain,
        check): each of its instance types at the NodePool's node limit, as the DRA driver publishes them. A claim
        is judged alone there, so counting every type at the limit overstates the capacity only for claims judged
        together."""
        return [GroupSpec(self.group(itype), itype, self.max_nodes, self.dra) for itype in self.instance_types]

    def group(self, instance_type: str) -> str:
        """The name the fleet gives the NodePool's nodes of one instance type (its nodes: <group>-<n>)."""
        return f"{self.name}-{instance_type}"


def launched_pools(config: StackConfig) -> list[LaunchedPool]:
    """The stack's GPU NodePools launched on demand, Karpenter's then Auto Mode's, as the judgement and the fleet
    need them."""
    karpenter = [LaunchedPool(pool.name, tuple(pool.instance_types), pool.allocation_mode.value == "dra",
                              config.karpenter.version, pool.max_nodes)
                 for pool in config.karpenter.node_pools] if config.karpenter else []
    return karpenter + [LaunchedPool(pool.name, tuple(pool.instance_types), True, "", pool.max_nodes)
                        for pool in config.auto_mode_node_pools]


def pool_spec(pool: NodePool) -> GroupSpec:
    """An existing cluster's declared pool as the synthesis sees it: all its nodes, like a node group at max size."""
    return GroupSpec(pool.name, pool.instance_type or "", pool.nodes, pool.allocation_mode.value == "dra",
                     pool.gpu_model or "", pool.gpu_count or 0)


def synthesize(config: StackConfig) -> Inventory:
    """Every DRA node group at its max size and every instance type of a Karpenter NodePool at its node limit (or
    every node of an existing cluster's DRA pools), each node with the GPUs its (first) instance type carries."""
    # imported here: reading a dump (inventory, explain FILE) needs no stack model, and pydantic's costs 0.3 s
    from gpu_dra.core.config.models import AllocationMode

    pools = launched_pools(config)
    inventory = synthesize_groups([GroupSpec(g.name, g.instance_types[0], g.scaling.max,
                                             g.allocation_mode is AllocationMode.dra) for g in config.node_groups]
                                  + [spec for pool in pools for spec in pool.fleet()]
                                  + [pool_spec(p) for p in config.node_pools],
                                  config.target.driver_level)
    inventory.launched_pools = pools
    return inventory


def synthetic_attributes(itype: InstanceType, node: str, index: int, level: tuple[int, int]) -> dict[str, Any]:
    """The attributes the pinned driver release publishes for GPU `index` of a node (nvidia.published_attributes:
    the one list of names), valued from the instance catalog, with per-device ids laid out as on a real p5: one
    PCIe root and bus per GPU."""
    model = itype.gpu
    bus = f"0000:{0x53 + 0x11 * index:02x}:00.0"
    values: dict[str, dict[str, Any]] = {
        "type": {"string": "gpu"},
        "uuid": {"string": f"GPU-synthetic-{node}-{index}"},
        "productName": {"string": model.product_name},
        "brand": {"string": "Nvidia"},
        "architecture": {"string": model.architecture},
        "cudaComputeCapability": {"version": model.compute_capability},
        "driverVersion": {"version": SYNTHETIC_DRIVER_VERSION},
        "cudaDriverVersion": {"version": SYNTHETIC_CUDA_DRIVER_VERSION},
        "addressingMode": {"string": ADDRESSING_MODES[itype.cpu_arch]},
        f"{STANDARD_DOMAIN}/pcieRoot": {"string": f"pci0000:{0x44 + 0x11 * index:02x}"},
        f"{STANDARD_DOMAIN}/pciBusID": {"string": bus},
        "pcieBusID": {"string": bus},
        "index": {"int": index},
        "minor": {"int": index},
    }
    return {name: values[name] for name in sorted(published_attributes(level, "gpu"))}


def synthesize_groups(groups: list[GroupSpec], level: tuple[int, int]) -> Inventory:
    """`level`: the driver release (0.x numbering) whose published attributes the devices carry."""
    inventory = Inventory()
    for group in groups:
        if not group.dra:
            inventory.notes.append(f"{group.name}: device-plugin group, publishes no ResourceSlices")
            continue
        itype = group.hardware()
        if itype is None:
            inventory.notes.append(f"{group.name}: {group.instance_type or group.gpu_model} is not in the GPU "
                                   "catalog; left out")
            continue
        model = itype.gpu
        inventory.notes.append(f"{group.name}: {group.max_nodes} x {itype.name}, {itype.gpus} x {model.product_name} "
                               f"({model.status}: {model.source})")
        source = f"synthesized from node group {group.name}"
        for n in range(group.max_nodes):
            node = f"{group.name}-{n}"
            slice_ = ResourceSlice(f"{node}-{DRIVER_NAME}", DRIVER_NAME, ResourcePool(node, 1, 1),
                                   NodeSelection(node_name=node),
                                   tuple(SliceDevice(f"gpu-{g}", synthetic_attributes(itype, node, g, level),
                                                     {"memory": model.memory}) for g in range(itype.gpus)),
                                   {}, source)
            inventory.slices.append(slice_)
            inventory.devices.extend(devices_of(slice_, source))
    return inventory
