"""Load and validate a stack: `stacks/Pulumi.<stack>.yaml` plus the team files it names.

Every mistake becomes a Problem naming the file, the key path and what is allowed; all are collected and raised
together as one ConfigError, before anything is built.
"""

from __future__ import annotations

import difflib
import json
import types
import typing
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from gpu_dra.core import driver, nvidia
from gpu_dra.core.config import (
    CONFIG_NAMESPACE,
    AllocationMode,
    Environment,
    Platform,
    Quota,
    Stack,
    StackConfig,
    Team,
    TeamHosting,
)
from gpu_dra.core.problems import ConfigError, Problem
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


def _problems_from_validation(error: ValidationError, model: type[BaseModel], file: str, located: Located,
                              in_file: Callable[[Loc], Loc] = lambda loc: loc,
                              shown: Callable[[Loc], str] = format_path) -> list[Problem]:
    """Turn pydantic's errors into one Problem each, in the user's vocabulary.

    `in_file` maps a model path to its path in the YAML document (for the line); `shown` renders it for the user.
    """
    problems = []
    for err in error.errors():
        loc: Loc = tuple(p for p in err["loc"] if not (isinstance(p, str) and ("[" in p or "(" in p)))
        ctx = err.get("ctx") or {}
        kind = err["type"]
        if kind == "gpu_dra_field":
            loc = loc + (ctx["field"],)
            message = ctx["message"]
        elif kind == "extra_forbidden":
            parent = _model_at(model, loc[:-1])
            allowed = _allowed_keys(parent) if parent else []
            guess = difflib.get_close_matches(str(loc[-1]), allowed, n=1)
            hint = f"; did you mean {guess[0]!r}?" if guess else ""
            message = f"unknown key{hint} Allowed: {', '.join(allowed)}" if allowed else "unknown key"
        elif kind == "missing":
            message = "required"
        elif kind in ("enum", "literal_error"):
            message = f"must be one of {ctx.get('expected')} (got {err['input']!r})"
        elif kind in ("model_type", "model_attributes_type"):
            parent = _model_at(model, loc)
            keys = ", ".join(_allowed_keys(parent)) if parent else ""
            message = f"must be a mapping with keys {keys}" if keys else "must be a mapping"
        elif kind == "string_type" and isinstance(err["input"], (int, float)) and not isinstance(err["input"], bool):
            message = f"must be a string; quote it: \"{err['input']}\""
        elif kind in _MESSAGES:
            message = _MESSAGES[kind].format(**ctx, input=err["input"])
        else:
            message = err["msg"].removeprefix("Value error, ")
            message = message[0].lower() + message[1:] if message else message
        problems.append(Problem(file, shown(loc), message, located.line(in_file(loc))))
    return problems


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
        raise ConfigError([Problem(display, "config", "must be a mapping of `gpu-dra:<key>: value`")])
    values = {}
    for key, value in (data.get("config") or {}).items():
        if isinstance(value, dict) and set(value) == {"secure"}:
            value = SECRET_PLACEHOLDER
        values[str(key)] = value
    return values


def stack_values(root: Path, stack: str) -> tuple[dict[str, Any], Located]:
    """The `config:` map of a stack file as written (secure values replaced by a placeholder), and its lines."""
    path = stack_file(root, stack)
    display = str(path.relative_to(root))
    if not path.exists():
        known = ", ".join(available_stacks(root)) or "none"
        raise ConfigError([Problem(display, "", f"no such stack file; stacks here: {known}")])
    located = read_yaml(path, display)
    return _stack_values_from_file(located, display), located


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
    display = str(stack_file(root, stack).relative_to(root))
    problems: list[Problem] = []
    ours = {k[len(PREFIX):]: v for k, v in values.items() if k.startswith(PREFIX)}
    # A key Pulumi would read as `project:key` for another project is almost always a misspelt `gpu-dra:`.
    for key in values:
        namespace = key.split(":", 1)[0]
        if namespace != CONFIG_NAMESPACE and difflib.get_close_matches(namespace, [CONFIG_NAMESPACE], cutoff=0.75):
            problems.append(Problem(display, key, f"unknown config namespace {namespace!r}; did you mean "
                                                  f"'{PREFIX}{key.split(':', 1)[-1]}'?",
                                    located.line(("config", key))))
    try:
        config = StackConfig.model_validate(ours)
    except ValidationError as exc:
        problems += _problems_from_validation(
            exc, StackConfig, display, located,
            in_file=lambda loc: ("config", PREFIX + str(loc[0])) + loc[1:] if loc else ("config",),
            shown=lambda loc: PREFIX + format_path(loc))
        raise ConfigError(problems) from None
    problems += _stack_rules(config, display, located)
    teams = []
    for name, hosting in config.teams.items():
        try:
            team = load_team(root, name)
        except ConfigError as exc:
            problems += exc.problems
            continue
        teams.append(_apply_hosting(team, hosting))
    problems += _team_rules(config, teams, display, located)
    if not any(p.file.startswith("stacks/teams/") for p in problems):
        for loc, message in driver.gate_problems(config, teams):
            problems.append(Problem(display, PREFIX + format_path(("draDriver", *loc)), message,
                                    _at(located, "draDriver", *loc)))
    if problems:
        raise ConfigError(problems)
    return Stack(name=stack, config=config, teams=teams)


