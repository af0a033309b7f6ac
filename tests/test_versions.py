"""Versions gpu-dra knows: the EKS support calendar (one fact, read by the rule kubernetes-version-supported), the
default Kubernetes version of new stacks, and the released versions of each NVIDIA chart line."""

from __future__ import annotations

import datetime

import pytest

from gpu_dra.core.config.loader import load_stack
from gpu_dra.core.config.models import SUPPORTED_KUBERNETES_VERSIONS, Cluster, DraDriver, SupportType
from gpu_dra.core.facts import eks, gates, nvidia, nvidia_driver
from gpu_dra.core.facts.eks import SUPPORT_CALENDAR, SupportWindow
from gpu_dra.core.facts.nvidia_driver import ChartName
from gpu_dra.core.facts.pulumi_types import EKS_CLUSTER
from gpu_dra.core.facts.target import Platform, Target
from gpu_dra.core.policy import eks as eks_rules
from gpu_dra.core.policy.resources import Context, Resource
from gpu_dra.core.render import charts

from .conftest import ROOT, STACKS

DAY = datetime.timedelta(days=1)


def _supported_messages(version: str, today: datetime.date) -> list[str]:
    cluster = Resource(EKS_CLUSTER, "gpu-lab", "urn:pulumi:lab::gpu-dra::aws:eks/cluster:Cluster::gpu-lab",
                       {"version": version})
    return [f.message for f in eks_rules.kubernetes_version_supported(cluster, Context(today=today))]


# --------------------------------------------------------------------------------------------- the EKS calendar


def test_every_supported_version_has_a_calendar_row() -> None:
    assert set(SUPPORTED_KUBERNETES_VERSIONS) <= set(SUPPORT_CALENDAR)
    for version, window in SUPPORT_CALENDAR.items():
        assert window.version == version
        assert window.extended_ends == window.standard_ends.replace(year=window.standard_ends.year + 1), version
        assert window.status in ("verified", "partially verified", "unverified") and window.source, version


@pytest.mark.parametrize("version", sorted(SUPPORT_CALENDAR))
def test_the_rule_follows_each_row_of_the_calendar(version: str) -> None:
    window = SUPPORT_CALENDAR[version]
    end, last = window.standard_ends, window.extended_ends
    assert _supported_messages(version, end - 91 * DAY) == []
    assert _supported_messages(version, end - 90 * DAY) == [
        f"EKS standard support for Kubernetes {version} ends on {end}, in 90 days"]
    assert _supported_messages(version, end) == [f"EKS standard support for Kubernetes {version} ends today ({end})"]
    assert _supported_messages(version, last) == [
        f"EKS standard support for Kubernetes {version} ended on {end}: the cluster is in extended support, billed "
        "$0.60 instead of $0.10 per cluster-hour, which it cannot leave but by upgrading"]
    assert _supported_messages(version, last + DAY) == [
        f"EKS support for Kubernetes {version} ended on {last}, extended support included: EKS may upgrade the "
        "control plane at any time"]


def test_the_rule_reads_the_one_calendar(monkeypatch: pytest.MonkeyPatch) -> None:
    """A row added to gpu_dra.core.facts.eks is what the rule judges by: it keeps no dates of its own."""
    today = datetime.date(2026, 12, 1)
    assert _supported_messages("1.99", today) == []
    monkeypatch.setitem(SUPPORT_CALENDAR, "1.99", SupportWindow("1.99", today + 3 * DAY, today + 368 * DAY, "test",
                                                                "unverified"))
    assert _supported_messages("1.99", today) == ["EKS standard support for Kubernetes 1.99 ends on 2026-12-04, in 3 "
                                                  "days"]
    assert not hasattr(eks_rules, "EKS_STANDARD_SUPPORT_ENDS")


def test_1_34_leaves_standard_support_on_2026_12_02() -> None:
    assert SUPPORT_CALENDAR["1.34"].standard_ends == datetime.date(2026, 12, 2)
    assert _supported_messages("1.34", datetime.date(2026, 12, 1)) == [
        "EKS standard support for Kubernetes 1.34 ends on 2026-12-02, in 1 day"]


