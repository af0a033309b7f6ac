"""docs/configuration.md, generated from the config models and the repo's own stacks so it cannot drift.

Every key's type, default and meaning come from the pydantic models; its example is the first value the repo's
stack and team files use for it, or one from EXTRA_EXAMPLES for keys no repo file sets.
"""

from __future__ import annotations

import json
import typing
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from gpu_dra.core.config.loader import PREFIX, PROVIDER_NAMESPACES, unwrap_annotation
from gpu_dra.core.config.models import StackConfig, Team
from gpu_dra.core.yamlsource import MAX_ALIAS_NODES, MAX_DEPTH, read_yaml

# Keys no repo stack or team file sets, with a realistic value each.
EXTRA_EXAMPLES: dict[tuple[str, str], Any] = {
    ("StackConfig", "legacyMappings"): [{"extendedResourceName": "nvidia.com/gpu-l40s", "deviceClass": "gpu-l40s"}],
    ("Endpoint", "publicAccessCidrs"): ["<your office or VPN egress address>/32"],
    ("Match", "migProfiles"): ["1g.10gb"],
    ("StackConfig", "kubeconfig"): "(secret) pulumi config set --secret gpu-dra:kubeconfig < ~/.kube/lab.yaml",
    ("StackConfig", "protectTeamNamespaces"): False,
    ("DraDriver", "values"): {
        "image": {"repository": "123456789012.dkr.ecr.us-west-2.amazonaws.com/dra-driver-nvidia-gpu"},
        "imagePullSecrets": [{"name": "ecr-pull"}]},
    ("Cluster", "platform"): "existing",
    ("Cluster", "kubeconfig"): {"path": "~/.kube/config", "context": "gpu-lab"},
    ("Cluster", "featureGates"): {"DRAConsumableCapacity": True},
    ("Cluster", "protect"): True,
    ("Cluster", "addonVersions"): {"coredns": "v1.12.4-eksbuild.1"},
    ("NodeGroup", "allowReplacement"): True,
    ("KarpenterNodePool", "allocationMode"): "device-plugin",
    ("KarpenterNodePool", "amiFamily"): "Bottlerocket",
    ("KarpenterNodePool", "consolidation"): "WhenEmptyOrUnderutilized",
    ("KarpenterNodePool", "consolidateAfter"): "30m",
    ("KarpenterNodePool", "diskSize"): 300,
    ("KarpenterNodePool", "labels"): {"team": "training"},
    ("KarpenterNodePool", "taints"): [{"key": "example.com/dedicated", "value": "training", "effect": "NoSchedule"}],
    ("Kueue", "version"): "0.19.2",
    ("Kueue", "cohort"): "gpu",
    ("TeamHosting", "queue"): {"nominalQuota": {"gpu-l40s": 2}},
    ("Queue", "borrowingLimit"): {"gpu-l40s": 4},
    ("Queue", "cohort"): "inference-and-research",
    ("AutoModeNodePool", "consolidation"): "WhenEmptyOrUnderutilized",
    ("AutoModeNodePool", "consolidateAfter"): "30m",
    ("AutoModeNodePool", "labels"): {"team": "serving"},
    ("AutoModeNodePool", "taints"): [{"key": "example.com/dedicated", "value": "serving", "effect": "NoSchedule"}],
    ("Networking", "publicSubnetIds"): ["subnet-0aa1bb2cc3dd4ee61", "subnet-0aa1bb2cc3dd4ee62"],
    ("KubeconfigSource", "path"): "~/.kube/config",
    ("KubeconfigSource", "context"): "gpu-lab",
    ("StackConfig", "nodePools"): [{"name": "h100", "nodeSelector": {"node.kubernetes.io/instance-type": "p5.48xlarge"},
                                    "instanceType": "p5.48xlarge", "nodes": 4}],
    ("NodePool", "name"): "h100",
    ("NodePool", "nodeSelector"): {"node.kubernetes.io/instance-type": "p5.48xlarge"},
    ("NodePool", "instanceType"): "p5.48xlarge",
    ("NodePool", "gpuModel"): "A10G",
    ("NodePool", "gpuCount"): 1,
    ("NodePool", "nodes"): 4,
    ("NodePool", "allocationMode"): "device-plugin",
    ("NodePool", "driver"): "gpu-operator",
    ("NodePool", "taints"): [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}],
    ("NodeGroup", "driver"): "gpu-operator",
    ("NodeGroup", "availabilityZone"): "us-west-2b",
    ("NodeGroup", "multiNodeNvlink"): True,
    ("NodeGroup", "labels"): {"workload": "training"},
    ("NodeGroup", "taints"): [{"key": "dedicated", "value": "training", "effect": "NoSchedule"}],
    ("Taint", "key"): "dedicated",
    ("Taint", "value"): "training",
    ("Taint", "effect"): "NoSchedule",
    ("DraDriver", "chart"): "nvidia-dra-driver-gpu",
    ("DraDriver", "repository"): "oci://nvcr.io/nvidia/k8s",
    ("DraDriver", "namespace"): "nvidia-dra-driver",
    ("DeviceClassConfig", "selectors"): ["device.attributes['gpu.nvidia.com'].addressingMode == 'HMM'"],
    ("DeviceClassConfig", "config"): [{"driver": "gpu.nvidia.com", "parameters": {
        "apiVersion": "resource.nvidia.com/v1beta1", "kind": "GpuConfig",
        "sharing": {"strategy": "TimeSlicing", "timeSlicingConfig": {"interval": "Long"}}}}],
    ("OpaqueConfig", "driver"): "gpu.nvidia.com",
    ("OpaqueConfig", "parameters"): {"apiVersion": "resource.nvidia.com/v1beta1", "kind": "GpuConfig"},
    ("Match", "architectures"): ["Hopper", "Blackwell"],
    ("LegacyMapping", "extendedResourceName"): "nvidia.com/mig-1g.10gb",
    ("LegacyMapping", "deviceClass"): "mig-1g.10gb",
    ("Namespace", "annotations"): {"owner": "ml-platform@example.com"},
    ("Request", "selectors"): ["device.attributes['resource.kubernetes.io'].pcieRoot == 'pci0000:44'"],
    ("Request", "tolerations"): [{"key": "gpu.nvidia.com/xid", "operator": "Exists",
                                  "effect": "NoSchedule"}],
    ("Request", "capacity"): {"memory": "10Gi"},
    ("Alternative", "match"): {"minMemory": "40Gi"},
    ("Alternative", "selectors"): ["device.attributes['gpu.nvidia.com'].architecture == 'Hopper'"],
    ("Alternative", "allocationMode"): "ExactCount",
    ("Alternative", "tolerations"): [{"key": "gpu.nvidia.com/xid", "operator": "Exists"}],
    ("Alternative", "capacity"): {"memory": "20Gi"},
    ("Toleration", "key"): "gpu.nvidia.com/xid",
    ("Toleration", "operator"): "Exists",
    ("Toleration", "value"): "true",
    ("Toleration", "effect"): "NoSchedule",
    ("Constraint", "distinctAttribute"): "gpu.nvidia.com/uuid",
    ("Sharing", "requests"): ["gpu"],
    ("Sharing", "activeThreadPercentage"): 50,
    ("Sharing", "pinnedMemoryLimit"): "10Gi",
    ("TeamHosting", "quota"): {"claims": 16, "devices": {"gpu-h100": 16}},
}


