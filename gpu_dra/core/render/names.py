"""The Pulumi resource names of what a stack declares, built and read back in one place.

Names derive from stable identities (team, template, class, node group), never list positions, so adding or
reordering entries replaces nothing else. `gpu-dra check` reads a violation's URN back to the stack or team file
entry that declared it with `declared_by`.
"""

from __future__ import annotations

from dataclasses import dataclass

DRA_DRIVER_CHART = "nvidia-dra-driver"  # the helm.v4.Chart resource of NVIDIA's DRA driver
DEVICE_PLUGIN_CHART = "nvidia-device-plugin"  # the one of NVIDIA's device plugin, while device-plugin groups remain


def device_class(name: str) -> str:
    return f"deviceclass-{name}"


def namespace(team: str) -> str:
    return f"{team}-namespace"


def quota(team: str) -> str:
    return f"{team}-quota"


def claim_template(team: str, template: str) -> str:
    # Team names hold no dots (DNS labels), so "<team>.<template>" never collides across teams.
    return f"{team}.{template}"


def node_group(cluster: str, group: str) -> str:
    return f"{cluster}-{group}"


@dataclass(frozen=True)
class Declared:
    """Which config entry a resource comes from: `kind` is template, namespace, quota, device-class or node-group."""

    kind: str
    team: str = ""
    name: str = ""


def declared_by(resource_type: str, name: str, teams: set[str], classes: set[str], cluster: str,
                groups: set[str]) -> Declared | None:
    """The config entry a resource of this type and name was declared from, or None."""
    if resource_type.endswith(":ResourceClaimTemplate") and "." in name:
        team, template = name.split(".", 1)
        if team in teams:
            return Declared("template", team, template)
    for kind, build in (("namespace", namespace), ("quota", quota)):
        team = name.rsplit("-", 1)[0]
        if team in teams and build(team) == name:
            return Declared(kind, team)
    if resource_type.endswith(":DeviceClass"):
        class_name = name.removeprefix(device_class(""))
        if class_name in classes and device_class(class_name) == name:
            return Declared("device-class", name=class_name)
    group = name.removeprefix(f"{cluster}-")
    if group in groups and node_group(cluster, group) == name:
        return Declared("node-group", name=group)
    return None
