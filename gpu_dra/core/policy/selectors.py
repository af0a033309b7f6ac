"""Rules on DRA selectors and claims: they compile, avoid what never matches, name existing classes, and can be
allocated on the stack's fleet without a CEL runtime error; a MIG class only where the fleet has MIG devices."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping, Sequence
from functools import lru_cache

from gpu_dra.core.analysis.explain import (
    CEL_COMPILE,
    CEL_RUNTIME,
    MISSING_CLASS,
    ClaimReport,
    Explainer,
)
from gpu_dra.core.analysis.features import features_for
from gpu_dra.core.analysis.inventory import Device, GroupSpec, synthesize_groups
from gpu_dra.core.checks.lint import SelectorContext, lint_selector
from gpu_dra.core.checks.manifest_lint import selector_sites
from gpu_dra.core.data import mapping, plain
from gpu_dra.core.dra.cel import CompileError, check_selector, compile_selector, device_view, evaluate
from gpu_dra.core.dra.cel.lexer import device_lookups, tokenize
from gpu_dra.core.dra.claims import DeviceClass, ResourceClaim, claims_from_objects, classes_from_objects
from gpu_dra.core.facts import nvidia
from gpu_dra.core.facts.labels import ALLOCATION_LABEL
from gpu_dra.core.facts.target import Platform, Target
from gpu_dra.core.findings import Finding
from gpu_dra.core.policy.resources import (
    RESOURCE_TYPES,
    Context,
    EngineNodeGroup,
    Resource,
    dra_object_of,
    dra_objects,
    error,
    node_groups,
    not_judged,
    stack_of,
    unknown_objects,
)
from gpu_dra.core.yamlsource import format_path


@lru_cache(maxsize=4096)
def _compile_problem(expression: str, consumable_capacity: bool, list_type_attributes: bool) -> CompileError | None:
    """What check_selector refuses in a selector, or None: once per selector and environment, since the teams' and
    the chart's selectors repeat on every stack a check runs over, and two rules read them."""
    try:
        check_selector(expression, consumable_capacity=consumable_capacity, list_type_attributes=list_type_attributes)
    except CompileError as problem:
        return problem
    return None


@lru_cache(maxsize=4096)
def _linted(expression: str, context: SelectorContext) -> tuple[Finding, ...]:
    return tuple(lint_selector(expression, context))


def _lint(expression: str, context: SelectorContext) -> list[Finding]:
    """lint_selector's findings, once per selector and context."""
    return list(_linted(expression, context))


def dra_cel_compiles(resource: Resource, context: Context) -> list[Finding]:
    obj, skipped = dra_object_of("dra-cel-compiles", resource)
    consumable, list_types = (context.target.enabled(gate) for gate in ("DRAConsumableCapacity",
                                                                        "DRAListTypeAttributes"))
    out = skipped
    for path, expression, _ in selector_sites(obj):
        problem = _compile_problem(expression, consumable, list_types)
        if problem is not None and problem.kind != "unsupported":
            # "unsupported" is accepted by the API server; dra-cel-lint says it went unchecked
            out.append(error("dra-cel-compiles", f"the API server would reject this selector: {problem.message}",
                             resource, format_path(path)))
    return out


def _conjunction(expressions: Sequence[str]) -> str:
    return " && ".join(f"({e})" for e in expressions)


def _lint_request(expression: str, class_selectors: Sequence[str], lint_context: SelectorContext) -> list[Finding]:
    """A request's selector sees only the devices its class admits (the class's selectors run first): lint it behind
    them, less what they say on their own, which dra-cel-lint reports on the class."""
    behind = [e for e in class_selectors if tokenize(e) is not None]
    if not behind:
        return _lint(expression, lint_context)
    own = set(_lint(_conjunction(behind), lint_context))
    return [f for f in _lint(_conjunction([*behind, expression]), lint_context) if f not in own]


