"""The arguments verbs share, and their checks before any input is read: --stack and --all-stacks, --cluster's
options, --kubernetes-version. Light: a verb's arguments are built before it runs."""

from __future__ import annotations

import argparse
import re
import sys

from gpu_dra.cli.process import UsageError
from gpu_dra.cli.text import cut
from gpu_dra.core.dra.quantity import QuantityError, parse_quantity
from gpu_dra.core.facts.gates import STACK_VERSIONS, VERSIONS, stack_version_note

# Pulumi's rule for stack names (ParseStackName, pulumi/pulumi sdk/go/common/tokens); it is also part of a file name.
_STACK_NAME = re.compile(r"[A-Za-z0-9_.-]{1,100}")

# kubectl has no default limit; gpu-dra is run in CI, where a stalled API server should fail the job, not hang it.
DEFAULT_REQUEST_TIMEOUT = 30.0


def check_stack_name(name: str) -> None:
    if not _STACK_NAME.fullmatch(name):
        raise UsageError(f"--stack {cut(name, 60)!r}: not a stack name: at most 100 letters, digits, '-', '_' and "
                         "'.' (the stack file is stacks/Pulumi.<stack>.yaml)")


def request_timeout(text: str) -> float | None:
    """`--request-timeout` as kubectl reads it: seconds, or a number with s, m or h; 0 waits forever (None)."""
    match = re.fullmatch(r"([0-9]+(?:\.[0-9]*)?)([smh]?)", text.strip())
    if not match:
        raise argparse.ArgumentTypeError(f"{cut(text, 40)!r} is not a duration such as 30s, 2m or 0 (no limit)")
    seconds = float(match.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600}[match.group(2)]
    return seconds or None


def memory_size(text: str) -> int:
    """`--read-memory` as a Kubernetes quantity of bytes: 1Gi, 512Mi, 4G."""
    try:
        size = parse_quantity(text)
    except QuantityError:
        size = None
    if size is None or size < 1 << 20:
        raise argparse.ArgumentTypeError(f"{cut(text, 40)!r} is not a size such as 1Gi or 4Gi (1Mi at least)")
    return int(size)


def check_kubernetes_version(version: str | None) -> None:
    """`--kubernetes-version`, before any input is read: one of the minor versions whose gates gpu-dra knows, with a
    warning where no stack may run it (the same list the stack files are held to)."""
    if version is not None and version not in VERSIONS:
        raise UsageError(f"--kubernetes-version {cut(version, 40)}: known versions {', '.join(VERSIONS)} "
                         f"(stacks run {', '.join(STACK_VERSIONS)})")
    if version is not None and (note := stack_version_note(version)):
        print(f"gpu-dra: warning: --kubernetes-version {version}: judged by its own gate table, but {note}",
              file=sys.stderr)


def stack_options(parser: argparse.ArgumentParser, all_stacks_help: str = "every stack in stacks/") -> None:
    """--stack S or --all-stacks, for the verbs that judge stacks."""
    target = parser.add_mutually_exclusive_group()
    target.add_argument("--stack", help="stack name (default dev)")
    target.add_argument("--all-stacks", action="store_true", help=all_stacks_help)


def cluster_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--cluster", action="store_true",
                        help="read the cluster's DRA objects and Nodes through a kubeconfig, read-only (what each verb "
                             "lists, and the ClusterRole it needs: docs/troubleshooting.md)")
    parser.add_argument("--kubeconfig", help="kubeconfig file for --cluster (default: $KUBECONFIG, ~/.kube/config)")
    parser.add_argument("--context", help="kubeconfig context for --cluster (default: current)")
    parser.add_argument("--request-timeout", type=request_timeout, default=DEFAULT_REQUEST_TIMEOUT,
                        metavar="DURATION",
                        help=f"for --cluster: how long one API request, or the kubeconfig's credential plugin, may "
                             f"take, as kubectl's: 30s, 2m; 0 waits forever (default {DEFAULT_REQUEST_TIMEOUT:g}s). "
                             "The whole read may take 20 times as long")
    parser.add_argument("--read-memory", type=memory_size, default=None, metavar="SIZE",
                        help="how much memory the files given, and with --cluster the objects read, may take once "
                             "parsed, estimated before each file or page is (default 768Mi; a 1,000-node cluster's "
                             "ResourceSlices are estimated at ~100Mi)")
