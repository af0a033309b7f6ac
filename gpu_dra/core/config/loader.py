"""Load and validate a stack: `stacks/Pulumi.<stack>.yaml` plus the team files it names.

Every mistake becomes a Finding naming the file, the line, the key path and what is allowed; all of a stack's, in
its file and in its team files, are collected and raised together as one ConfigError, before anything is built.
"""

from __future__ import annotations

import difflib
import json
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from gpu_dra.core.config.models import (
    CONFIG_NAMESPACE,
    MAX_TEMPLATES_PER_STACK,
    PlatformKey,
    Quota,
    Stack,
    StackConfig,
    Team,
    TeamHosting,
)
from gpu_dra.core.config.queue_rules import QueueProblem, queue_problems
from gpu_dra.core.config.stack_rules import STACK_RULES, StackParts
from gpu_dra.core.facts import nvidia, nvidia_driver
from gpu_dra.core.findings import ConfigError, Finding, config_finding, did_you_mean
from gpu_dra.core.yamlsource import Loc, Located, format_path, read_yaml

PREFIX = f"{CONFIG_NAMESPACE}:"
SECRET_PLACEHOLDER = "<secret: not decrypted offline>"
RESERVED_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")


def stack_file(root: Path, stack: str) -> Path:
    return root / "stacks" / f"Pulumi.{stack}.yaml"


def team_file(root: Path, team: str) -> Path:
    return root / "stacks" / "teams" / f"{team}.yaml"


def available_stacks(root: Path) -> list[str]:
    return sorted(p.name[len("Pulumi."):-len(".yaml")] for p in (root / "stacks").glob("Pulumi.*.yaml"))


# --------------------------------------------------------------------------------------------- pydantic errors


def unwrap_annotation(annotation: Any) -> Any:
    """Strip Optional and Annotated so the model (or container) underneath can be walked."""
    while True:
        origin = typing.get_origin(annotation)
        if origin is typing.Annotated:
            annotation = typing.get_args(annotation)[0]
        elif origin in (typing.Union, types.UnionType):
            args = [a for a in typing.get_args(annotation) if a is not type(None)]
            annotation = args[0] if len(args) == 1 else annotation
            if len(args) != 1:
                return annotation
        else:
            return annotation


def _model_at(model: type[BaseModel], loc: Loc) -> type[BaseModel] | None:
    """The model class that validates the object at `loc` (alias names), or None."""
    current: Any = model
    for part in loc:
        current = unwrap_annotation(current)
        if isinstance(current, type) and issubclass(current, BaseModel):
            field = next((f for name, f in current.model_fields.items() if (f.alias or name) == part), None)
            if field is None:
                return None
            current = field.annotation
        elif typing.get_origin(current) in (list, dict):
            current = typing.get_args(current)[-1]
        else:
            return None
    current = unwrap_annotation(current)
    return current if isinstance(current, type) and issubclass(current, BaseModel) else None


def _allowed_keys(model: type[BaseModel]) -> list[str]:
    return [f.alias or name for name, f in model.model_fields.items()]


_MESSAGES = {
    "greater_than_equal": "must be >= {ge} (got {input!r})",
    "less_than_equal": "must be <= {le} (got {input!r})",
    "too_short": "needs at least {min_length} item(s)",
    "too_long": "allows at most {max_length} item(s)",
    "string_pattern_mismatch": "{input!r} does not have the expected form (pattern {pattern})",
    "int_parsing": "must be a whole number (got {input!r})",
    "int_type": "must be a whole number (got {input!r})",
    "int_from_float": "must be a whole number (got {input!r})",
    "bool_parsing": "must be true or false (got {input!r})",
    "bool_type": "must be true or false (got {input!r})",
    "string_type": "must be a string",
    "list_type": "must be a list (got {input!r})",
    "dict_type": "must be a mapping (got {input!r})",
}


def _input_loc(loc: Loc, raw: Any) -> Loc:
    """pydantic's error location without its own markers (`[key]` after a dict key, a union member's tag such as
    `function-after[...]`): the keys and indexes of the input. A user's key may contain `[` or `(` too, so a part
    is dropped only when the input has no such key there."""
    kept = []
    node = raw
    for part in loc:
        present = isinstance(node, dict) and part in node
        if isinstance(part, str) and ("[" in part or "(" in part) and not present:
            continue
        kept.append(part)
        indexed = isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)
        node = node[part] if present or indexed else None
    return tuple(kept)