def dra_cel_lint(resource: Resource, context: Context) -> list[Finding]:
    obj, out = dra_object_of("dra-cel-lint", resource)
    for path, expression, device_class in selector_sites(obj):
        where = format_path(path)
        problem = _compile_problem(expression, True, True)
        if problem is not None and problem.kind == "unsupported":
            out.append(error("dra-cel-lint", problem.message, resource, where, check="cel-unsupported"))
        lint_context = SelectorContext(class_selector=device_class is None, target=context.target)
        if device_class is None:
            lints = _lint(expression, lint_context)
        else:
            behind = (context.device_classes or {}).get(device_class) or nvidia.CHART_CLASS_SELECTORS.get(
                device_class, [])
            lints = _lint_request(expression, behind, lint_context)
        out += [error("dra-cel-lint", lint.message, resource, where, lint.fix, check=lint.rule) for lint in lints]
    return out


def dra_device_class_exists(resource: Resource, context: Context) -> list[Finding]:
    if resource.type not in (RESOURCE_TYPES["ResourceClaim"], RESOURCE_TYPES["ResourceClaimTemplate"]):
        return []
    claim, out = dra_object_of("dra-device-class-exists", resource)
    if not isinstance(claim, ResourceClaim):
        return out
    if context.device_classes is None:
        return [not_judged("dra-device-class-exists", resource, "the pack config names no deviceClasses (write it "
                                                                "with `gpu-dra check --stack S --pack-config`)")]
    for request in claim.requests:
        for choice in request.choices:
            name = choice.device_class
            if name and name not in context.device_classes and not nvidia.is_chart_device_class(name):
                out.append(error(
                    "dra-device-class-exists", f"device class {name!r} is neither declared by the stack nor "
                    "installed by the chart; the pod would stay Pending ('device class ... does not exist')",
                    resource, format_path((*choice.path, "deviceClassName")),
                    "declare it under deviceClasses, or name one of the chart's: "
                    + ", ".join(nvidia.CHART_DEVICE_CLASSES)))
    return out


def _fleet_specs(groups: list[EngineNodeGroup], unknown_groups: list[Resource], context: Context) -> list[GroupSpec]:
    """The GPU node groups the stack creates and the nodes its Karpenter NodePools may launch or, on an existing
    cluster (no node group resources), the node pools the pack config declares: the fleet `gpu-dra explain --stack S`
    synthesizes too (inventory.synthesize)."""
    if not groups and not unknown_groups:
        return context.pool_specs() + context.launched_specs()
    return [GroupSpec(g.name, g.instance_types[0] if g.instance_types else "", g.max_size,
                      g.labels.get(ALLOCATION_LABEL) == "dra") for g in groups] + context.launched_specs()


def explain_on_fleet(rule: str, resources: list[Resource], context: Context
                      ) -> tuple[list[tuple[str, ClaimReport, Resource | None]], list[Finding]]:
    """(claim, report, resource) for every claim and template on the fleet synthesized from the known GPU node groups
    (while a group is unknown, only those that fleet allocates or that raise errors), and what could not be judged."""
    groups, unknown_groups = node_groups(resources)
    objects = dra_objects(resources)
    what = "labels, instanceTypes (or its launch template's instanceType), scalingConfig or taints"
    skipped = [not_judged(rule, r, "node group", r.unknown or (what,))
               for r in unknown_groups] + unknown_objects(rule, objects, "claims and classes")
    known = [r for r in objects if not r.unknown]
    specs = _fleet_specs(groups, unknown_groups, context)
    target = context.target
    stack = json.dumps([[dataclasses.asdict(g) for g in specs], [plain(r.props) for r in known],
                        [target.kubernetes_version, target.platform.value, dict(target.feature_gates),
                         list(target.driver_level)], target.enabled("DRAConsumableCapacity")])
    by_name = {r.label.split(" ", 1)[1]: r for r in known}
    reports = [(claim, report, by_name.get(claim)) for claim, report in _fleet_reports(stack)]
    if unknown_groups:
        # A claim the known groups cannot allocate may fit an unknown one (a Capacity Block group's instance type is
        # unknown with its new launch template's id): not judged, as the groups' own findings say. Errors raised on
        # the known groups' devices stand.
        reports = [(claim, report, resource) for claim, report, resource in reports if report.allocatable
                   or report.errors]
    return reports, skipped


