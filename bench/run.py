"""`make bench`: wall-clock figures for docs/benchmarks.md, printed as Markdown with the machine they ran on.

Each figure is a fresh process (cold: imports, config load, the program under mocks, manifests written), as a user
runs it. Speed targets are checked here, never in timed unit tests.
"""

from __future__ import annotations

import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUNS = int(os.environ.get("BENCH_RUNS", "5"))


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    system = f"{platform.system()} {platform.release()}"
    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, {system}"


def timed(command: list[str]) -> list[float]:
    times = []
    for _ in range(RUNS):
        start = time.perf_counter()
        subprocess.run(command, cwd=ROOT, check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return times


def main() -> int:
    gpu_dra = str(Path(sys.executable).parent / "gpu-dra")
    print(f"Machine: {machine()}")
    print(f"Runs per row: {RUNS} (fresh process each)\n")
    print("| command | min s | median s | max s |")
    print("|---|---|---|---|")
    with tempfile.TemporaryDirectory() as out:
        for stack in ("dev", "staging", "prod"):
            command = [gpu_dra, "preview", "--stack", stack, "--out", out]
            times = timed(command)
            shown = f"gpu-dra preview --stack {stack}"
            print(f"| `{shown}` | {min(times):.2f} | {statistics.median(times):.2f} | {max(times):.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
