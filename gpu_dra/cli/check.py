"""`gpu-dra check`: the policy pack offline, through pulumi-policy's own analyzer service.

The program runs under mocks; its registrations become the requests the Pulumi engine would send
(`gpu_dra.core.policy.engine`: remote components with no inputs, their children, outputs after the run), and
the pack's policies answer them in pulumi_policy's `_PolicyAnalyzerServicer`, configured with the stack's pack
config as `--policy-pack-config` configures it: Analyze for each resource's inputs, AnalyzeStack for the outputs.
So the offline gate and `pulumi preview --policy-pack` run one rule set on one shape. Each finding is placed on the
stack or team file line that caused it, for the text, JSON and SARIF outputs.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import multiprocessing
import re
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from google.protobuf import json_format, struct_pb2
from pulumi.runtime.proto import analyzer_pb2
from pulumi_policy import EnforcementLevel
from pulumi_policy import policy as policy_module
from pulumi_policy.policy import _PolicyAnalyzerServicer

from gpu_dra import __version__
from gpu_dra.cli.base_ref import mapped_classes_at, namespaces_at, templates_at, versions_at
from gpu_dra.cli.inputs import input_files, read_inputs
from gpu_dra.cli.offline import ProgramRun, run_program
from gpu_dra.cli.process import UsageError
from gpu_dra.cli.text import SARIF_SCHEMA
from gpu_dra.core import policy
from gpu_dra.core.analysis import upgrade
from gpu_dra.core.analysis.migrate import MigrateError, read_workloads
from gpu_dra.core.config.loader import (
    LoadedStack,
    SourceFile,
    TeamFiles,
    build_loaded_stack,
    stack_values,
    team_file,
)
from gpu_dra.core.config.models import Stack, Team
from gpu_dra.core.config.queue_rules import mapped_classes, queued_teams
from gpu_dra.core.dra.claims import parse_device_class
from gpu_dra.core.facts.pulumi_types import CHART
from gpu_dra.core.facts.target import Platform
from gpu_dra.core.findings import CONFIG, ERROR, NOT_JUDGED, WARNING, ConfigError, Finding
from gpu_dra.core.policy import queues as queue_rules
from gpu_dra.core.policy import upgrades as upgrades_rules
from gpu_dra.core.policy.engine import EngineResource, Registered, engine_view
from gpu_dra.core.policy.legacy_workloads import (
    NamedManifest,
    WorkloadsEntry,
    needing_device_plugin,
    queued_entries,
    read_named,
)
from gpu_dra.core.render import charts, manifests, names
from gpu_dra.core.workers import leave_signals_to_the_parent, signals_held, start_method
from gpu_dra.policypack import collecting, policies, violation_message

_PROTO_LEVELS = {policy.ADVISORY: analyzer_pb2.ADVISORY, policy.MANDATORY: analyzer_pb2.MANDATORY,
                 "disabled": analyzer_pb2.DISABLED}


@dataclass(frozen=True)
class StackFinding:
    """A finding of one stack's check (with `file` and `line` set) and how it is enforced there: mandatory,
    advisory, or NOT_JUDGED for a check skipped on an unknown value.

    Stack and enforcement are facts of the run, not of the rule, so they sit beside the Finding rather than in it.
    """

    stack: str
    enforcement: str
    finding: Finding


def _named_manifests(root: Path, stack: Stack, teams: Mapping[str, SourceFile]) -> Iterator[NamedManifest]:
    """The manifests the stack's teams name (`workloads:` in their files), read one at a time in the order they are
    named: a folder's files recursively, as `gpu-dra migrate` reads one. A manifest that cannot be read, lies
    outside the repository or is named twice is a config error on the team file's line."""
    base = root.resolve()
    named: dict[Path, WorkloadsEntry] = {}  # each manifest -> the entry naming it
    for team in stack.teams:
        source = teams[team.name]
        for index, path in enumerate(team.workloads):
            entry = WorkloadsEntry(team.name, source.file, index, source.located.line(("workloads", index)))
            try:
                files = [Path(f).resolve() for f in input_files([str(root / path)])]
            except UsageError as error:
                raise entry.refused(str(error)) from None
            for file in files:
                if not file.is_relative_to(base):
                    raise entry.refused(f"{file}: outside the repository (a link?); name the manifests inside it")
                if file in named:
                    other = named[file]
                    raise entry.refused(f"{file.relative_to(base)} is named already by team {other.team} "
                                        f"({other.team_file}:{other.line}): name each manifest once")
                named[file] = entry
                try:
                    ((read_as, documents),) = read_inputs([str(file)])
                except UsageError as error:
                    raise entry.refused(str(error)) from None
                yield NamedManifest(entry, str(file.relative_to(base)), read_as, documents)