def test_extended_support_prices_are_the_documented_ones() -> None:
    assert (eks.STANDARD_PRICE_PER_HOUR, eks.EXTENDED_PRICE_PER_HOUR) == ("0.10", "0.60")


# --------------------------------------------------------------------------------------------- default version


def test_the_default_version_outlives_1_34_in_standard_support() -> None:
    """New stacks, lint, explain and the pack assume a version past the 90-day warning window of the day 1.34 left
    standard support."""
    default = gates.DEFAULT_KUBERNETES_VERSION
    assert default in SUPPORTED_KUBERNETES_VERSIONS and default != "1.34"
    assert (SUPPORT_CALENDAR[default].standard_ends - SUPPORT_CALENDAR["1.34"].standard_ends).days > 90
    assert Target().kubernetes_version == default


def test_dev_runs_1_35_with_its_gates() -> None:
    """dev moves to 1.35: DRAExtendedResource is still alpha there (the chart's class loses extendedResourceName),
    the other alpha gates stay off, the beta ones on."""
    dev = load_stack(ROOT, "dev").config
    assert dev.cluster.kubernetes_version == "1.35" == gates.DEFAULT_KUBERNETES_VERSION
    assert dev.cluster.upgrade_policy is SupportType.STANDARD
    assert charts.drops_extended_resource_name(dev)

    on = dev.target.enabled
    assert not any(on(g) for g in ("DRAExtendedResource", "DRAConsumableCapacity", "DRAPartitionableDevices",
                                   "DRADeviceTaints", "DRADeviceTaintRules", "DRADeviceBindingConditions"))
    assert all(on(g) for g in ("DynamicResourceAllocation", "DRAAdminAccess", "DRAPrioritizedList"))
    assert _supported_messages(dev.cluster.kubernetes_version, datetime.date(2026, 12, 1)) == []


# --------------------------------------------------------------------------------------------- the target cluster


def test_a_stack_is_judged_as_one_target() -> None:
    """Render, migrate, explain --stack, doctor and the pack read a stack's cluster through `StackConfig.target`: its
    version, platform, declared gates and pinned driver release, the config's text read into the facts' enums."""
    prod = load_stack(ROOT, "prod").config
    assert prod.target == Target(prod.cluster.kubernetes_version, Platform.eks, {},
                                 nvidia.release_level_of(prod.dra_driver.version))
    assert prod.target.label == f"Kubernetes {prod.cluster.kubernetes_version} (eks)"
    lab = Cluster.model_validate({"name": "lab", "platform": "existing", "kubeconfig": {"path": "~/.kube/config"},
                                  "featureGates": {"DRAExtendedResource": True}})
    assert lab.platform is Platform.existing and Target(platform=lab.platform).label == "Kubernetes 1.35 (existing)"
    driver = DraDriver.model_validate({"chart": "nvidia-dra-driver-gpu", "version": "25.12.0"})
    assert driver.chart is ChartName.nvidia_dra_driver_gpu
    assert load_stack(ROOT, "dev").config.model_copy(update={"cluster": lab}).target.enabled("DRAExtendedResource")


def test_declared_gates_count_on_an_existing_cluster_only() -> None:
    """EKS runs the upstream defaults whatever is declared; an existing cluster's declared gates win, but no gate
    its version lacks."""
    declared = {"DRAExtendedResource": True, "DRAAdminAccess": False, "DRADeviceTaintRules": True}
    existing, on_eks = Target("1.35", Platform.existing, declared), Target("1.35", Platform.eks, declared)
    assert existing.enabled("DRAExtendedResource") and not existing.enabled("DRAAdminAccess")
    assert not on_eks.enabled("DRAExtendedResource") and on_eks.enabled("DRAAdminAccess")
    assert not Target("1.34", Platform.existing, declared).enabled("DRADeviceTaintRules")  # absent in 1.34
    assert [Target(v).taint_rule_gate for v in gates.VERSIONS] == ["DRADeviceTaints"] * 2 + ["DRADeviceTaintRules"] * 3


