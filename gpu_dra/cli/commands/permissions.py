"""`gpu-dra permissions`: the IAM policy the identity running `pulumi up` needs, derived from what the stacks
declare (the program run under mocks, mapped by gpu_dra.core.render.permissions), so the list cannot drift from the
program the way a hand-written one does. Derived, not tested against AWS."""

from __future__ import annotations

import argparse
import json
import sys

from gpu_dra.cli.arguments import stack_options
from gpu_dra.cli.offline import run_program
from gpu_dra.cli.process import EXIT_OK
from gpu_dra.cli.project import project_root, selected_stacks
from gpu_dra.core.config.loader import build_stack, stack_values
from gpu_dra.core.findings import ConfigError
from gpu_dra.core.render import permissions

EXAMPLES = """examples:
  gpu-dra permissions --all-stacks > deploy/iam-policy.json
  gpu-dra permissions --stack prod --format text   # which resource needs which action, and the page defining it

exit codes: 0 the policy was printed, 2 a configuration error in a stack or team file
"""

SCOPE_NOTE = ('Every statement allows Resource "*": scope it to each stack\'s names (its cluster, node groups, roles '
              "and secrets key) where your organisation requires it. Derived from the resources the program "
              "declares; not tested against AWS.")


def register(parser: argparse.ArgumentParser) -> None:
    stack_options(parser, "every stack in stacks/, in one policy")
    parser.add_argument("--format", choices=["json", "text"], default="json",
                        help="json: the IAM policy document (the note on scoping goes to stderr); text: each "
                             "resource type's actions and the page that defines them")


def run(args: argparse.Namespace) -> int:
    root = project_root(args)
    stacks = selected_stacks(args, root)
    declared: dict[str, set[str]] = {}  # type -> the stacks declaring it
    where: dict[str, str] = {}
    problems = []
    for name in stacks:  # every stack's config mistakes in one run, as `gpu-dra check` reports them
        try:
            values, located = stack_values(root, name)
            stack = build_stack(root, name, values, located)
        except ConfigError as error:
            problems += error.findings
            continue
        cluster = stack.config.cluster
        where[name] = f"cluster {cluster.name} in {cluster.region}" if cluster.region else f"cluster {cluster.name}"
        program = run_program(root, name, values, stack)
        for type_ in permissions.declared_types((r.type, r.inputs) for r in program.resources) | set(program.invokes):
            declared.setdefault(type_, set()).add(name)
    if problems:
        raise ConfigError(problems)
    missing = permissions.unmapped(declared)
    if missing:  # a gpu-dra bug: the policy would fail the deploy half-way
        raise RuntimeError(f"no IAM actions known for {', '.join(missing)}; add them to "
                           "gpu_dra/core/render/permissions.py LIFECYCLE")
    if args.format == "json":
        print(json.dumps(permissions.policy_document(declared), indent=2))
        print(f"gpu-dra: {SCOPE_NOTE}", file=sys.stderr)
    else:
        _text(declared, where)
    return EXIT_OK


def _text(declared: dict[str, set[str]], where: dict[str, str]) -> None:
    lifecycle, on_behalf = permissions.rows(declared)
    print(f"IAM permissions to deploy {', '.join(sorted(where))} with `pulumi up`")
    for row in lifecycle:
        print(f"\n{row.type}  ({', '.join(sorted(declared[row.type]))})  {row.source}")
        for step in ("create", "read", "update", "delete"):
            if getattr(row, step):
                print(f"  {step:<7} {' '.join(getattr(row, step))}")
    if on_behalf:
        print("\nWhat EKS checks against the caller when it creates them:")
    for behalf in on_behalf:
        condition = f"  when {' '.join(behalf.condition)}" if behalf.condition else ""
        print(f"\n{behalf.type}: {behalf.why}  {behalf.source}\n  {' '.join(behalf.actions)}{condition}")
    print(f"\n{SCOPE_NOTE}")
    for name in sorted(where):
        print(f"  {name}: {where[name]}")
