"""`gpu-dra logs`: kube-scheduler's DRA lines per pod and claim, with the final reason."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from gpu_dra.cli.common import EXIT_OK, UsageError

EXAMPLES = """examples:
  gpu-dra logs scheduler.log
  kubectl logs -n kube-system kube-scheduler-cp-0 | gpu-dra logs -
  gpu-dra logs scheduler.log --pod ml/train-0
"""


def register(verbs: Any) -> None:
    logs = verbs.add_parser("logs", epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter,
        help="kube-scheduler DRA log lines per pod and claim, with the final reason")
    logs.add_argument("path", nargs="?", metavar="FILE", help="kube-scheduler log (klog text or JSON); - for stdin")
    logs.add_argument("--pod", metavar="NAMESPACE/NAME",
                      help="every DRA line of this pod, as it is read (default: per pod the last "
                           "20 lines, the claims and the final reason)")
    logs.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from gpu_dra.core.analysis import schedlogs

    name = args.path or "-"
    try:
        stream = sys.stdin if name == "-" else open(name, encoding="utf-8", errors="replace")  # noqa: SIM115
    except OSError as error:
        raise UsageError(f"{name}: cannot read: {error.strerror}") from None
    if args.pod:
        print(f"pod {args.pod}")
    with stream:
        report = schedlogs.scan(stream, args.pod, _print_log_line if args.pod else None)
    print(f"{report.kept} DRA line(s) of {report.scanned} read, {len(report.pods)} pod(s)")
    for pod in report.pods.values():
        if not args.pod:
            claims = ", ".join(sorted(pod.claims))
            print(f"\npod {pod.pod}" + (f" (claims: {claims})" if claims else ""))
            if pod.count > len(pod.recent):
                print(f"  ... {pod.count - len(pod.recent)} earlier line(s); `--pod {pod.pod}` shows all "
                      f"{pod.count}")
            for line in pod.recent:
                _print_log_line(line)
        if pod.reason:
            print(f"  => {pod.reason}")
    hint = report.verbosity_hint()
    if hint:
        print(f"\nnote: {hint}")
    return EXIT_OK


def _print_log_line(line: Any) -> None:
    """A KeptLine, or a LogLine as it is read (--pod)."""
    from gpu_dra.core.analysis import schedlogs

    shown = line if isinstance(line, schedlogs.KeptLine) else schedlogs.KeptLine.of(line)
    print(f"  {shown.number:6d} {shown.caller:28} {shown.message}" + (f"  {shown.detail}" if shown.detail else ""))