def _problems_from_validation(error: ValidationError, model: type[BaseModel], raw: Any, file: str,
                              located: Located, in_file: Callable[[Loc], Loc] = lambda loc: loc,
                              shown: Callable[[Loc], str] = format_path) -> list[Finding]:
    """Turn pydantic's errors on `raw` into one Finding each, in the user's vocabulary.

    `in_file` maps a model path to its path in the YAML document (for the line); `shown` renders it for the user.
    """
    problems = []
    for err in error.errors():
        loc = _input_loc(err["loc"], raw)
        ctx = err.get("ctx") or {}
        kind = err["type"]
        if kind == "gpu_dra_field":
            field = ctx["field"]
            loc = loc + (tuple(field) if isinstance(field, tuple | list)
                         else tuple(int(part) if part.isdigit() else part for part in field.split(".")))
            message = ctx["message"]
        elif kind == "extra_forbidden":
            parent = _model_at(model, loc[:-1])
            allowed = _allowed_keys(parent) if parent else []
            guess = difflib.get_close_matches(str(loc[-1]), allowed, n=1)
            hint = f"; did you mean {guess[0]!r}?" if guess else "."
            message = f"unknown key{hint} Allowed: {', '.join(allowed)}" if allowed else "unknown key"
        elif kind == "missing":
            message = "required"
        elif kind in ("enum", "literal_error"):
            message = f"must be one of {ctx.get('expected')} (got {err['input']!r})"
        elif kind in ("model_type", "model_attributes_type"):
            parent = _model_at(model, loc)
            keys = ", ".join(_allowed_keys(parent)) if parent else ""
            message = f"must be a mapping with keys {keys}" if keys else "must be a mapping"
        elif kind == "int_type" and isinstance(err["input"], bool):
            message = "must be a whole number, not true/false (YAML also reads yes, no, on and off as true/false)"
        elif kind == "string_type" and isinstance(err["input"], (int, float)) and not isinstance(err["input"], bool):
            message = f"must be a string; quote it: \"{err['input']}\""
        elif kind in _MESSAGES:
            message = _MESSAGES[kind].format(**ctx, input=err["input"])
        else:
            message = err["msg"].removeprefix("Value error, ")
            if message[1:2].islower():  # "Value ..." reads on after the path in lower case; "EKS ..." stays
                message = message[0].lower() + message[1:]
        problems.append(config_finding(file, shown(loc), message, _line(located, in_file(loc))))
    return problems


def _line(located: Located, loc: Loc) -> int | None:
    """The line of `loc`, of its nearest parent in the file, or of the document's first key for a missing top key."""
    return located.line(loc) or min(located.lines.values(), default=None)


# --------------------------------------------------------------------------------------------- stack values


# Scalar keys, never JSON-decoded: a kubeconfig may itself be JSON.
TEXT_KEYS = (f"{PREFIX}environment", f"{PREFIX}kubeconfig")


def _decode(key: str, value: Any) -> Any:
    """Values as the Pulumi engine passes them (objects JSON-encoded, scalars as text) back to plain data."""
    if key not in TEXT_KEYS and isinstance(value, str) and value[:1] in ("{", "["):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value


def _stack_values_from_file(located: Located, display: str) -> dict[str, Any]:
    data = located.data
    if data is None:
        data = {}
    if not isinstance(data, dict) or not isinstance(data.get("config", {}), dict):
        raise ConfigError([config_finding(display, "config", "must be a mapping of `gpu-dra:<key>: value`",
                                          located.line(("config",)))])
    values = {}
    for key, value in (data.get("config") or {}).items():
        if not isinstance(key, str):
            raise ConfigError([config_finding(display, f"config[{key!r}]", "a config key is text such as "
                                                                          f"{PREFIX}environment",
                                              located.line(("config", key)))])
        if isinstance(value, dict) and set(value) == {"secure"}:
            value = SECRET_PLACEHOLDER
        values[key] = value
    return values


def stack_values(root: Path, stack: str) -> tuple[dict[str, Any], Located]:
    """The `config:` map of a stack file as written (secure values replaced by a placeholder), and its lines."""
    path = stack_file(root, stack)
    display = str(path.relative_to(root))
    if not path.exists():
        known = ", ".join(available_stacks(root)) or "none"
        raise ConfigError([config_finding(display, "", f"no such stack file; stacks here: {known}")])
    located = read_yaml(path, display)
    return _stack_values_from_file(located, display), located


