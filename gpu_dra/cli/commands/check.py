"""`gpu-dra check`: the policy pack run offline on stacks, as text, JSON or SARIF."""

from __future__ import annotations

import argparse
import json
import sys

from gpu_dra import __version__
from gpu_dra.cli import check
from gpu_dra.cli.arguments import stack_options
from gpu_dra.cli.base_ref import namespaces_at
from gpu_dra.cli.process import EXIT_FINDINGS, EXIT_OK, UsageError
from gpu_dra.cli.project import project_root, selected_stacks
from gpu_dra.core.config.loader import available_stacks, build_loaded_stack, stack_values, unhosted_team_files
from gpu_dra.core.findings import NOT_JUDGED, ConfigError
from gpu_dra.core.policy import MANDATORY
from gpu_dra.policypack import violation_message

EXAMPLES = """examples:
  gpu-dra check --all-stacks
  gpu-dra check --all-stacks --jobs 2            # two stacks at a time, where two cores are free
  gpu-dra check --stack prod --format sarif > gpu-dra.sarif
  gpu-dra check --stack prod --pack-config > policies/config.prod.json
  gpu-dra check --stack staging --first-preview   # what a new stack's first `pulumi preview` can judge
  gpu-dra check --all-stacks --base origin/main   # also what the change does to team namespaces since main

exit codes: 0 no mandatory violation, 1 a mandatory violation, 2 a configuration error in a stack or team file
"""


def register(parser: argparse.ArgumentParser) -> None:
    stack_options(parser)
    parser.add_argument("--format", choices=["text", "json", "sarif"], default="text")
    parser.add_argument("--pack-config", action="store_true",
                        help="print the stack's config for `pulumi preview --policy-pack-config` instead")
    parser.add_argument("--jobs", type=jobs, default=1, metavar="N",
                        help="check the stacks in N processes at once (default 1): sooner where cores are idle, at "
                             "the cost of CPU time (each process loads the Pulumi SDKs); the report is the same")
    parser.add_argument("--first-preview", action="store_true",
                        help="judge the stack as the engine sends it in the first preview of a new stack (ids, ARNs "
                             "and the Kubernetes objects' state unknown): what is judged, and what is not yet")
    parser.add_argument("--base", metavar="REF",
                        help="a git revision the change is judged against (a pull request's base branch): the rule "
                             "team-namespace-kept reports a team dropped or a namespace renamed since then, "
                             "upgrade-safe and upgrade-reported what moving the Kubernetes version, driver chart or "
                             "Karpenter release since then does")


def jobs(text: str) -> int:
    """--jobs: a whole number of processes, 1 to 64."""
    try:
        count = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of processes, such as 2") from None
    if not 1 <= count <= 64:
        raise argparse.ArgumentTypeError(f"{count} processes: give 1 to 64")
    return count


def run(args: argparse.Namespace) -> int:
    root = project_root(args)
    stacks = selected_stacks(args, root)
    if args.pack_config:
        if len(stacks) != 1:
            raise UsageError("--pack-config writes one stack's config; use --stack")
        loaded = build_loaded_stack(root, stacks[0], *stack_values(root, stacks[0]))
        before = None if args.base is None else namespaces_at(root, args.base, stacks[0])
        upgrades = None if args.base is None else check.upgrades_since(root, args.base, loaded)
        replaced = None if args.base is None else check.replaced_since(root, args.base, loaded)
        mappings = None if args.base is None else check.mappings_since(root, args.base, loaded.stack)
        print(json.dumps(check.pack_config(loaded.stack, root, loaded.teams, before, upgrades, replaced, mappings),
                         indent=2, sort_keys=True))
        return EXIT_OK
    # every stack checked, each broken one named with its config mistakes
    found, broken = check.check_stacks(root, stacks, first_preview=args.first_preview, jobs=args.jobs, base=args.base)
    # The report comes first, whole, whatever the exit: CI uploads the SARIF of a failed check too.
    if args.format == "json":
        print(json.dumps(check.as_json(stacks, found, broken), indent=2))
    elif args.format == "sarif":
        print(json.dumps(check.as_sarif(found, __version__, broken), indent=2))
    else:
        for name in stacks:
            if name in broken:
                print(f"stack {name}: not checked: {len(broken[name])} configuration error(s), listed on stderr")
                continue
            mine = [v for v in found if v.stack == name and v.enforcement != NOT_JUDGED]
            skipped = [v for v in found if v.stack == name and v.enforcement == NOT_JUDGED]
            mandatory = sum(1 for v in mine if v.enforcement == MANDATORY)
            print(f"stack {name}: {mandatory} mandatory, {len(mine) - mandatory} advisory violation(s)"
                  + (f", {len(skipped)} check(s) not judged" if skipped else ""))
            for verdict in sorted(mine, key=lambda v: (v.enforcement != MANDATORY, v.finding.file,
                                                      v.finding.line or 0)) + skipped:
                finding = verdict.finding
                where = f"{finding.file}:{finding.line}" if finding.line else finding.file
                print(f"  [{verdict.enforcement}] {finding.rule}  {where}")
                print(f"      {violation_message(finding)}")
    if stacks:  # against every stack file, whichever were checked: a team file one of them hosts is in use
        for file in unhosted_team_files(root, available_stacks(root)):
            print(f"gpu-dra: warning: {file}: no stack hosts this team (gpu-dra:teams in stacks/Pulumi.<stack>.yaml), "
                  "so nothing renders or checks it", file=sys.stderr)
    if broken:  # exit 2, the mistakes on stderr as every verb prints them
        raise ConfigError([finding for findings in broken.values() for finding in findings])
    return EXIT_FINDINGS if any(v.enforcement == MANDATORY for v in found) else EXIT_OK