def test_targets_that_differ_in_a_declared_gate_are_two_cache_keys() -> None:
    """Verdicts are cached per Target (the pack's selector lint): equal Targets share an entry, a Target declaring
    a gate otherwise does not."""
    on, off = ({"DRAPartitionableDevices": value} for value in (True, False))
    same = Target("1.35", Platform.existing, dict(on))
    assert {Target("1.35", Platform.existing, on), same} == {same}
    assert len({Target("1.35", Platform.existing, on), Target("1.35", Platform.existing, off),
                Target("1.35", Platform.eks, on), Target("1.36", Platform.existing, on)}) == 4


@pytest.mark.parametrize("stack", STACKS)
def test_every_repo_stack_is_in_standard_support_outside_the_warning_window(stack: str) -> None:
    version = load_stack(ROOT, stack).config.cluster.kubernetes_version
    assert (SUPPORT_CALENDAR[version].standard_ends - datetime.date(2026, 12, 1)).days > 90, (stack, version)


# --------------------------------------------------------------------------------------------- chart releases


def test_every_chart_line_has_its_releases() -> None:
    assert set(nvidia.CHART_RELEASES) == {c.value for c in ChartName}
    assert DraDriver().version in nvidia_driver.supported_releases(DraDriver().chart)
    for chart in ChartName:
        first = ".".join(map(str, nvidia_driver.CHART_LINES[chart].first_supported))
        assert nvidia_driver.supported_releases(chart)[0] == first, chart
    assert nvidia_driver.supported_releases(ChartName.dra_driver_nvidia_gpu) == ["0.4.0", "0.4.1"]
    assert nvidia_driver.supported_releases(ChartName.nvidia_dra_driver_gpu) == ["25.12.0"]


@pytest.mark.parametrize("chart,version,expected", [
    ("dra-driver-nvidia-gpu", "25.12.0", "dra-driver-nvidia-gpu 25.12.0 is not a release of that chart (25.12.0 is a "
     "release of nvidia-dra-driver-gpu: set chart: nvidia-dra-driver-gpu); releases gpu-dra supports: 0.4.0, 0.4.1"),
    ("dra-driver-nvidia-gpu", "0.99.0", "dra-driver-nvidia-gpu 0.99.0 is not a release of that chart; releases "
     "gpu-dra supports: 0.4.0, 0.4.1"),
    ("dra-driver-nvidia-gpu", "9.9.9", "dra-driver-nvidia-gpu 9.9.9 is not a release of that chart; releases gpu-dra "
     "supports: 0.4.0, 0.4.1"),
    ("dra-driver-nvidia-gpu", "0.4.1-rc.1", "dra-driver-nvidia-gpu 0.4.1-rc.1 is not a release of that chart;"),
    ("nvidia-dra-driver-gpu", "0.4.1", "nvidia-dra-driver-gpu 0.4.1 is not a release of that chart (0.4.1 is a "
     "release of dra-driver-nvidia-gpu: set chart: dra-driver-nvidia-gpu); releases gpu-dra supports: 25.12.0"),
    ("nvidia-dra-driver-gpu", "25.8.0", "nvidia-dra-driver-gpu 25.8.0 is older than 25.12.0"),
])
def test_an_unreleased_version_is_the_only_driver_problem(chart: str, version: str, expected: str) -> None:
    """9.9.9 used to read as release 0.1 and report TimeSlicingSettings as arriving in 0.2; an unknown version has no
    known gates, so it is named alone, with the releases to pick from."""
    conflicts = nvidia_driver.gate_conflicts(ChartName(chart), version, {"TimeSlicingSettings": True}, False, [])
    assert len(conflicts) == 1 and conflicts[0][0] == "version" and conflicts[0][1].startswith(expected), conflicts


@pytest.mark.parametrize("chart,version", [("dra-driver-nvidia-gpu", "0.4.0"), ("dra-driver-nvidia-gpu", "v0.4.1"),
                                           ("nvidia-dra-driver-gpu", "25.12.0")])
def test_a_supported_release_passes(chart: str, version: str) -> None:
    assert nvidia_driver.gate_conflicts(ChartName(chart), version, {"TimeSlicingSettings": True}, False, []) == []


@pytest.mark.parametrize("stack", STACKS)
def test_every_repo_stack_pins_a_supported_release(stack: str) -> None:
    driver = load_stack(ROOT, stack).config.dra_driver
    assert driver.version in nvidia_driver.supported_releases(driver.chart)
