"""What `gpu-dra upgrade` says, as plain values: one report per stack and change, its sections in the order a
platform engineer reads them, and the findings (core.findings.Finding) that make it fail."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from gpu_dra.core.findings import ERROR, WARNING, Finding

# The rules an upgrade's findings carry, with their severity and what each says (the SARIF rules).
RULES = {
    "upgrade-refused": (ERROR, "the stack file is refused at the target version"),
    "upgrade-support": (WARNING, "a version leaves EKS standard support, or has left it"),
    "upgrade-mapping": (WARNING, "a DeviceClass's extendedResourceName starts routing legacy pods to DRA devices"),
    "upgrade-field": (WARNING, "a field the API server dropped is kept at the target, or the reverse"),
    "upgrade-verdict": (ERROR, "a claim template's verdict or devices change at the target"),
    "upgrade-workload": (ERROR, "a legacy workload is left with nowhere to run at the target, or served another way"),
    "upgrade-api": (ERROR, "a manifest uses an API version the target does not serve"),
    "upgrade-driver": (WARNING, "the driver release changes gates, values or DeviceClasses the stack uses"),
    "upgrade-karpenter": (WARNING, "the Karpenter release changes which instance types serve a template"),
}


# Where each kind of upgrade's facts come from (docs/sources.md sections; Karpenter's metadata: its vendoring notes).
SOURCES = {
    "kubernetes": ("docs/sources.md#versions-and-support-calendar", "docs/sources.md#feature-gates-per-version",
                   "docs/sources.md#the-structured-allocator", "docs/sources.md#api-versions-served"),
    "driver": ("docs/sources.md#chart-lines", "docs/sources.md#chart-values", "docs/sources.md#driver-feature-gates",
               "docs/sources.md#published-attributes"),
    "karpenter": ("tests/data/karpenter/SOURCES.md",),
}


def finding(rule: str, message: str, *, error: bool | None = None, fix: str | None = None, file: str = "",
            line: int | None = None, object: str = "", path: str = "") -> Finding:
    """A finding of an upgrade rule, at the rule's severity unless `error` says otherwise."""
    severity = RULES[rule][0] if error is None else ERROR if error else WARNING
    return Finding(rule, severity, message, fix=fix, file=file, line=line, object=object, path=path)


@dataclass(frozen=True)
class Change:
    """One upgrade of a stack: what moves (kubernetes, driver or karpenter), from and to which version, and the key
    of the stack file that says it."""

    what: str
    current: str
    target: str
    key: tuple[str, ...]  # e.g. ("cluster", "kubernetesVersion") under gpu-dra:

    @property
    def label(self) -> str:
        names = {"kubernetes": "Kubernetes", "driver": "the DRA driver chart", "karpenter": "Karpenter"}
        return f"{names[self.what]} {self.current} -> {self.target}"


@dataclass(frozen=True)
class SupportWindow:
    """A version's EKS support as of the day judged."""

    version: str
    standard_ends: str  # ISO dates; "" where the calendar has no row
    extended_ends: str
    state: str  # "standard support (N days left)", "extended support since ...", "past extended support", ...
    price_per_hour: str  # USD per cluster-hour today
    source: str


@dataclass(frozen=True)
class GateSwitch:
    """A DRA feature gate whose state differs between the two versions, and what that changes for the stack."""

    gate: str
    before: str  # "alpha, off", "beta, on", "absent"
    after: str
    turns_on: bool
    changes: str
    effects: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Verdict:
    """A claim template's verdict on the stack's fleet at one version."""

    allocatable: bool
    nodes: tuple[str, ...]
    devices: tuple[str, ...]  # the first solution's node/device names
    reason: str
    provisioning: str = ""  # where it fits NodePools' nodes not launched yet: the provisioner's verdict
    never_provisioned: bool = False  # it fits only such nodes, and none would ever be launched for it

    @property
    def usable(self) -> bool:
        return self.allocatable and not self.never_provisioned

    def words(self) -> str:
        if not self.allocatable:
            return f"NOT allocatable: {self.reason}"
        devices = f" ({', '.join(self.devices)})" if self.devices else ""
        if self.never_provisioned:
            return f"allocatable only on nodes never launched for it ({self.provisioning})"
        provisioning = f"; {self.provisioning}" if self.provisioning else ""
        return f"allocatable on {len(self.nodes)} node(s){devices}{provisioning}"


@dataclass(frozen=True)
class VerdictChange:
    claim: str  # namespace/template
    team: str
    before: Verdict
    after: Verdict


@dataclass(frozen=True)
class WorkloadMove:
    """A legacy workload whose place differs at the target: served by another way, or stranded."""

    workload: str
    where: str  # file:line
    file: str
    line: int | None
    before: str
    after: str
    stranded: bool  # no place at the target, where it had one
    placed: bool  # a place at the target, where it had none


@dataclass(frozen=True)
class ApiUse:
    api_version: str
    kind: str
    name: str
    where: str
    removed_in: str
    replacement: str


@dataclass(frozen=True)
class Step:
    """One step of the upgrade in the order it must happen."""

    what: str
    why: str = ""


@dataclass
class UpgradeReport:
    stack: str
    change: Change
    today: str
    calendar: list[SupportWindow] = field(default_factory=list)
    gates: list[GateSwitch] = field(default_factory=list)
    verdicts: list[VerdictChange] = field(default_factory=list)
    unchanged: int = 0  # claim templates whose verdict and devices stay
    workloads: list[WorkloadMove] = field(default_factory=list)
    workloads_judged: int = 0
    apis: list[ApiUse] = field(default_factory=list)
    driver: list[str] = field(default_factory=list)  # what a chart release changes, one line each
    karpenter: list[str] = field(default_factory=list)
    order: list[Step] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def sources(self) -> tuple[str, ...]:
        """Where the report's facts come from (no EKS calendar where it judged none: an existing cluster)."""
        return tuple(s for s in SOURCES[self.change.what] if self.calendar or "calendar" not in s)

    @property
    def breaks(self) -> bool:
        return any(f.severity == ERROR for f in self.findings)

    def as_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["change"] = {**data["change"], "key": "gpu-dra:" + ".".join(self.change.key)}
        data["breaks"] = self.breaks
        data["sources"] = list(self.sources)
        return data