def _at(located: Located, key: str, *loc: str | int) -> int | None:
    return located.line(("config", PREFIX + key) + loc)


def _stack_rules(config: StackConfig, file: str, located: Located) -> list[Problem]:
    """Rules that need more than one object of the stack file."""
    problems = []

    def problem(key: str, loc: Loc, message: str) -> None:
        problems.append(Problem(file, PREFIX + format_path((key,) + loc), message, _at(located, key, *loc)))

    seen: dict[str, int] = {}
    for i, group in enumerate(config.node_groups):
        if group.name == "system":
            problem("nodeGroups", (i, "name"), "'system' is the CPU node group's name; pick another")
        # EKS allows 63 characters; the name prefix gets a 26-character unique suffix so groups can be replaced.
        if len(f"{config.cluster.name}-{group.name}-") > 37:
            problem("nodeGroups", (i, "name"), f"the EKS node group name prefix {config.cluster.name}-{group.name}- "
                                              "exceeds 37 characters; shorten the group or cluster name")
        networking = config.cluster.networking
        if group.availability_zone and (networking is None or networking.new_vpc is None
                                        or group.availability_zone not in networking.new_vpc.availability_zones):
            problem("nodeGroups", (i, "availabilityZone"), "must be one of cluster.networking.newVpc's "
                                                          "availabilityZones (with an existing VPC, use subnetIds)")
        if group.name in seen:
            problem("nodeGroups", (i, "name"), f"{group.name!r} is already used by nodeGroups[{seen[group.name]}]")
        seen.setdefault(group.name, i)

    classes: dict[str, int] = {}
    for i, device_class in enumerate(config.device_classes):
        if nvidia.is_chart_device_class(device_class.name):
            problem("deviceClasses", (i, "name"), f"{device_class.name!r} is installed by NVIDIA's DRA driver chart; "
                                                  "pick another name (e.g. gpu-h100) and select from it")
        elif device_class.name in classes:
            problem("deviceClasses", (i, "name"),
                    f"{device_class.name!r} is already defined at deviceClasses[{classes[device_class.name]}]")
        classes.setdefault(device_class.name, i)

    mapped_names: dict[str, int] = {}
    mapped_classes: dict[str, int] = {}
    for i, mapping in enumerate(config.legacy_mappings):
        if mapping.device_class not in classes:
            declared = ", ".join(sorted(classes)) or "none"
            problem("legacyMappings", (i, "deviceClass"), f"{mapping.device_class!r} is not declared in "
                                                           f"gpu-dra:deviceClasses (declared: {declared})")
        if mapping.extended_resource_name in mapped_names:
            problem("legacyMappings", (i, "extendedResourceName"),
                    f"{mapping.extended_resource_name} is already mapped by "
                    f"legacyMappings[{mapped_names[mapping.extended_resource_name]}]")
        if mapping.device_class in mapped_classes:
            first = mapped_classes[mapping.device_class]
            problem("legacyMappings", (i, "deviceClass"), f"a class carries one extendedResourceName; "
                                                           f"{mapping.device_class} is already mapped by "
                                                           f"legacyMappings[{first}]")
        mapped_names.setdefault(mapping.extended_resource_name, i)
        mapped_classes.setdefault(mapping.device_class, i)

    roots = {g.driver for g in config.node_groups if g.allocation_mode is AllocationMode.dra}
    if len(roots) > 1:
        problem("nodeGroups", (), "DRA node groups disagree on `driver` (host vs gpu-operator); one DRA driver "
                                  "install serves them all with one nvidiaDriverRoot, so use one per stack")

    cluster = config.cluster
    if config.environment is Environment.prod:
        for i, cidr in enumerate(cluster.endpoint.public_access_cidrs):
            if cidr in ("0.0.0.0/0", "::/0"):
                problem("cluster", ("endpoint", "publicAccessCidrs", i),
                        "prod's API endpoint is never open to the world; list your office or VPN CIDRs, "
                        "or set publicAccess: false")
    if cluster.platform is Platform.existing:
        path = cluster.kubeconfig.path if cluster.kubeconfig else None
        if not path and not config.kubeconfig:
            problem("cluster", ("kubeconfig",), "an existing cluster needs kubeconfig.path, or the secret "
                                                "`pulumi config set --secret gpu-dra:kubeconfig < kubeconfig`")
    elif config.kubeconfig:
        problem("kubeconfig", (), "only for platform existing; an EKS cluster's kubeconfig is derived")
    if not config.node_groups and cluster.platform is Platform.eks:
        problem("nodeGroups", (), "an EKS stack needs at least one GPU node group")
    return problems


