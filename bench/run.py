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


def cel_throughput() -> list[str]:
    """Compile and evaluation throughput of the CEL engine, in-process (what lint and explain pay per selector)."""
    from gpu_dra.core.cel import compile_selector, device_view, evaluate

    selector = ("device.driver == 'gpu.nvidia.com' && "
                "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('20Gi')) >= 0 && "
                "device.attributes['gpu.nvidia.com'].productName.matches('A100|H100|H200')")
    compile_selector(selector)  # warm the environments
    rows = []
    count = 2000
    start = time.perf_counter()
    for i in range(count):
        compile_selector(f"{selector} && {i} >= 0")  # distinct expressions: nothing cached
    rate = count / (time.perf_counter() - start)
    rows.append(f"| compile a selector (cel-expr-python checker + regex literal check) | {rate:,.0f}/s |")
    compiled = compile_selector(selector)
    device = device_view("gpu.nvidia.com", {"productName": {"string": "NVIDIA H100 80GB HBM3"},
                                            "type": {"string": "gpu"}}, {"memory": {"value": "81559Mi"}})
    count = 50000
    start = time.perf_counter()
    for _ in range(count):
        evaluate(compiled, device)
    rows.append(f"| evaluate it on one device | {count / (time.perf_counter() - start):,.0f}/s |")
    return rows


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
        guide = str(ROOT / "examples" / "guide-gpu-20gb-any.yaml")
        times = []
        for _ in range(RUNS):
            start = time.perf_counter()
            subprocess.run([gpu_dra, "lint", guide], cwd=ROOT, capture_output=True)  # exits 1: it has errors
            times.append(time.perf_counter() - start)
        print(f"| `gpu-dra lint examples/guide-gpu-20gb-any.yaml` | {min(times):.2f} | {statistics.median(times):.2f} "
              f"| {max(times):.2f} |")
    print("\n| CEL engine, in-process | throughput |\n|---|---|")
    print("\n".join(cel_throughput()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