def _read_team_files(root: Path, stack: Stack) -> dict[str, SourceFile]:
    """The stack's team files, read for a caller that kept only the Stack of the loader (build_loaded_stack keeps
    them)."""
    files = TeamFiles()
    shown = {team.name: str(team_file(root, team.name).relative_to(root)) for team in stack.teams}
    return {name: SourceFile(file, files.read(root / file, file)) for name, file in shown.items()}


def pack_config(stack: Stack, root: Path | None = None, team_files: Mapping[str, SourceFile] | None = None,
                namespaces_before: list[dict[str, Any]] | None = None,
                upgrades: list[dict[str, Any]] | None = None,
                replaced: list[dict[str, Any]] | None = None,
                mapping_change: dict[str, Any] | None = None) -> dict[str, Any]:
    """Per-policy config for `--policy-pack-config`: each rule's enforcement and the stack facts no resource
    carries in the engine (the Chart component has no inputs or outputs there; the cluster's version sits on a child
    a resource policy of a DeviceClass cannot see; the workloads teams name live in files, not in the stack).
    `root`: the project, where the team files' workloads are read (without it, none are); `team_files`: the team
    files as the loader read them (LoadedStack.teams; without them, they are read again); `namespaces_before`: the
    teams' namespaces at the base of the change (base_ref.namespaces_at), for team-namespace-kept; `upgrades`: what
    moving the stack's versions since that base does (upgrades_since), for upgrade-safe and upgrade-reported."""
    config = stack.config
    values = charts.dra_chart_values(config)
    classes = [parse_device_class(obj) for obj in manifests.stack_device_classes(stack)]
    context: dict[str, Any] = {
        "kubernetesVersion": config.cluster.kubernetes_version,
        "platform": config.cluster.platform.value,
        "environment": config.environment.value,
        "chart": config.dra_driver.chart.value,
        "chartVersion": config.dra_driver.version,
        "driverGates": dict(values.get("featureGates") or {}),
        "chartValues": {key: values[key] for key in ("gpuResourcesEnabledOverride", "nvidiaDriverRoot")
                        if key in values},
        "deviceClasses": {c.name: list(c.selectors) for c in classes if c is not None},
    }
    if config.cluster.platform is Platform.existing and config.cluster.feature_gates:
        context["featureGates"] = dict(config.cluster.feature_gates)
    if config.karpenter:
        # The nodes Karpenter may launch are no resource either (its NodePools say what may be launched, not what is).
        context["karpenter"] = {"version": config.karpenter.version, "nodePools": [
            {"name": pool.name, "instanceTypes": list(pool.instance_types), "maxNodes": pool.max_nodes,
             "dra": pool.allocation_mode.value == "dra"} for pool in config.karpenter.node_pools]}
    if config.auto_mode:
        context["autoMode"] = {"nodePools": [
            {"name": pool.name, "instanceTypes": list(pool.instance_types), "maxNodes": pool.max_nodes}
            for pool in config.auto_mode.node_pools]}
    if config.node_pools:
        # An existing cluster's GPU nodes are no resource of the stack: the fleet rules read them from here.
        context["nodePools"] = [{
            "name": pool.name, "instanceType": pool.instance_type or "", "gpuModel": pool.gpu_model or "",
            "gpus": pool.gpu_count or 0, "maxNodes": pool.nodes, "dra": pool.allocation_mode.value == "dra",
            "labels": pool.labels,
            "taints": [{"key": t.key, "value": t.value, "effect": t.effect.value} for t in pool.taints],
        } for pool in config.node_pools]
    sections = {rule.name: {"enforcementLevel": policy.default_enforcement(rule, config.environment.value),
                            **context} for rule in policy.RULES}
    if root is not None:
        teams = team_files if team_files is not None else _read_team_files(root, stack)
        named = read_named(stack, _named_manifests(root, stack, teams))
        if workloads := needing_device_plugin(stack, named):  # only the rule that places them reads them
            sections[policy.migration.RULE]["legacyWorkloads"] = workloads
        if never_admitted := queued_entries(stack, named):
            sections[queue_rules.WORKLOADS]["queuedWorkloads"] = never_admitted
    sections["admin-access-restricted"]["adminNamespaces"] = sorted(t.namespace_name for t in stack.teams if t.admin)
    replaceable = [group.name for group in config.node_groups if group.allow_replacement]
    if replaceable:
        sections["eks-hardening"]["allowReplacement"] = replaceable
    kept = sections[policy.namespaces.RULE]
    kept["protectTeamNamespaces"] = config.protects_team_namespaces
    if namespaces_before is not None:
        kept["namespacesBefore"] = namespaces_before
    if upgrades:
        for rule in (upgrades_rules.SAFE, upgrades_rules.REPORTED):
            sections[rule]["upgradeFindings"] = upgrades
    queued = [f"{team.namespace_name}/{t.name}" for team in queued_teams(config, stack.teams)
              for t in team.claim_templates if any(r.match is not None or r.selectors for r in t.requests)]
    if queued:
        sections[queue_rules.DEVICES]["queuedTemplates"] = queued
    if replaced:
        sections[queue_rules.REPLACED]["replacedTemplates"] = replaced
    if mapping_change:
        sections[queue_rules.MAPPINGS]["mappingChange"] = mapping_change
    if stack.platform_keys:
        sections["team-file-platform-keys"]["platformKeys"] = [
            {"team": k.team, "teamFile": k.file, "line": k.line, "key": k.key} for k in stack.platform_keys]
    return sections


