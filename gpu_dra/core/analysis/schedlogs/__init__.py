"""kube-scheduler (and kubelet) log lines about DRA, grouped per pod and claim, with the verbosity they need.

Reads the shapes clusters and test runs write:
- klog text (`I1129 10:00:00.000000 1 allocator.go:123] "Starting allocation" numClaims=1`), also behind a prefix:
  a container runtime's (`2022-11-10T20:30:18.670662874Z stderr F `), journald's, `aws logs tail`'s
  (`2024-11-29T10:00:01.000000+00:00 kube-scheduler-abc `), the `EVENTS` rows of `aws logs filter-log-events
  --output text`, or go test's (`logger.go:85: `);
- ktesting, the scheduler's unit, integration and scheduler_perf tests (`dynamicresources.go:542: I1106
  16:40:23.108330] scheduler: pod resource claims pod="default/my-pod"`: the caller before the header, no thread,
  an optional logger name, an unquoted message);
- klog JSON (`{"ts":..., "caller":"allocator.go:123", "msg":"...", "v":5, "pod":{"name":..,"namespace":..}}`);
- a CloudWatch Logs JSON export (`aws logs filter-log-events` or `get-log-events --output json`, indented or not,
  pages concatenated): each event's "message" is a klog line, decoded as the export is read.

Scheduler logs run to gigabytes, and most of their lines are not about DRA. One RE2 pass over each block of bytes
finds the lines that can be DRA lines, and only those are decoded (scanning); a line seen before is looked up, not
read again, and a new one is read by the shortest way that gives what the full parse gives (reading); a large file
is read in parts by one process per core, joined in order as if read in one go (parallel).

Memory does not grow with the log or with its pods. Per pod the report keeps a count, its claims, its final reason
and its last TAIL lines, for at most MAX_PODS pods: a pod's record is dropped once MAX_PODS changes of pod have come
since its last line, and a note says how many lines were counted but are not listed. Besides that, the CACHED_TEXTS
remembered readings and as many message, caller and pair shapes.

One module per job, each using only those before it: `lines` (what a line says: its shapes, its parse, DRA or not),
`reading` (a line's reading by the shorter ways, and what is shown of it), `records` (per pod records and their
bound, the report, the joining of parts), `blocks` (the bytes of a log or an export in blocks of whole lines),
`scanning` (the candidate pass and the scan of blocks: scan), `parallel` (a large file in parts: scan_file).
"""

from .blocks import LONG_MESSAGE, TRUNCATED_EXPORT, is_cloudwatch_export
from .lines import LogLine, parse_line
from .parallel import PARALLEL_BYTES, WorkerLost, scan_file
from .records import TAIL, KeptLine, LogReport
from .scanning import scan

__all__ = ["LONG_MESSAGE", "PARALLEL_BYTES", "TAIL", "TRUNCATED_EXPORT", "KeptLine", "LogLine", "LogReport",
           "WorkerLost", "is_cloudwatch_export", "parse_line", "scan", "scan_file"]
