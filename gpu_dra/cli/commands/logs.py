"""`gpu-dra logs`: kube-scheduler's DRA lines per pod and claim, with the final reason."""

from __future__ import annotations

import argparse
import os
import stat
import sys
from collections.abc import Iterable, Iterator

from gpu_dra.cli.process import EXIT_FINDINGS, EXIT_OK, UsageError
from gpu_dra.core.analysis import schedlogs
from gpu_dra.core.analysis.schedlogs import KeptLine, LogReport

EXAMPLES = """examples:
  gpu-dra logs scheduler.log
  kubectl logs -n kube-system kube-scheduler-cp-0 | gpu-dra logs -
  gpu-dra logs scheduler.log --pod ml/train-0
  aws logs tail /aws/eks/prod/cluster --log-stream-name-prefix kube-scheduler --since 1h | gpu-dra logs -
  aws logs filter-log-events --log-group-name /aws/eks/prod/cluster --log-stream-name-prefix kube-scheduler \\
      --start-time $(date -d '-1 hour' +%s000) > events.json && gpu-dra logs events.json
  go test ./pkg/scheduler/framework/plugins/dynamicresources/ -run TestPlugin -v 2>&1 | gpu-dra logs -

exit codes: 0 the log was read (its DRA lines, if any, reported), 1 --pod names a pod with no DRA line in the log,
2 bad input (a file that cannot be read, a device)
"""

FILE_HELP = ("kube-scheduler or kubelet log: klog text or JSON, also behind a container runtime's or journald's "
             "prefix; ktesting output of Go tests (unit, integration, scheduler_perf); `aws logs tail` output; an "
             "`aws logs filter-log-events` (or get-log-events) export, --output json or text; - for stdin")


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", nargs="?", metavar="FILE", help=FILE_HELP)
    parser.add_argument("--pod", metavar="NAMESPACE/NAME",
                        help="every DRA line of this pod, as it is read (default: per pod the last "
                             "20 lines, the claims and the final reason)")


def run(args: argparse.Namespace) -> int:
    name = args.path or "-"
    if args.pod:
        print(f"pod {args.pod}")
    if name == "-" and sys.stdin is None:
        raise UsageError("<stdin>: standard input is closed; pipe the log in, or name a file")
    if name == "-" and sys.stdin.isatty():  # `gpu-dra logs` typed as is: say why nothing happens
        print("gpu-dra: reading a scheduler log from the terminal; end with Ctrl-D (or pipe it in: kubectl logs -n "
              "kube-system <scheduler pod> | gpu-dra logs -)", file=sys.stderr)
    if name != "-" and _device(name):  # /dev/zero would be read for ever; a log follows through a pipe (-)
        raise UsageError(f"{name}: a device, not a log file; pipe a live log in with `-` (kubectl logs -f ... | "
                         "gpu-dra logs -)")
    try:
        if name == "-":
            report = schedlogs.scan(sys.stdin.buffer, args.pod, _print_log_line if args.pod else None)
        elif args.pod:
            with open(name, "rb") as stream:
                report = schedlogs.scan(stream, args.pod, _print_log_line)
        else:
            report = schedlogs.scan_file(name)
    except BrokenPipeError:  # the reader of --pod's lines (head, less) went away: main says nothing more
        raise
    except OSError as error:
        raise UsageError(f"{name}: cannot read: {error.strerror}") from None
    except (MemoryError, schedlogs.WorkerLost):
        raise UsageError(f"{name}: reading it ran out of memory (or a process reading part of it was killed); "
                         f"`gpu-dra logs --pod NAME {name}` reads one pod's lines in one process and keeps only "
                         "those") from None
    absent = bool(args.pod) and args.pod not in report.pods
    _write(_report(report, bool(args.pod), verbosity=not absent))  # of no line, no verbosity can be told
    if absent:
        where = "standard input" if name == "-" else name
        _write(["", f"note: no DRA line of pod {args.pod} in {where} ({report.scanned} line(s) read): the scheduler "
                    "did not log one for it at this verbosity, or the name is another's (namespace/name); "
                    f"`gpu-dra logs {name}` lists the pods it has"])
        return EXIT_FINDINGS
    return EXIT_OK


def _report(report: LogReport, one_pod: bool, verbosity: bool = True) -> Iterator[str]:
    """The report's lines: the summary, per pod its claims, last lines and final reason (of
    the one pod asked for, whose lines were printed as read, the reason), then the notes (`verbosity`: with what the
    lines read say of the log's verbosity)."""
    panics = f", {report.panics} panic(s)" if report.panics else ""
    yield f"{report.kept} DRA line(s) of {report.scanned} read, {len(report.pods)} pod(s){panics}"
    if not report.scanned:
        yield ""
        yield "note: the log is empty: nothing was read (a wrong file, or a command that printed nothing to the pipe)"
        return
    for pod in report.pods.values():
        if not one_pod:
            claims = ", ".join(sorted(pod.claims))
            yield ""
            yield f"pod {pod.pod}" + (f" (claims: {claims})" if claims else "")
            if pod.count > len(pod.recent):
                yield (f"  ... {pod.count - len(pod.recent)} earlier line(s); `--pod {pod.pod}` shows all "
                       f"{pod.count}")
            yield from map(_log_line, pod.recent)
        if pod.reason:
            yield f"  => {pod.reason}"
    for note in report.notes:
        yield ""
        yield f"note: {note}"
    hint = report.verbosity_hint() if verbosity else ""
    if hint:
        yield ""
        yield f"note: {hint}"


def _write(lines: Iterable[str], batch: int = 4096) -> None:
    """`lines` printed in batches: a report of 100,000 pods has a million lines, and each write is escaped."""
    chunk: list[str] = []
    for line in lines:
        chunk.append(line)
        if len(chunk) == batch:
            sys.stdout.write("\n".join(chunk) + "\n")
            chunk.clear()
    if chunk:
        sys.stdout.write("\n".join(chunk) + "\n")


def _device(name: str) -> bool:
    try:
        return stat.S_ISCHR(os.stat(name).st_mode) or stat.S_ISBLK(os.stat(name).st_mode)
    except OSError:
        return False  # reading it says why


def _log_line(line: KeptLine) -> str:
    """One kept line, as the report shows it."""
    return f"  {line.number:6d} {line.caller:28} {line.message}" + (f"  {line.detail}" if line.detail else "")


def _print_log_line(line: KeptLine) -> None:
    """A line of the one pod asked for, printed as it is read (a live log comes through a pipe)."""
    print(_log_line(line))