def _struct(values: Any) -> struct_pb2.Struct:
    out = struct_pb2.Struct()
    out.update(dict(values))
    return out


def _options(resource: EngineResource) -> analyzer_pb2.AnalyzerResourceOptions:
    return analyzer_pb2.AnalyzerResourceOptions(protect=resource.protect, parent=resource.parent)


def analyze_request(resource: EngineResource) -> analyzer_pb2.AnalyzeRequest:
    """What the engine sends a resource policy: the resource's inputs (step_generator.go analyzeAll)."""
    return analyzer_pb2.AnalyzeRequest(type=resource.type, name=resource.name, urn=resource.urn,
                                       properties=_struct(resource.inputs), options=_options(resource))


def analyze_stack_request(resources: Sequence[EngineResource]) -> analyzer_pb2.AnalyzeStackRequest:
    """What the engine sends the stack policies: every resource's outputs, with parent links."""
    return analyzer_pb2.AnalyzeStackRequest(resources=[analyzer_pb2.AnalyzerResource(
        type=r.type, name=r.name, urn=r.urn, properties=_struct(r.outputs), options=_options(r), parent=r.parent)
        for r in resources])


def configure_request(config: dict[str, Any]) -> analyzer_pb2.ConfigureAnalyzerRequest:
    """`--policy-pack-config` as the engine hands it to the pack: each policy's level and properties."""
    request = analyzer_pb2.ConfigureAnalyzerRequest()
    for rule, section in config.items():
        section = {"enforcementLevel": section} if isinstance(section, str) else section  # {"<rule>": "<level>"}
        properties = {k: v for k, v in section.items() if k != "enforcementLevel"}
        request.policyConfig[rule].CopyFrom(analyzer_pb2.PolicyConfig(
            enforcementLevel=_PROTO_LEVELS[section.get("enforcementLevel", policy.ADVISORY)],
            properties=json_format.ParseDict(properties, struct_pb2.Struct())))
    return request