def _models(root: type[BaseModel]) -> list[type[BaseModel]]:
    """`root` and every model reachable from its fields, in first-seen order."""
    seen: list[type[BaseModel]] = []

    def visit(annotation: Any) -> None:
        annotation = unwrap_annotation(annotation)
        if isinstance(annotation, type) and issubclass(annotation, BaseModel) and annotation not in seen:
            seen.append(annotation)
            for field in annotation.model_fields.values():
                visit(field.annotation)
        for arg in typing.get_args(annotation):
            visit(arg)

    visit(root)
    return seen


def _collect_examples(model: type[BaseModel], data: Any, out: dict[tuple[str, str], Any]) -> None:
    if not isinstance(data, dict):
        return
    for name, field in model.model_fields.items():
        key = field.alias or name
        if key not in data:
            continue
        value = data[key]
        out.setdefault((model.__name__, key), value)
        inner = unwrap_annotation(field.annotation)
        origin = typing.get_origin(inner)
        items = value if origin is list and isinstance(value, list) else (
            list(value.values()) if origin is dict and isinstance(value, dict) else [value])
        target = unwrap_annotation(typing.get_args(inner)[-1]) if origin in (list, dict) else inner
        if isinstance(target, type) and issubclass(target, BaseModel):
            for item in items:
                _collect_examples(target, item, out)


