"""`make bench` rows for `gpu-dra logs` on the generated real-shaped logs (bench/generate.py), each beside its floors
measured in the same run: reading the same file line by line in a bare Python loop. (Not `grep -c`: with its output
on /dev/null GNU grep stops at the first match, so it measured nothing.)

The targets are in CPU time on one core (issue 25): `gpu-dra logs` runs pinned to one core, where it reads in one
process (it starts a worker per core it may run on), and MB/s is the file's size over its user + system time. The
run on all cores is shown beside: its wall time, its CPU time (all its processes) and its largest process's peak.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Runs the command as a child of this small process, on one core or all, and writes the child's user + system time
# and its peak RSS: wait4 counts the child with the workers it waited for, and only the child, not this process.
_LAUNCHER = ("import os, sys, time\n"
             "start = time.perf_counter(); pid = os.fork()\n"
             "if pid == 0:\n"
             "    if sys.argv[2] == 'one': os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})\n"
             "    os.execvp(sys.argv[3], sys.argv[3:])\n"
             "_, status, usage = os.wait4(pid, 0)\n"
             "open(sys.argv[1], 'w').write(f'{usage.ru_utime + usage.ru_stime} {time.perf_counter() - start} '\n"
             "                             f'{usage.ru_maxrss}')\n"
             "sys.exit(os.waitstatus_to_exitcode(status))")

LOGS = (  # bench/generate.py paths key, what the log is, the target in MB/s of CPU time on one core
    ("log", "klog at V(5), 1 cycle in 10 a GPU pod, the same 500 Pending GPU pods retried", 100),
    ("log_new_pods", "the same, a new GPU pod every cycle: no line repeats", 40),
    ("log_v7", "klog at V(7): per GPU cycle the allocator's lines for 8 nodes, a line per device; a new pod "
     "every cycle", 40),
    ("log_tail", "the retried-pods log as `aws logs tail` prints it", None),
    ("log_cloudwatch", "the retried-pods log as `aws logs filter-log-events --output json` exports it", None),
)
_PYTHON_FLOOR = "import sys\nfor line in open(sys.argv[1], 'rb'):\n    pass"


def _run(command: list[str], cores: str, runs: int) -> tuple[float, float, float]:
    """Median CPU seconds, median wall seconds and largest peak RSS in MB of `runs` fresh processes."""
    cpu, wall, peaks = [], [], []
    with tempfile.TemporaryDirectory() as scratch:
        figures = Path(scratch) / "figures"
        for _ in range(runs):
            result = subprocess.run([sys.executable, "-c", _LAUNCHER, str(figures), cores, *command], cwd=ROOT,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            if result.returncode != 0:
                raise SystemExit(f"{' '.join(command)} failed: {result.stderr.decode(errors='replace')}")
            seconds, elapsed, peak = figures.read_text().split()
            cpu.append(float(seconds))
            wall.append(float(elapsed))
            peaks.append(int(peak) / 1024)
    return statistics.median(cpu), statistics.median(wall), max(peaks)


def rows(gpu_dra: str, paths: dict[str, Path], runs: int = 3) -> list[str]:
    """One row per log: one core CPU s (MB/s) against the target, the floors, the run on all cores."""
    out = [f"`gpu-dra logs FILE`, {runs} runs each (median; peak: the largest), floors measured in the same run, "
           f"{os.cpu_count()} cores:", "",
           "| log | MB | one core: CPU s (MB/s) | target | floor: Python `for line in open(f, 'rb')` CPU s (MB/s) | "
           "all cores: wall s, CPU s, peak MB |", "|---|---|---|---|---|---|"]
    for key, shown, target in LOGS:
        path = str(paths[key])
        size = os.path.getsize(path) / 1e6
        one, _, _ = _run([gpu_dra, "logs", path], "one", runs)
        wall_cpu, wall, peak = _run([gpu_dra, "logs", path], "all", runs)
        python, _, _ = _run([sys.executable, "-c", _PYTHON_FLOOR, path], "one", runs)
        met = "" if target is None else f">= {target} MB/s: {'met' if size / one >= target else 'NOT met'}"
        out.append(f"| {shown} | {size:.0f} | {one:.2f} ({size / one:.0f}) | {met} | {python:.2f} "
                   f"({size / python:.0f}) | {wall:.2f}, {wall_cpu:.2f}, {peak:.0f} |")
    return out
