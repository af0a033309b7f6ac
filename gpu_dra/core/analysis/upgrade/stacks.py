"""The stack before and after an upgrade: the same files with one key changed, each validated by the loader, so the
stack at the target is judged by every rule a `pulumi up` of it would meet."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpu_dra.core.analysis.upgrade.report import Change, finding
from gpu_dra.core.config.loader import LoadedStack, build_loaded_stack, stack_values
from gpu_dra.core.config.models import Stack
from gpu_dra.core.config.models.cluster import SUPPORTED_KUBERNETES_VERSIONS as SUPPORTED
from gpu_dra.core.facts import karpenter, nvidia
from gpu_dra.core.facts.kubernetes_apis import minor_of
from gpu_dra.core.facts.nvidia_driver import ChartName, unreleased
from gpu_dra.core.facts.target import Platform
from gpu_dra.core.findings import ConfigError, Finding
from gpu_dra.core.yamlsource import Located

PREFIX = "gpu-dra:"
# What an upgrade moves, and the stack key (under gpu-dra:) that says its version.
KEYS = {"kubernetes": ("cluster", "kubernetesVersion"), "driver": ("draDriver", "version"),
        "karpenter": ("karpenter", "version")}


class UpgradeError(Exception):
    """An upgrade that cannot be judged as asked (a downgrade, the version it already runs, no Karpenter)."""


class OlderTarget(UpgradeError):
    """A target older than what the stack runs: no upgrade (with --all-stacks, a stack already past it)."""


class CannotFollow(UpgradeError):
    """A change the cluster cannot follow: a lowered Kubernetes version, or on EKS more than one minor at once."""


@dataclass(frozen=True)
class StackPair:
    change: Change
    before: LoadedStack
    after: Stack | None  # None: the stack file is refused at the target (`refused` says why)
    refused: list[Finding]


def current_version(stack: Stack, what: str) -> str:
    config = stack.config
    if what == "kubernetes":
        return config.cluster.kubernetes_version
    if what == "driver":
        if not config.installs_driver_chart:
            raise UpgradeError(f"stack {stack.name} installs no DRA driver chart (EKS Auto Mode runs NVIDIA's driver "
                               "itself): nothing to upgrade")
        return config.dra_driver.version
    if config.karpenter is None:
        raise UpgradeError(f"stack {stack.name} runs no Karpenter (gpu-dra:karpenter): nothing to upgrade")
    return config.karpenter.version


def _known(what: str, version: str) -> tuple[int, ...]:
    """The version's place in its order, where gpu-dra can judge it: a Kubernetes minor stacks accept, a Karpenter
    release whose DRA metadata was read, a chart release in the form of its key (which the loader checks further)."""
    if what == "kubernetes":
        if not re.fullmatch(r"1\.\d+", version):
            raise UpgradeError(f"{version!r} is not a Kubernetes minor version such as {SUPPORTED[-1]}")
        if version not in SUPPORTED:
            raise UpgradeError(f"Kubernetes {version} is not a version gpu-dra stacks support "
                               f"({', '.join(SUPPORTED)}): EKS has not released it, or gpu-dra does not judge it")
        return (minor_of(version),)
    if what == "karpenter" and version not in karpenter.KARPENTER_VERSIONS:
        raise UpgradeError(f"Karpenter {version} is a release whose DRA metadata gpu-dra has not read (it has "
                           f"{', '.join(karpenter.KARPENTER_VERSIONS)}), so it cannot judge what it would launch")
    try:
        return nvidia.parse_version(version)
    except ValueError:
        example = nvidia.DEFAULT_CHART_VERSION if what == "driver" else karpenter.DEFAULT_KARPENTER_VERSION
        raise UpgradeError(f"{version!r} is not a release such as {example}") from None


def _downgrade_words(what: str, on_eks: bool) -> str:
    if what == "kubernetes":
        return ("EKS cannot downgrade a control plane" if on_eks else
                "a cluster is not downgraded: the stack would name an older version than it runs")
    return "a chart downgrade" if what == "driver" else "a Karpenter downgrade"


def _check_target(what: str, current: str, target: str, on_eks: bool) -> None:
    """A version the change can move to: a newer one gpu-dra can judge."""
    wanted, now = _known(what, target), _known(what, current)
    if wanted == now:
        raise UpgradeError(f"the stack already runs {target}")
    if wanted < now:
        raise OlderTarget(f"{target} is older than {current}, which the stack runs ({_downgrade_words(what, on_eks)}):"
                           " gpu-dra judges upgrades only")


def _level(version: str) -> tuple[int, int]:
    try:
        return nvidia.release_level_of(version)
    except ValueError:
        raise UpgradeError(f"{version!r} is not a driver release such as {nvidia.DEFAULT_CHART_VERSION}") from None


def _older_driver(base: str, current: str, same_line: bool) -> bool:
    """Whether `current` is an older driver than `base`: by release on one chart line, by driver level across lines."""
    try:
        if same_line:
            return nvidia.parse_version(current) < nvidia.parse_version(base)
        return _level(current) < _level(base)
    except (ValueError, UpgradeError):
        return False  # a version the loader names: judged there


def _with_version(values: dict[str, Any], key: tuple[str, ...], version: str,
                  chart: str | None = None) -> dict[str, Any]:
    """The stack file's config with gpu-dra:<key> set to `version` (and draDriver.chart to `chart`, where given);
    the rest untouched."""
    section, leaf = PREFIX + key[0], key[1]
    current = values.get(section)
    updated = {**(current if isinstance(current, dict) else {}), leaf: version}
    if chart is not None:
        updated["chart"] = chart
    return {**values, section: updated}


def load_pair(root: Path, name: str, what: str, target: str) -> StackPair:
    """The stack as its files say, and as they would be with the change; a stack file refused as it is raises
    ConfigError (fix it first), one refused at the target is a finding."""
    values, located = stack_values(root, name)
    before = build_loaded_stack(root, name, values, located)
    current = current_version(before.stack, what)
    on_eks = before.stack.config.cluster.platform is Platform.eks
    running = before.stack.config.dra_driver.chart.value
    chart, _, version = target.rpartition("@") if what == "driver" else ("", "", target)
    if chart and chart == running:
        chart = ""  # the chart the stack runs, named
    if chart and chart not in {c.value for c in ChartName}:
        raise UpgradeError(f"{chart!r} is no chart line gpu-dra knows: {', '.join(c.value for c in ChartName)}")
    if what == "driver":  # a release gpu-dra has not read: its gates, values and attributes are unknown
        _known(what, version)
        unknown = unreleased(ChartName(chart or running), version)
        if unknown:
            raise UpgradeError(unknown)
    if not chart:
        _check_target(what, current, version, on_eks)
    elif _level(version) < _level(current):
        raise OlderTarget(f"{chart} {version} is an older driver release than {current}, which the stack runs: a "
                           "downgrade is no upgrade gpu-dra judges")
    else:
        current = f"{running}@{current}"
    change = Change(what, current, target if chart else version, KEYS[what])
    try:
        after = build_loaded_stack(root, name, _with_version(values, change.key, version, chart or None),
                                   located).stack
    except ConfigError as error:
        line = _line(located, change.key)
        refused = [finding("upgrade-refused", f"at {change.label}: {f.message}", file=f.file, line=f.line or line,
                           path=f.path) for f in error.findings]
        return StackPair(change, before, None, refused)
    return StackPair(change, before, after, [])


def load_since(root: Path, name: str, what: str, base_version: str) -> StackPair | None:
    """A change that already moved the stack's version (a pull request against its base): the files as they are,
    and as they would be with the base's version back (`base_version`: a release, or CHART@RELEASE for the driver).
    None where the version did not change, or the stack no longer runs what it names; UpgradeError where the stack at
    the base version is refused today."""
    values, located = stack_values(root, name)
    after = build_loaded_stack(root, name, values, located)
    try:
        current = current_version(after.stack, what)
    except UpgradeError:  # no Karpenter, no driver chart now: nothing of it moved
        return None
    chart = after.stack.config.dra_driver.chart.value
    base_chart, _, version = base_version.rpartition("@") if what == "driver" else ("", "", base_version)
    if version == current and base_chart in ("", chart):
        return None
    on_eks = after.stack.config.cluster.platform is Platform.eks
    if what == "kubernetes" and re.fullmatch(r"1\.\d+", version):
        if minor_of(current) < minor_of(version):
            raise CannotFollow(f"the change lowers kubernetesVersion from {version} to {current}: "
                            f"{_downgrade_words(what, on_eks)}")
        if on_eks and minor_of(current) - minor_of(version) > 1:
            raise CannotFollow(f"the change raises kubernetesVersion from {version} to {current} at once: EKS upgrades "
                            f"a control plane one minor version at a time, so raise it to 1.{minor_of(version) + 1} "
                            "first, in its own `pulumi up`")
    base_label = f"{base_chart}@{version}" if base_chart and base_chart != chart else version
    if what == "driver" and _older_driver(version, current, base_chart in ("", chart)):
        raise UpgradeError(f"the change moves the DRA driver to an older release ({base_label} -> {current}): not "
                           "judged as an upgrade")
    target = f"{chart}@{current}" if base_chart and base_chart != chart else current
    try:
        before = build_loaded_stack(root, name, _with_version(values, KEYS[what], version, base_chart or None),
                                    located)
    except ConfigError as error:
        raise UpgradeError(f"the stack at the base's {base_label} is refused by today's rules "
                           f"({error.findings[0].message})") from None
    return StackPair(Change(what, base_label, target, KEYS[what]), before, after.stack, [])


def _line(located: Located, key: tuple[str, ...]) -> int | None:
    return located.line(("config", PREFIX + key[0], key[1])) or located.line(("config", PREFIX + key[0]))


def key_line_of(loaded: LoadedStack, what: str) -> int | None:
    """The line of the stack file that names the version of `what` (or of its section)."""
    return _line(loaded.source.located, KEYS[what])