@lru_cache(maxsize=2)
def _fleet_reports(stack: str) -> tuple[tuple[str, ClaimReport], ...]:
    """Every claim explained on the fleet synthesized from the node groups: the costliest thing the pack does, which
    dra-claim-satisfiable and dra-selector-safe-on-fleet both read. Memoised on everything it depends on, as JSON
    (the groups, the DRA objects, the driver release, the consumable-capacity gate), so that the two share one
    explanation per stack, also under the engine, which hands each policy its own copy of the resources. The
    allocator is the one of the stack's Kubernetes version, as `gpu-dra explain --stack` runs it."""
    groups, objects, (version, platform, gates, level), consumable = json.loads(stack)
    target = Target(version, Platform(platform), gates, (level[0], level[1]))
    fleet = synthesize_groups([GroupSpec(**group) for group in groups], target.driver_level)
    if not fleet.devices:
        return ()
    explainer = Explainer(classes_from_objects(objects), consumable, features_for(target))
    return tuple((claim.name, explainer.explain(claim, fleet)) for claim in claims_from_objects(objects))


def _explain_command(claim: str, resource: Resource | None) -> str:
    return f"`gpu-dra explain --stack {stack_of(resource) or '<this stack>'} --claim {claim}`"


# What stops a claim before allocation that another rule reports: dra-cel-compiles (or dra-cel-lint, for what the
# evaluator does not support), dra-selector-safe-on-fleet, dra-device-class-exists. An invalid claim (request fields
# where its API version does not take them) only this rule sees, so it still reports that.
_REPORTED_ELSEWHERE = frozenset({CEL_COMPILE, CEL_RUNTIME, MISSING_CLASS})


def dra_claim_satisfiable(resources: list[Resource], context: Context) -> list[Finding]:
    reports, out = explain_on_fleet("dra-claim-satisfiable", resources, context)
    for claim, report, resource in reports:
        if report.allocatable or any(e.rule in _REPORTED_ELSEWHERE for e in report.errors):
            continue
        out.append(error("dra-claim-satisfiable", f"claim template {claim} cannot be allocated on any GPU node of "
                         f"this stack ({_fleet_words(context)}): {report.reason}", resource,
                         fix=f"run {_explain_command(claim, resource)} for every device's reason"))
    return out


def _fleet_words(context: Context) -> str:
    """What the stack's fleet is made of, and what a claim it cannot serve means for the NodePools' provisioner (one
    per stack: Auto Mode stands alone)."""
    pools = context.launched_pools
    if not pools:
        return "its node groups at max size"
    never = (f"its NodePools' instance types at their node limits, so {pools[0].provisioner} would never launch a "
             "node for it")
    return never if pools[0].auto_mode else f"its node groups at max size and {never}"


def dra_selector_safe_on_fleet(resources: list[Resource], context: Context) -> list[Finding]:
    reports, out = explain_on_fleet("dra-selector-safe-on-fleet", resources, context)
    return out + [error("dra-selector-safe-on-fleet", f"{problem.message}: raised on devices this stack's node "
                        "groups publish; one such error blocks every pod using the claim", resource,
                        path=_raising_selector(report, problem, resource),
                        fix=f"guard the lookup; run {_explain_command(claim, resource)} for the devices it raises on")
                  for claim, report, resource in reports for problem in report.errors if problem.rule == CEL_RUNTIME]


_CLAIM_SELECTOR = re.compile(r"^claim \S+: selector #(\d+):")


def _raising_selector(report: ClaimReport, problem: Finding, resource: Resource | None) -> str:
    """The rendered path of the claim's own selector a runtime error came from (as lint names it, so that check
    points at the selector's line); "" for a DeviceClass's selector, or a firstAvailable alternative's."""
    selector = _CLAIM_SELECTOR.match(problem.message)
    if selector is None or resource is None:
        return ""
    requests = mapping(mapping(mapping(mapping(resource.props).get("spec")).get("spec")).get("devices")).get(
        "requests")
    rendered = [r.get("name") for r in requests or () if isinstance(r, Mapping)]
    aborted = f"aborts the claim: {problem.message}"
    for request in report.requests:
        if aborted in request.rejected and request.name in rendered:
            return (f"spec.spec.devices.requests[{rendered.index(request.name)}].exactly.selectors"
                    f"[{selector.group(1)}].cel.expression")
    return ""