def load_team(root: Path, name: str) -> Team:
    path = team_file(root, name)
    display = str(path.relative_to(root))
    if not path.exists():
        known = sorted(p.stem for p in (root / "stacks" / "teams").glob("*.yaml"))
        raise ConfigError([Problem(display, "", f"no team file for team {name!r}; "
                                               f"team files: {', '.join(known) or 'none'}")])
    located = read_yaml(path, display)
    data = located.data if located.data is not None else {}
    if not isinstance(data, dict):
        raise ConfigError([Problem(display, "", "must be a mapping with keys name, namespace, quota, "
                                                "claimTemplates, ...")])
    try:
        team = Team.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(_problems_from_validation(exc, Team, display, located)) from None
    if team.name != name:
        raise ConfigError([Problem(display, "name", f"is {team.name!r} but the file is for team {name!r}; "
                                                    "they must match", located.line(("name",)))])
    return team


def _undeclared_classes(team: Team, declared: set[str]) -> list[Problem]:
    """A request naming a class nobody declares stays Pending ("device class ... does not exist")."""
    file = f"stacks/teams/{team.name}.yaml"
    known = ", ".join(sorted(declared))
    problems = []
    for t, template in enumerate(team.claim_templates):
        for r, request in enumerate(template.requests):
            choices = [((), request.device_class)] if request.device_class else [
                (("firstAvailable", a), alt.device_class) for a, alt in enumerate(request.first_available or [])]
            for loc, name in choices:
                if name not in declared:
                    path = format_path(("claimTemplates", t, "requests", r, *loc, "deviceClass"))
                    problems.append(Problem(file, path, f"class {name!r} is neither declared by this stack's "
                                                        f"gpu-dra:deviceClasses nor installed by the chart "
                                                        f"(known: {known})"))
    for name in team.quota.devices:
        if name not in declared:
            problems.append(Problem(file, f"quota.devices[{name!r}]", f"class {name!r} is not declared by this "
                                                                       f"stack (known: {known})"))
    return problems


def _apply_hosting(team: Team, hosting: TeamHosting | None) -> Team:
    if hosting is None or hosting.quota is None:
        return team
    override = hosting.quota
    quota = Quota.model_validate({
        "claims": override.claims if override.claims is not None else team.quota.claims,
        "devices": {**team.quota.devices, **override.devices},
    })
    return team.model_copy(update={"quota": quota})


def _team_rules(config: StackConfig, teams: list[Team], file: str, located: Located) -> list[Problem]:
    problems = []
    declared = {c.name for c in config.device_classes} | set(nvidia.CHART_DEVICE_CLASSES)
    for team in teams:
        problems += _undeclared_classes(team, declared)
    owners: dict[str, str] = {}
    for team in teams:
        namespace = team.namespace_name
        line = _at(located, "teams", team.name)
        if namespace in RESERVED_NAMESPACES or namespace == config.dra_driver.namespace:
            problems.append(Problem(file, f"{PREFIX}teams.{team.name}",
                                    f"team namespace {namespace!r} is reserved; set namespace.name in "
                                    f"stacks/teams/{team.name}.yaml", line))
        elif namespace in owners:
            problems.append(Problem(file, f"{PREFIX}teams.{team.name}",
                                    f"namespace {namespace!r} is also team {owners[namespace]}'s", line))
        owners.setdefault(namespace, team.name)
    return problems