def repo_examples(root: Path) -> dict[tuple[str, str], Any]:
    examples: dict[tuple[str, str], Any] = {}
    for path in sorted((root / "stacks").glob("Pulumi.*.yaml")):
        config = (read_yaml(path, str(path)).data or {}).get("config", {})
        ours = {k[len(PREFIX):]: v for k, v in config.items() if k.startswith(PREFIX)}
        _collect_examples(StackConfig, ours, examples)
    for path in sorted((root / "stacks" / "teams").glob("*.yaml")):
        _collect_examples(Team, read_yaml(path, str(path)).data, examples)
    return examples


def _type_name(schema: dict[str, Any], defs: dict[str, Any]) -> str:
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return _type_name(defs[name], defs) if "enum" in defs.get(name, {}) else name
    if "enum" in schema:
        return "one of " + ", ".join(f"`{v}`" for v in schema["enum"])
    if "anyOf" in schema:
        return " or ".join(_type_name(s, defs) for s in schema["anyOf"] if s.get("type") != "null")
    kind = schema.get("type")
    if kind == "array":
        return f"list of {_type_name(schema.get('items', {}), defs)}"
    if kind == "object":
        values = schema.get("additionalProperties")
        return f"map of string to {_type_name(values, defs)}" if isinstance(values, dict) else "mapping"
    return str(kind) if kind in ("string", "integer", "boolean", "number") else "any"


def _inline(value: Any) -> str:
    return "`" + json.dumps(value, separators=(", ", ": ")).replace("|", "\\|") + "`"


def configuration_markdown(root: Path) -> str:
    examples = {**EXTRA_EXAMPLES, **repo_examples(root)}
    lines = [
        "# Configuration reference",
        "",
        "Generated by `make docs` from the config models (`gpu_dra/core/config/models/`) and the repo's stacks;",
        "a test fails when it is out of date. Examples are the values the repo's own stack and team files use where",
        "they set the key. Unknown keys are errors everywhere. Editors validate against `schemas/` (`gpu-dra schema`).",
        "",
        "A stack file `stacks/Pulumi.<stack>.yaml` holds `gpu-dra:<key>` for each key of **StackConfig**; each team",
        "hosted by a stack owns `stacks/teams/<team>.yaml`, one **Team**. Besides `gpu-dra:`, a stack file may set",
        f"only the providers' namespaces ({', '.join(f'`{n}:`' for n in PROVIDER_NAMESPACES)}); any other key is an "
        "error.",
        "",
        "Types are strict: a count is a whole number (`true` or `yes` is no count), a name is text (quote a name that",
        "reads as a number). Team files are checked in pull requests, so every file gpu-dra reads is refused, with",
        "its line, when it repeats a key (the last one would win silently), nests deeper than",
        f"{MAX_DEPTH} levels, or has aliases that repeat more than {MAX_ALIAS_NODES:,} nodes.",
        "",
        "About legacy mappings (`gpu-dra:legacyMappings`): gpu-dra emits `DeviceClass.spec.extendedResourceName` as",
        "configured. Whether the cluster honours it is a separate question: the field's gate DRAExtendedResource is",
        "alpha and off on Kubernetes 1.34 and 1.35, where EKS (which runs no alpha gates) silently drops the field,",
        "and beta and on from 1.36. The chart's own `gpu.nvidia.com` class already maps `nvidia.com/gpu` on v1, so",
        "map other names (for example MIG profiles) to your classes.",
        "",
    ]
    missing = []
    for model in (*_models(StackConfig), *[m for m in _models(Team) if m not in _models(StackConfig)]):
        schema = model.model_json_schema(by_alias=True)
        # The docstring's first paragraph, whole: a sentence may run over several lines.
        doc = " ".join((model.__doc__ or "").strip().split("\n\n")[0].split())
        lines += [f"## {model.__name__}", ""]
        if doc:
            lines += [doc, ""]
        lines += ["| key | type | default | meaning | example |", "|---|---|---|---|---|"]
        required = set(schema.get("required", []))
        for name, field in model.model_fields.items():
            key = field.alias or name
            if key not in schema["properties"]:  # set by gpu-dra, not written in a file (Team.admin)
                continue
            prop = schema["properties"][key]
            default = "required" if key in required else _inline(prop["default"]) if "default" in prop else ""
            example = examples.get((model.__name__, key))
            if example is None:
                missing.append(f"{model.__name__}.{key}")
            meaning = (field.description or "").replace("|", "\\|")
            lines.append(f"| `{key}` | {_type_name(prop, schema.get('$defs', {}))} | {default} | {meaning} | "
                         f"{_inline(example) if example is not None else ''} |")
        lines.append("")
    if missing:
        raise ValueError(f"keys without an example: {', '.join(missing)}; add them to EXTRA_EXAMPLES")
    return "\n".join(lines)