# What marks a selector as one for MIG devices: comparing the driver's `type` with 'mig', or reading what only MIG
# devices publish (nvidia.published_attributes and published_capacity: profile, parentUUID, multiprocessors, ...).
_MIG_TYPE = re.compile(r"""\.type\s*==\s*(['"])mig\1|(['"])mig\2\s*==\s*device\.attributes\[[^]]*\]\.type""")


def _mig_selector(device_class: DeviceClass, level: tuple[int, int]) -> int | None:
    """The index of the class's first selector that asks for MIG devices, or None."""
    attributes = nvidia.published_attributes(level, "mig") - nvidia.published_attributes(level, "gpu")
    capacity = nvidia.published_capacity("mig") - nvidia.published_capacity("gpu")
    for index, expression in enumerate(device_class.selectors):
        tokens = tokenize(expression)
        lookups = device_lookups(tokens) if tokens is not None else []
        if _MIG_TYPE.search(expression) or any(
                lookup.domain == nvidia.DRIVER_NAME and lookup.name in (
                    attributes if lookup.map == "attributes" else capacity) for lookup in lookups):
            return index
    return None


def _admits(selectors: Sequence[str], device: Device) -> bool | None:
    """Whether every selector is true on the device; None when one does not compile (dra-cel-compiles says so)."""
    view = device_view(device.driver, device.attributes, device.capacity, device.allow_multiple_allocations)
    for expression in selectors:
        try:
            compiled = compile_selector(expression, consumable_capacity=True, check_cost=False)
        except CompileError:
            return None
        if not evaluate(compiled, view).matches:  # a runtime error admits no device (the allocator even aborts)
            return False
    return True


def dra_mig_class_servable(resources: list[Resource], context: Context) -> list[Finding]:
    """A DeviceClass the stack declares for MIG devices, judged on the fleet its GPU node groups make
    (inventory.synthesize_groups): every device of a class must come from some node, and the synthesized fleet
    publishes whole GPUs only, because nothing gpu-dra deploys partitions a GPU. Static MIG needs the partitions
    made on the node before the DRA kubelet plugin starts (the driver publishes what it finds: `type: mig`,
    `profile`, `parentUUID`; docs/sources.md#published-attributes), and gpu-dra turns no GPU's MIG mode on. The
    other way, the driver's DynamicMIG gate, is alpha, off by default and needs the Kubernetes gate
    DRAPartitionableDevices (docs/sources.md#driver-feature-gates): with it on, the driver creates MIG devices the
    fleet does not model, and the rule stays silent. The chart's own mig.nvidia.com is left alone (every install
    has it); claims asking for it are dra-claim-satisfiable's."""
    rule = "dra-mig-class-servable"
    classes = [r for r in resources if r.type == RESOURCE_TYPES["DeviceClass"] and not r.rendered_by_chart]
    out = unknown_objects(rule, classes, "DeviceClasses")
    level = context.target.driver_level
    mig = [(r, r.dra_object, index) for r in classes if isinstance(r.dra_object, DeviceClass)
           and (index := _mig_selector(r.dra_object, level)) is not None]
    if not mig or (context.driver_gates.get("DynamicMIG") and context.target.enabled("DRAPartitionableDevices")):
        return out
    groups, unknown_groups = node_groups(resources)
    if unknown_groups:
        return out + [not_judged(rule, r, "node group", r.unknown or ("labels, instanceTypes or scalingConfig",))
                      for r in unknown_groups]
    fleet = synthesize_groups(_fleet_specs(groups, unknown_groups, context), level)
    shapes = {device.shape: device for device in fleet.devices}.values()
    for resource, device_class, index in mig:
        admitted = [_admits(device_class.selectors, device) for device in shapes]
        if None in admitted or any(admitted):
            continue
        out.append(error(
            rule, f"{resource.label} asks for MIG devices, and no GPU node group of this stack publishes any: "
            "nothing here partitions a GPU, so its nodes publish whole GPUs only, and claims or extended-resource "
            "requests for this class stay Pending", resource, format_path(device_class.selector_paths[index]),
            "drop the class (and its legacyMappings entry); to serve MIG, partition the GPUs on the node before the "
            "DRA kubelet plugin starts (static MIG) and set this rule's enforcement to advisory for that stack, or "
            "turn on the driver's DynamicMIG gate (alpha; needs DRAPartitionableDevices)"))
    return out