def unhosted_team_files(root: Path, stacks: Sequence[str]) -> list[str]:
    """The team files (stacks/teams/<team>.yaml) that none of `stacks` hosts (gpu-dra:teams): nothing renders or
    checks them, which a new team's author would not know. A stack file that cannot be read hosts none here (its own
    check says why)."""
    hosted: set[str] = set()
    for stack in stacks:
        try:
            values, _ = stack_values(root, stack)
        except ConfigError:
            continue
        teams = values.get(f"{PREFIX}teams")
        hosted |= {str(name) for name in teams} if isinstance(teams, dict) else set()
    return [str(path.relative_to(root)) for path in sorted((root / "stacks" / "teams").glob("*.yaml"))
            if path.stem not in hosted]


@dataclass(frozen=True)
class SourceFile:
    """A stack or team file as the loader read it: its path as findings show it, and its document with lines."""

    file: str
    located: Located


@dataclass
class TeamFiles:
    """The team files one run has read and parsed, by path: the stacks of a project share team files, and a run
    (`gpu-dra check --all-stacks`) reads each once. One per run: a file changed during the run is not read again."""

    parsed: dict[Path, Located] = field(default_factory=dict)

    def read(self, path: Path, display: str) -> Located:
        if path not in self.parsed:
            self.parsed[path] = read_yaml(path, display)
        return self.parsed[path]


@dataclass(frozen=True)
class LoadedStack:
    """A validated stack and the files it was read from, so what runs after the loader (placing findings on lines,
    reading the workloads the teams name) reads and parses none of them again."""

    stack: Stack
    source: SourceFile  # the stack file
    teams: Mapping[str, SourceFile]  # each hosted team's file, by team name


def load_stack(root: Path, stack: str) -> Stack:
    """Load a stack from its file, as the offline commands and tests do."""
    values, located = stack_values(root, stack)
    return build_stack(root, stack, values, located)


def load_stack_from_engine(root: Path, stack: str, values: Mapping[str, Any]) -> Stack:
    """Load a stack from the config the Pulumi engine passed (`pulumi up`), keeping line numbers from the file."""
    path = stack_file(root, stack)
    display = str(path.relative_to(root))
    located = read_yaml(path, display) if path.exists() else Located({}, {})
    return build_stack(root, stack, {k: _decode(k, v) for k, v in values.items()}, located)


def build_stack(root: Path, stack: str, values: Mapping[str, Any], located: Located) -> Stack:
    """The stack validated with every team file it names (build_loaded_stack), without the files."""
    return build_loaded_stack(root, stack, values, located).stack


def build_loaded_stack(root: Path, stack: str, values: Mapping[str, Any], located: Located,
                       team_files: TeamFiles | None = None) -> LoadedStack:
    """Validate the stack file and every team file it names, reporting all their mistakes at once.

    A stack file with errors still has its team files read (as far as `gpu-dra:teams` can be read) and its
    cross-key rules run on the keys that are valid on their own, so fixing a stack takes one run, not one per error.
    `team_files`: the team files this run has read already (without it, each is read here).
    """
    display = str(stack_file(root, stack).relative_to(root))
    problems: list[Finding] = []
    ours = {k[len(PREFIX):]: v for k, v in values.items() if k.startswith(PREFIX)}
    problems += [config_finding(display, key, message, located.line(("config", key)))
                 for key, message in _namespace_problems(values)]
    config: StackConfig | None = None
    try:
        config = StackConfig.model_validate(ours)
    except ValidationError as exc:
        problems += _problems_from_validation(
            exc, StackConfig, ours, display, located,
            in_file=lambda loc: ("config", PREFIX + str(loc[0])) + loc[1:] if loc else ("config",),
            shown=lambda loc: PREFIX + format_path(loc))
    parts = StackParts.of(config, ours)
    problems += _stack_rules(parts, display, located)
    teams: list[Team] = []
    sources: dict[str, SourceFile] = {}
    platform_keys: list[PlatformKey] = []
    files = team_files if team_files is not None else TeamFiles()
    for name, hosting in parts.teams.items():
        try:
            team, sources[name], left_out = _load_team(root, name, files)
        except ConfigError as exc:
            problems += exc.findings
            continue
        except _NoTeamFile as missing:
            problems.append(config_finding(display, f"{PREFIX}teams.{name}", str(missing),
                                           _at(located, "teams", name)))
            continue
        teams.append(_apply_hosting(team, hosting))
        platform_keys += left_out
    problems += _team_rules(parts, teams, sources, display, located)
    if config is not None and not any(p.file.startswith("stacks/teams/") for p in problems):
        for loc, message in _driver_gate_problems(config, teams):
            problems.append(config_finding(display, PREFIX + format_path(("draDriver", *loc)), message,
                                           _at(located, "draDriver", *loc)))
    if problems or config is None:
        raise ConfigError(problems)
    built = Stack.model_validate({"name": stack, "config": config, "teams": teams, "platformKeys": platform_keys})
    return LoadedStack(built, SourceFile(display, located), sources)