def analyzer(environment: str) -> _PolicyAnalyzerServicer:
    """The pack as `policies/__main__.py` serves it to the Pulumi CLI, without the gRPC server."""
    return _PolicyAnalyzerServicer("gpu-dra", __version__, policies(environment), EnforcementLevel.ADVISORY)


@dataclass(frozen=True)
class Analysis:
    """The findings of one run of the pack and the engine's view of its responses."""

    findings: list[Finding]
    responses: list[analyzer_pb2.AnalyzeResponse]

    @property
    def diagnostics(self) -> list[analyzer_pb2.AnalyzeDiagnostic]:
        return [d for response in self.responses for d in response.diagnostics]


class _ReadOnce:
    """pulumi_policy's analyzer reads a resource's properties anew for every policy: protobuf to dict, its
    deserialization, its unknown-checking proxy, each a whole copy (pulumi_policy 1.21 policy.py Analyze and
    AnalyzeStack, inside the loop over policies), so 19 copies of every resource, a third of the pack's time. Inside
    `installed`, each of the three runs once per properties message and hands every policy the same result: pure
    functions of the message, which no policy of the pack writes to."""

    def __init__(self) -> None:
        self.dicts: dict[bytes, dict[str, Any]] = {}  # the message serialized -> MessageToDict's result
        self.made: dict[int, tuple[Any, Any]] = {}  # id(argument) -> (argument, result), the argument kept alive

    def MessageToDict(self, message: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N802 - json_format's name
        if args or kwargs:
            return json_format.MessageToDict(message, *args, **kwargs)
        key = message.SerializeToString(deterministic=True)
        if key not in self.dicts:
            self.dicts[key] = json_format.MessageToDict(message)
        return self.dicts[key]

    def __getattr__(self, name: str) -> Any:  # the rest of json_format, as it is
        return getattr(json_format, name)

    def once(self, function: Any) -> Any:
        def made_once(value: Any, *args: Any) -> Any:
            if args:  # another call than the analyzer's (deserialize_properties' proxy_secrets)
                return function(value, *args)
            argument, result = self.made.get(id(value), (None, None))
            if argument is not value:
                result = function(value)
                self.made[id(value)] = (value, result)
            return result
        return made_once

    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        names = ("json_format", "deserialize_properties", "unknown_checking_proxy")
        if not all(hasattr(policy_module, name) for name in names):  # another pulumi_policy: its reads, as they are
            yield
            return
        saved = {name: getattr(policy_module, name) for name in names}
        policy_module.json_format = self
        policy_module.deserialize_properties = self.once(saved["deserialize_properties"])
        policy_module.unknown_checking_proxy = self.once(saved["unknown_checking_proxy"])
        try:
            yield
        finally:
            for name, value in saved.items():
                setattr(policy_module, name, value)


def analyze(resources: Sequence[EngineResource], config: dict[str, Any], environment: str) -> Analysis:
    """Configure, then Analyze every resource, then AnalyzeStack: the calls a preview makes."""
    servicer = analyzer(environment)
    servicer.Configure(configure_request(config), None)
    with collecting() as found, _ReadOnce().installed():
        responses = [servicer.Analyze(analyze_request(r), None) for r in resources]
        responses.append(servicer.AnalyzeStack(analyze_stack_request(resources), None))
    return Analysis(found, responses)


def engine_resources(run: ProgramRun, first_preview: bool = False) -> list[EngineResource]:
    """The program run's resources (gpu_dra.cli.offline.ProgramRun) as the engine would send them."""
    view = engine_view([Registered(r.type, r.name, r.urn, r.parent, r.protect, r.inputs, r.outputs)
                        for r in run.resources], first_preview)
    return transformed(view, any(r.transforms for r in run.resources
                                 if r.type == CHART and r.name == names.DRA_DRIVER_CHART))


def transformed(view: list[EngineResource], chart_transform: bool) -> list[EngineResource]:
    """The DRA chart's rendered objects after the transform the program registers on the chart (components/driver.py
    drop_extended_resource_name): the engine runs it on each child before registering it."""
    if not chart_transform:
        return view
    chart = next(r.urn for r in view if r.type == CHART and r.name == names.DRA_DRIVER_CHART)
    out = []
    for resource in view:
        if resource.parent == chart:
            inputs = charts.without_extended_resource_name(resource.type, resource.inputs)
            outputs = charts.without_extended_resource_name(resource.type, resource.outputs)
            resource = dataclasses.replace(resource, inputs=inputs or resource.inputs,
                                           outputs=outputs or resource.outputs)
        out.append(resource)
    return out


def mappings_since(root: Path, base: str, stack: Stack) -> dict[str, Any] | None:
    """The classes Kueue's configuration maps that the change adds and removes since `base`, or None where none
    change (or the stack runs Kueue neither there nor here)."""
    before = mapped_classes_at(root, base, stack.name)
    now = mapped_classes(stack.config, stack.teams) if stack.config.kueue is not None else None
    if before is None or now is None:  # Kueue installed or removed: no controller to restart
        return None
    added, removed = sorted(set(now) - set(before)), sorted(set(before) - set(now))
    return {"added": added, "removed": removed} if added or removed else None


def replaced_since(root: Path, base: str, loaded: LoadedStack) -> list[dict[str, Any]]:
    """The claim templates of the stack's queued teams (Kueue) whose spec changed since `base` under the same name:
    gpu-dra replaces such a template, and Kueue may charge a workload from the old one (kueue_rules.REPLACED)."""
    before = templates_at(root, base, loaded.stack.name)
    found = []
    for team in queued_teams(loaded.stack.config, loaded.stack.teams):
        source = loaded.teams.get(team.name)
        if source is None or not isinstance(source.located.data, dict):
            continue
        written = source.located.data.get("claimTemplates")
        for index, template in enumerate(written if isinstance(written, list) else []):
            if not isinstance(template, dict):
                continue
            old = before.get((team.name, str(template.get("name"))))
            if old is not None and _spec(old) != _spec(template):
                found.append({"team": team.name, "template": str(template.get("name")), "teamFile": source.file,
                              "line": source.located.line(("claimTemplates", index))})
    return found


def _spec(template: Mapping[str, Any]) -> Any:
    """What Kueue charges of a template as written: per request its class, allocation mode and count (and its
    alternatives'); a selector or a description changes no charge."""
    def charged(request: Any) -> Any:
        if not isinstance(request, Mapping):
            return request
        alternatives = request.get("firstAvailable")
        return (request.get("deviceClass"), request.get("allocationMode", "ExactCount"), request.get("count", 1),
                [charged(a) for a in alternatives] if isinstance(alternatives, list) else None)
    requests = template.get("requests")
    return [charged(r) for r in requests] if isinstance(requests, list) else requests


def upgrades_since(root: Path, base: str, loaded: LoadedStack) -> list[dict[str, Any]]:
    """What moving each version the stack names (Kubernetes, driver chart, Karpenter) from the base's to today's
    does, as `gpu-dra upgrade` judges it, with the team files' workloads: its findings as the pack config carries
    them. A change the cluster cannot follow (a lowered kubernetesVersion, more than one minor at once on EKS) is an
    error; a base version today's rules refuse is said, not judged."""
    name = loaded.stack.name
    found: list[dict[str, Any]] = []
    workloads: tuple[list[Any], list[dict[str, Any]]] | None = None
    for what, version in versions_at(root, base, name).items():
        flag = "--to" if what == "kubernetes" else f"--{what}-to"
        try:
            pair = upgrade.load_since(root, name, what, version)
        except upgrade.UpgradeError as error:
            found.append({"change": f"{what} since {base}", "rule": "upgrade-refused", "message": str(error),
                          "severity": ERROR if isinstance(error, upgrade.CannotFollow) else WARNING,
                          "file": loaded.source.file, "line": upgrade.key_line_of(loaded, what)})
            continue
        if pair is None:
            continue
        if workloads is None:
            named = [(m.path, m.documents) for m in _named_manifests(root, loaded.stack, loaded.teams)]
            try:
                workloads = read_workloads(named, loaded.stack.config.cluster.kubernetes_version)
            except MigrateError:  # the pack config's legacy workloads report it, on the team file's line
                workloads = ([], [])
        report = upgrade.judge(pair, *workloads)
        command = f"on {base}, `gpu-dra upgrade --stack {name} {flag} {pair.change.target}` says the whole upgrade"
        for item in report.findings:
            found.append({"change": f"{pair.change.label} since {base}", "command": command, **item.as_dict()})
    return found


def check_stack(root: Path, name: str, extra_config: dict[str, Any] | None = None, first_preview: bool = False,
                team_files: TeamFiles | None = None, base: str | None = None) -> list[StackFinding]:
    """One stack checked: its pack config, the program run under mocks, the pack's findings each on its line.
    `team_files`: the team files this run has read already (check_stacks shares them between its stacks); `base`: a
    git revision the change is judged against (team-namespace-kept)."""
    values, located = stack_values(root, name)
    loaded = build_loaded_stack(root, name, values, located, team_files)
    stack = loaded.stack
    config = pack_config(stack, root, loaded.teams, None if base is None else namespaces_at(root, base, name),
                         None if base is None else upgrades_since(root, base, loaded),
                         None if base is None else replaced_since(root, base, loaded),
                         None if base is None else mappings_since(root, base, loaded.stack))
    for rule_name, overrides in (extra_config or {}).items():
        config.setdefault(rule_name, {}).update(overrides)
    environment = stack.config.environment.value
    analysis = analyze(engine_resources(run_program(root, name, values, stack), first_preview), config, environment)
    locator = _Locator(loaded)
    verdicts = []
    for finding in analysis.findings:
        level = (NOT_JUDGED if finding.severity == NOT_JUDGED
                 else policy.enforcement(policy.RULES_BY_NAME[finding.rule], environment, config))
        file, line = (finding.file, finding.line) if finding.file else locator.where(finding)
        verdicts.append(StackFinding(name, level, finding.at(file=file, line=line)))
    return verdicts


def check_stacks(root: Path, names: Sequence[str], first_preview: bool = False, jobs: int = 1,
                 base: str | None = None) -> tuple[list[StackFinding], dict[str, list[Finding]]]:
    """Every stack checked, in order: the verdicts of those checked, and the config errors of each one that could not
    be (stack -> its ConfigError's findings).

    `jobs` > 1: that many workers check the stacks while this process takes their results in stack order,
    with what each printed, so the run reads as one process's would. It shortens the wall-clock time where cores are
    idle and costs CPU time: each worker loads the Pulumi SDK modules the program uses (about a second), which it
    cannot take over from a process that has run the program (its gRPC and executor threads do not survive a
    fork). Forked from gpu-dra's CLI; started by a forkserver in a process running threads (a test runner, a program
    that ran the Pulumi program: a fork there deadlocked the worker in gRPC's fork handlers)."""
    found: list[StackFinding] = []
    broken: dict[str, list[Finding]] = {}
    if jobs < 2 or len(names) < 2:
        team_files = TeamFiles()
        for name in names:
            try:
                found += check_stack(root, name, first_preview=first_preview, team_files=team_files, base=base)
            except ConfigError as error:
                broken[name] = error.findings
        return found, broken
    with signals_held():
        pool = multiprocessing.get_context(start_method()).Pool(min(jobs, len(names)),
                                                         initializer=leave_signals_to_the_parent)
    try:
        for name, verdicts, problems, printed, errors in pool.imap(_checked, [(root, name, first_preview, base)
                                                                              for name in names]):
            sys.stdout.write(printed)
            sys.stderr.write(errors)
            if problems is None:
                found += verdicts
            else:
                broken[name] = problems
    finally:
        with signals_held():
            pool.terminate()
    return found, broken


def _checked(job: tuple[Path, str, bool, str | None]) -> tuple[str, list[StackFinding], list[Finding] | None, str,
                                                                str]:
    """A worker's check of one stack: (stack, verdicts, its config errors or None, what it printed on stdout and on
    stderr)."""
    root, name, first_preview, base = job
    printed, errors = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(errors):
        try:
            verdicts, problems = check_stack(root, name, first_preview=first_preview, base=base), None
        except ConfigError as error:
            verdicts, problems = [], error.findings
    return name, verdicts, problems, printed.getvalue(), errors.getvalue()


class _Locator:
    """Map a resource URN back to the stack or team file line that declared it, in the files as the loader read
    them."""

    def __init__(self, loaded: LoadedStack):
        self.stack = loaded.stack
        self.stack_file = loaded.source.file
        self.located = loaded.source.located
        self.teams = loaded.teams

    def _stack_line(self, key: str, *loc: str | int) -> tuple[str, int]:
        line = self.located.line(("config", f"gpu-dra:{key}", *loc)) or self.located.line(("config",)) or 1
        return self.stack_file, line

    def where(self, finding: Finding) -> tuple[str, int]:
        urn = finding.object
        if not urn:  # a finding of the whole stack: Kueue's (its mappings) on gpu-dra:kueue, the rest on environment
            return self._stack_line("kueue" if finding.rule.startswith("kueue-") else "environment")
        type_, name = urn.split("::")[-2].split("$")[-1], urn.split("::")[-1]
        config = self.stack.config
        classes = [c.name for c in config.device_classes]
        groups = [g.name for g in config.node_groups]
        declared = names.declared_by(type_, name, set(self.teams), set(classes), config.cluster.name, set(groups))
        if declared is not None and declared.team:
            file, located = self.teams[declared.team].file, self.teams[declared.team].located
            if declared.kind == "template":
                templates = self._team(declared.team).claim_templates
                index = next((i for i, t in enumerate(templates) if t.name == declared.name), None)
                if index is None:
                    return file, located.line(()) or 1
                # The line of what the finding's path names (a selector, a request), as lint points at it.
                inner = manifests.source_in_template(templates[index], finding.path)
                lines = (located.line(("claimTemplates", index, *inner[:depth]))
                         for depth in range(len(inner), -1, -1))  # a key the file leaves out: the one holding it
                return file, next((line for line in lines if line), None) or 1
            return file, located.line((declared.kind,)) or 1
        if declared is not None and declared.kind == "device-class":
            index = classes.index(declared.name)
            selector = re.match(r"spec\.selectors\[(\d+)\]", finding.path)
            inner = manifests.source_of_selector(config.device_classes[index], int(selector.group(1))) \
                if selector else ()
            return self._stack_line("deviceClasses", index, *inner)
        if declared is not None and declared.kind == "node-group":
            return self._stack_line("nodeGroups", groups.index(declared.name))
        if type_ == CHART or policy.resources.rendered_by_chart(urn):
            return self._driver_line(finding.path)  # the chart, or an object it renders
        # A NodePool (or EC2NodeClass) named <cluster>-<pool>, or the rest of its component
        for component, key, launched in (("gpu-dra:karpenter:Karpenter$", "karpenter", config.karpenter_node_pools),
                                         ("gpu-dra:autoMode:AutoModeNodePools$", "autoMode",
                                          config.auto_mode_node_pools)):
            if component in urn:
                pools = [pool.name for pool in launched]
                pool = name.removeprefix(f"{config.cluster.name}-")
                return self._stack_line(key, *(("nodePools", pools.index(pool)) if pool in pools else ()))
        return self._stack_line("cluster")

    def _driver_line(self, path: str) -> tuple[str, int]:
        """The draDriver key a chart finding's path names (its version or a feature gate), else draDriver."""
        gates = "values.featureGates."
        loc = (("version",) if path == "version" else ("featureGates", path.removeprefix(gates))
               if path.startswith(gates) else None)
        line = self.located.line(("config", "gpu-dra:draDriver", *loc)) if loc else None
        return (self.stack_file, line) if line else self._stack_line("draDriver")

    def _team(self, name: str) -> Team:
        return next(t for t in self.stack.teams if t.name == name)


def as_json(stacks: list[str], found: list[StackFinding],
            broken: Mapping[str, Sequence[Finding]] | None = None) -> dict[str, Any]:
    """Every stack named: its violations and checks not judged, or the config errors that kept it from being
    checked (`broken`: stack -> its ConfigError's findings)."""
    def entry(v: StackFinding) -> dict[str, Any]:
        return {"policy": v.finding.rule, "check": v.finding.check, "enforcement": v.enforcement,
                "resource": v.finding.object, "path": v.finding.path, "message": v.finding.message,
                "fix": v.finding.fix, "file": v.finding.file, "line": v.finding.line}

    broken = broken or {}
    # A config error in the violations' shape (one finding shape for every list): it blocks the stack's check and
    # its `pulumi up` alike, so it is mandatory.
    return {"stacks": [{"stack": stack,
                        "violations": [entry(v) for v in found if v.stack == stack and v.enforcement != NOT_JUDGED],
                        "notJudged": [entry(v) for v in found if v.stack == stack and v.enforcement == NOT_JUDGED],
                        "configErrors": [entry(StackFinding(stack, policy.MANDATORY, f))
                                         for f in broken.get(stack, ())]}
                       for stack in stacks]}


# The SARIF rule of a stack or team file gpu-dra cannot load; its results name the stacks left unchecked.
CONFIG_RULE = {"id": CONFIG, "shortDescription": {"text": "A stack or team file that gpu-dra cannot load or validate: "
                                                          "the stacks that read it are not checked"},
               "defaultConfiguration": {"level": "error"}}


def _locations(finding: Finding) -> list[dict[str, Any]]:
    """Where a code-scanning alert shows: the file, and its line when the finding has one."""
    if not finding.file:
        return []
    location: dict[str, Any] = {"artifactLocation": {"uri": finding.file}}
    if finding.line:
        location["region"] = {"startLine": finding.line}
    return [{"physicalLocation": location}]


def config_results(broken: Mapping[str, Sequence[Finding]]) -> list[dict[str, Any]]:
    """Each config mistake once, on its file and line, naming every stack it stopped: a team file serves several."""
    stacks_of: dict[Finding, list[str]] = {}
    for stack, findings in broken.items():
        for finding in findings:
            stacks_of.setdefault(finding, []).append(stack)
    return [{"ruleId": CONFIG, "level": "error",
             "message": {"text": f"[{', '.join(stacks)}] {violation_message(finding)}"},
             "locations": _locations(finding), "properties": {"stacks": stacks}}
            for finding, stacks in stacks_of.items()]


_SARIF_LEVEL = {policy.MANDATORY: "error", policy.ADVISORY: "warning"}


def as_sarif(found: list[StackFinding], version: str,
             broken: Mapping[str, Sequence[Finding]] | None = None) -> dict[str, Any]:
    """The violations, and the config errors of `broken` stacks, as code-scanning results on their file lines."""
    # A rule's default level is its level in prod, the strictest a stack runs it at (it said "warning" for rules
    # mandatory in prod); each result carries its own stack's level.
    rules = [{"id": rule.name, "shortDescription": {"text": rule.description},
              "defaultConfiguration": {"level": _SARIF_LEVEL[policy.default_enforcement(rule, "prod")]}}
             for rule in policy.RULES]
    results = config_results(broken or {})
    for verdict in found:
        finding = verdict.finding
        if verdict.enforcement == NOT_JUDGED:
            continue  # not a result: nothing was found wrong
        results.append({
            "ruleId": finding.rule,
            "level": "error" if verdict.enforcement == policy.MANDATORY else "warning",
            "message": {"text": f"[{verdict.stack}] {violation_message(finding)}"},
            "locations": _locations(finding),
            "properties": {"stack": verdict.stack, "resource": finding.object, "check": finding.check},
        })
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [{
        "tool": {"driver": {"name": "gpu-dra", "version": version, "rules": [*rules, CONFIG_RULE]}},
        "results": results}]}