# Namespaces a stack file may set besides ours: the providers of the Pulumi packages the program uses read them.
PROVIDER_NAMESPACES = ("aws", "eks", "kubernetes", "pulumi")


def _namespace_problems(values: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(key, message) for each key nothing reads: no namespace, or one that is neither ours nor a provider's.
    A key for another project (`gpu-draa:`, `GPU-DRA:`) is almost always a misspelt `gpu-dra:`."""
    found = []
    for key in values:
        namespace, colon, name = key.partition(":")
        if namespace == CONFIG_NAMESPACE or (namespace in PROVIDER_NAMESPACES and colon):
            continue
        if not colon:
            found.append((key, f"has no namespace; write it as {PREFIX}{key}"))
        elif difflib.get_close_matches(namespace.lower(), [CONFIG_NAMESPACE], cutoff=0.75):
            found.append((key, f"unknown config namespace {namespace!r}; did you mean '{PREFIX}{name}'?"))
        else:
            found.append((key, f"unknown config namespace {namespace!r}: nothing reads it. gpu-dra reads "
                               f"{PREFIX}<key>; the providers read {', '.join(f'{n}:' for n in PROVIDER_NAMESPACES)}"))
    return found


def _at(located: Located, key: str, *loc: str | int) -> int | None:
    return located.line(("config", PREFIX + key) + loc)


def _stack_rules(parts: StackParts, file: str, located: Located) -> list[Finding]:
    """The stack file's cross-key rules (stack_rules.STACK_RULES), in order, their mistakes on their keys' lines."""
    return [config_finding(file, PREFIX + format_path((key, *loc)), message, _at(located, key, *loc))
            for rule in STACK_RULES for key, loc, message in rule(parts)]


# What only the platform decides for a team: admin access (set in the stack's `gpu-dra:teams.<team>.admin`) and
# namespace labels under the prefixes Kubernetes reserves for its own components (kubernetes.io, k8s.io and their
# subdomains: Pod Security Admission's pod-security.kubernetes.io/enforce, DRA's resource.kubernetes.io/admin-access)
# or gpu-dra's own. CODEOWNERS lets a team approve its own file, so a team file that sets one is stripped of it (it
# has no effect) and reported by the policy team-file-platform-keys, which fails the change in every environment.
PLATFORM_ONLY_TEAM_KEYS = ("admin",)
_RESERVED_LABEL_DOMAINS = ("kubernetes.io", "k8s.io", "gpu-dra.io")


def _reserved_label(key: str) -> bool:
    domain = key.rpartition("/")[0]
    return any(domain == d or domain.endswith("." + d) for d in _RESERVED_LABEL_DOMAINS)


def _platform_only_keys(data: Any) -> list[Loc]:
    """The key paths of a team file's data that only the platform may set."""
    if not isinstance(data, dict):
        return []
    found: list[Loc] = [(key,) for key in PLATFORM_ONLY_TEAM_KEYS if key in data]
    namespace = data.get("namespace")
    labels = namespace.get("labels") if isinstance(namespace, dict) else None
    if isinstance(labels, dict):
        found += [("namespace", "labels", key) for key in labels if isinstance(key, str) and _reserved_label(key)]
    return found


def _without(data: dict[str, Any], paths: Sequence[Loc]) -> dict[str, Any]:
    """`data` without the keys at `paths`, copying only what changes."""
    out = dict(data)
    for path in paths:
        parent = out
        for key in path[:-1]:
            parent[key] = dict(parent[key])
            parent = parent[key]
        del parent[path[-1]]
    return out


class _NoTeamFile(Exception):
    """A team the stack names has no file: reported at the stack's `gpu-dra:teams` entry, where the name is."""


def _load_team(root: Path, name: str, files: TeamFiles) -> tuple[Team, SourceFile, list[PlatformKey]]:
    """A team file validated, the file as read, and the keys only the platform may set that it was read without;
    every mistake in it is raised at once as a ConfigError."""
    path = team_file(root, name)
    display = str(path.relative_to(root))
    if not path.exists():
        known = sorted(p.stem for p in (root / "stacks" / "teams").glob("*.yaml"))
        raise _NoTeamFile(f"no team file {display}; create it, or host one of the teams that have a file: "
                          f"{', '.join(known) or 'none'}")
    located = files.read(path, display)
    data = located.data if located.data is not None else {}
    if not isinstance(data, dict):
        raise ConfigError([config_finding(display, "", "must be a mapping with keys name, namespace, quota, "
                                                       "claimTemplates, ...")])
    reserved = _platform_only_keys(data)
    left_out = [PlatformKey(team=name, file=display, line=located.line(loc), key=format_path(loc)) for loc in reserved]
    data = _without(data, reserved)
    problems = []
    if isinstance(data.get("name"), str) and data["name"] != name:
        problems.append(config_finding(display, "name", f"is {data['name']!r} but the file is for team {name!r}; "
                                                        "they must match", located.line(("name",))))
    try:
        team = Team.model_validate(data)
    except ValidationError as exc:
        problems += _problems_from_validation(exc, Team, data, display, located)
    else:
        for index, named in enumerate(team.workloads):
            where = (display, f"workloads.{index}")
            if not (root / named).exists():
                problems.append(config_finding(*where, f"{named}: no such file or folder in the repository (paths are "
                                               "relative to its root)", located.line(("workloads", index))))
            elif not (root / named).resolve().is_relative_to(root.resolve()):
                problems.append(config_finding(*where, f"{named}: leads outside the repository (a link?); name the "
                                               "manifests inside it", located.line(("workloads", index))))
    if problems:
        raise ConfigError(problems)
    return team, SourceFile(display, located), left_out


def _undeclared_classes(team: Team, own: Located, hosting: TeamHosting | None, declared: set[str], stack: str,
                        located: Located, auto_mode: bool = False) -> list[Finding]:
    """A request naming a class nobody declares stays Pending ("device class ... does not exist")."""
    installed = ("known to be created by Auto Mode (gpu-dra installs no driver chart on Auto Mode, and AWS does not "
                 "document which DeviceClasses Auto Mode creates)" if auto_mode else "installed by the chart")
    file = str(Path("stacks", "teams", f"{team.name}.yaml"))
    known = ", ".join(sorted(declared))
    problems = []
    for t, template in enumerate(team.claim_templates):
        for r, request in enumerate(template.requests):
            choices = [((), request.device_class)] if request.device_class else [
                (("firstAvailable", a), alt.device_class) for a, alt in enumerate(request.first_available or [])]
            for loc, name in choices:
                if name not in declared:
                    where: Loc = ("claimTemplates", t, "requests", r, *loc, "deviceClass")
                    problems.append(config_finding(
                        file, format_path(where), f"class {name!r} is neither declared by this stack's "
                                                  f"gpu-dra:deviceClasses nor {installed}; "
                                                  f"{did_you_mean(name, declared)}known: {known}",
                        own.line(where)))
    overridden = hosting.quota.devices if hosting and hosting.quota else {}
    for name in team.quota.devices:
        if name in declared:
            continue
        message = f"class {name!r} is not declared by this stack; {did_you_mean(name, declared)}known: {known}"
        if name in overridden:  # the stack's override names it
            problems.append(config_finding(stack, f"{PREFIX}teams.{team.name}.quota.devices[{name!r}]", message,
                                           _at(located, "teams", team.name, "quota", "devices", name)))
        else:
            problems.append(config_finding(file, f"quota.devices[{name!r}]", message,
                                           own.line(("quota", "devices", name))))
    return problems


def _apply_hosting(team: Team, hosting: TeamHosting | None) -> Team:
    if hosting is None:
        return team
    if hosting.admin:
        team = team.model_copy(update={"admin": True})
    if hosting.queue is not None:
        team = team.model_copy(update={"queue": hosting.queue})
    if hosting.quota is None:
        return team
    override = hosting.quota
    quota = Quota.model_validate({
        "claims": override.claims if override.claims is not None else team.quota.claims,
        "devices": {**team.quota.devices, **override.devices},
    })
    return team.model_copy(update={"quota": quota})


def _team_rules(parts: StackParts, teams: list[Team], sources: Mapping[str, SourceFile], file: str,
                located: Located) -> list[Finding]:
    problems = []
    templates = sum(len(team.claim_templates) for team in teams)
    if templates > MAX_TEMPLATES_PER_STACK:
        counts = ", ".join(f"{team.name} {len(team.claim_templates)}" for team in teams)
        problems.append(config_finding(file, f"{PREFIX}teams", f"the teams hosted hold {templates} claim templates "
                                                              f"({counts}); a stack may hold at most "
                                                              f"{MAX_TEMPLATES_PER_STACK}: host fewer teams here, or "
                                                              "split them across stacks", _at(located, "teams")))
    if parts.has("device_classes"):
        # On Auto Mode no chart is installed, and which classes Auto Mode creates is not documented.
        no_chart = parts.has("auto_mode") and not parts.config.installs_driver_chart
        declared = {c.name for c in parts.config.device_classes} | (set() if no_chart else
                                                                     set(nvidia.CHART_DEVICE_CLASSES))
        for team in teams:
            problems += _undeclared_classes(team, sources[team.name].located, parts.teams.get(team.name), declared,
                                            file, located, auto_mode=no_chart)
    if parts.has("kueue", "cluster.kubernetes_version") and parts.config.kueue is not None:
        for problem in queue_problems(parts.config, teams):
            problems.append(_queue_finding(problem, parts, sources, file, located))
    reserved = {*RESERVED_NAMESPACES, *([parts.config.dra_driver.namespace] if parts.has("dra_driver") else [])}
    owners: dict[str, str] = {}
    for team in teams:
        namespace = team.namespace_name
        line = _at(located, "teams", team.name)
        if namespace in reserved:
            problems.append(config_finding(file, f"{PREFIX}teams.{team.name}",
                                           f"team namespace {namespace!r} is reserved; set namespace.name in "
                                           f"stacks/teams/{team.name}.yaml", line))
        elif namespace in owners:
            problems.append(config_finding(file, f"{PREFIX}teams.{team.name}",
                                           f"namespace {namespace!r} is also team {owners[namespace]}'s", line))
        owners.setdefault(namespace, team.name)
    return problems


def _queue_finding(problem: QueueProblem, parts: StackParts, sources: Mapping[str, SourceFile], file: str,
                   located: Located) -> Finding:
    """A queue problem on its line: the team file's, or the stack's where the stack gives the team its queue
    (gpu-dra:teams.<team>.queue) or the hard quota it contradicts (gpu-dra:teams.<team>.quota.devices), or the
    problem is Kueue's own (gpu-dra:kueue)."""
    if problem.team is None:
        return config_finding(file, f"{PREFIX}kueue", problem.message, _at(located, "kueue"))
    hosting = parts.teams.get(problem.team)
    if problem.loc[:1] == ("queue",) and hosting is not None and hosting.queue is not None:
        return config_finding(file, f"{PREFIX}teams.{problem.team}.queue", problem.message,
                              _at(located, "teams", problem.team, "queue"))
    if (problem.loc[:2] == ("quota", "devices") and hosting is not None and hosting.quota is not None
            and problem.loc[2:3] and problem.loc[2] in hosting.quota.devices):  # the stack's override sets it
        return config_finding(file, f"{PREFIX}teams.{problem.team}.quota.devices[{problem.loc[2]!r}]",
                              problem.message, _at(located, "teams", problem.team, "quota", "devices",
                                                   str(problem.loc[2])))
    own = sources[problem.team]
    return config_finding(own.file, format_path(problem.loc), problem.message, own.located.line(problem.loc))


def _driver_gate_problems(config: StackConfig, teams: list[Team]) -> list[tuple[Loc, str]]:
    """Driver gate mistakes of a stack as (path under gpu-dra:draDriver, message): the driver's rules
    (nvidia_driver.gate_conflicts) on its gates, the cluster's and the teams' sharing."""
    driver = config.dra_driver
    sharing = [(f"team {team.name}'s template {t.name}", t.sharing.strategy)
               for team in teams for t in team.claim_templates if t.sharing is not None]
    out: list[tuple[Loc, str]] = []
    partitionable = config.target.enabled("DRAPartitionableDevices")
    for gate, message in nvidia_driver.gate_conflicts(driver.chart, driver.version, dict(driver.feature_gates),
                                                      partitionable, sharing):
        if gate == "version":
            out.append((("version",), message))
        else:
            out.append((("featureGates", gate) if gate else ("featureGates",), message))
    return out
