"""An organisation's size for `make bench`: many stacks hosting many teams, and many legacy workloads for migrate.

`organisation_project` builds a copy of the project whose stacks are copies of dev, staging and prod (each with its
own cluster name, region and VPC) hosting their own teams and copies of the repository's team files; a platform team
runs `gpu-dra check --all-stacks` over such a project on every pull request. `migrate_workloads` writes copies of
examples/migrate's workloads for `gpu-dra migrate --stack prod`. `organisation_rows` is the `make bench` section.
Alone: `python bench/organisation.py` prints it; `python bench/organisation.py DIR [STACKS TEAMS HOSTS]` builds an
organisation in DIR.
"""

from __future__ import annotations

import copy
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
BASES = ("dev", "staging", "prod")
REGIONS = ("us-west-2", "us-east-1", "us-east-2", "eu-west-1", "eu-central-1", "ap-northeast-1")
WORKLOAD_KINDS = ("Pod", "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "CronJob")


def _team_copy(team: dict[str, Any], name: str) -> dict[str, Any]:
    """A copy of a team file under another team name and namespace, its workloads copied to `workloads/<name>/`."""
    out = copy.deepcopy(team)
    out["name"] = name
    out.setdefault("namespace", {})["name"] = name
    out["workloads"] = [f"workloads/{name}/{Path(path).name}" for path in team.get("workloads", [])]
    if not out["workloads"]:
        del out["workloads"]
    return out


def organisation_project(directory: Path, stacks: int = 20, teams: int = 100, hosts: int = 1) -> tuple[int, int]:
    """A copy of the project with `stacks` stacks (copies of dev, staging and prod in turn, each with its own cluster
    name, region and VPC) hosting their base stack's teams and `teams` more, each on `hosts` stacks in turn: a copy
    of a team file that every one of its stacks' bases hosts (research asks for dev's L4s, ops is staging's and
    prod's), hosted as the base hosts the original (ops with admin access) and with its workloads copied. Returns
    (teams in all, most teams on one stack)."""
    shutil.copytree(ROOT / "stacks" / "teams", directory / "stacks" / "teams")
    shutil.copytree(ROOT / "workloads", directory / "workloads")
    for name in ("Pulumi.yaml", "__main__.py"):
        shutil.copy(ROOT / name, directory / name)
    originals = {path.stem: yaml.safe_load(path.read_text()) for path in (ROOT / "stacks" / "teams").glob("*.yaml")}
    bases = {name: yaml.safe_load((ROOT / "stacks" / f"Pulumi.{name}.yaml").read_text()) for name in BASES}
    names = [f"{BASES[index % len(BASES)]}-{index:02d}" for index in range(stacks)]
    hosted: dict[str, dict[str, Any]] = {name: dict(bases[name.split("-")[0]]["config"]["gpu-dra:teams"])
                                         for name in names}
    for index in range(teams):
        on = [names[(index + step) % stacks] for step in range(hosts)]
        common = [team for team in hosted[on[0]] if all(team in bases[stack.split("-")[0]]["config"]["gpu-dra:teams"]
                                                         for stack in on)]
        source = common[index // stacks % len(common)]
        name = f"{source}-{index:03d}"
        team = _team_copy(originals[source], name)
        (directory / "stacks" / "teams" / f"{name}.yaml").write_text(yaml.safe_dump(team, sort_keys=False))
        for original, written in zip(originals[source].get("workloads", []), team.get("workloads", []), strict=True):
            manifest = yaml.safe_load((ROOT / original).read_text())
            manifest["metadata"]["namespace"] = name
            (directory / written).parent.mkdir(parents=True, exist_ok=True)
            (directory / written).write_text(yaml.safe_dump(manifest, sort_keys=False))
        for stack in on:
            hosted[stack][name] = copy.deepcopy(bases[stack.split("-")[0]]["config"]["gpu-dra:teams"][source])
    for index, name in enumerate(names):
        stack = copy.deepcopy(bases[name.split("-")[0]])
        cluster = stack["config"]["gpu-dra:cluster"]
        region = REGIONS[index % len(REGIONS)]
        cluster["name"] = f"gpu-{name}"
        cluster["region"] = region
        networking = cluster["networking"]
        if "newVpc" in networking:
            networking["newVpc"]["cidr"] = f"10.{100 + index}.0.0/16"
            zones = len(networking["newVpc"]["availabilityZones"])
            networking["newVpc"]["availabilityZones"] = [f"{region}{zone}" for zone in "abc"[:zones]]
        else:
            networking["vpcId"] = f"vpc-{index:017x}"
        stack["config"]["gpu-dra:teams"] = hosted[name]
        (directory / "stacks" / f"Pulumi.{name}.yaml").write_text(yaml.safe_dump(stack, sort_keys=False))
    return len(originals) + teams, max(len(teams_of) for teams_of in hosted.values())


def migrate_workloads(path: Path, count: int) -> None:
    """`count` GPU workloads for migrate in one file: copies of examples/migrate's GPU workloads in turn (those asking
    for nvidia.com/* or naming resource claims), each renamed."""
    examples = [document for file in sorted((ROOT / "examples" / "migrate").glob("*.yaml"))
                for document in yaml.safe_load_all(file.read_text())
                if document and document.get("kind") in WORKLOAD_KINDS
                and ("nvidia.com/" in json.dumps(document) or "resourceClaims" in json.dumps(document))]
    documents = []
    for index in range(count):
        document = copy.deepcopy(examples[index % len(examples)])
        document["metadata"]["name"] = f"{document['metadata']['name']}-{index:04d}"
        documents.append(document)
    path.write_text(yaml.safe_dump_all(documents, sort_keys=False))


# Runs the command as a child of this small process and reports its CPU time, wall-clock time and peak RSS
# (bench/run.py's launcher, with the child's user + sys time from the same wait4; a forked pool's workers count too).
_LAUNCHER = ("import os, sys, time; start = time.perf_counter(); pid = os.fork()\n"
             "if pid == 0: os.execvp(sys.argv[2], sys.argv[2:])\n"
             "_, status, usage = os.wait4(pid, 0)\n"
             "open(sys.argv[1], 'w').write(f'{usage.ru_utime + usage.ru_stime} {time.perf_counter() - start} '\n"
             "                             f'{usage.ru_maxrss}')\n"
             "sys.exit(os.waitstatus_to_exitcode(status))")


@dataclass(frozen=True)
class Usage:
    cpu: float  # median user + sys seconds, the process and the children it waited for
    wall: float  # median wall-clock seconds
    peak: float  # largest peak RSS of one process, MB


def measured_cpu(command: list[str], runs: int = 3, ok: tuple[int, ...] = (0,)) -> Usage:
    """What fresh processes of `command` took, output discarded. CPU time is the figure: the bench shares the
    machine's cores with whatever else runs, which stretches wall-clock time."""
    cpu, wall, peaks = [], [], []
    with tempfile.TemporaryDirectory() as scratch:
        usage_file = Path(scratch) / "usage"
        for _ in range(runs):
            with tempfile.TemporaryFile() as errors:
                result = subprocess.run([sys.executable, "-c", _LAUNCHER, str(usage_file), *command], cwd=ROOT,
                                        stdout=subprocess.DEVNULL, stderr=errors)
                if result.returncode not in ok:
                    errors.seek(0)
                    raise SystemExit(f"{' '.join(command)} failed: {errors.read().decode(errors='replace')}")
            seconds, elapsed, peak = usage_file.read_text().split()
            cpu.append(float(seconds))
            wall.append(float(elapsed))
            peaks.append(int(peak) / 1024)
    return Usage(statistics.median(cpu), statistics.median(wall), max(peaks))


# The floor of a check: loading each stack and running the program under Pulumi's mocks, nothing judged. No check can
# go below it without running less of the program than `pulumi preview` does.
_PROGRAM_ONLY = ("import gc, os, sys; from pathlib import Path\n"
                 "from gpu_dra.cli.main import GC_THRESHOLDS; gc.set_threshold(*GC_THRESHOLDS)  # as gpu-dra runs\n"
                 "from gpu_dra.cli.offline import run_program\n"
                 "from gpu_dra.core.config.loader import available_stacks, build_stack, stack_values\n"
                 "root = Path(sys.argv[1])\n"
                 "for name in available_stacks(root):\n"
                 "    values, located = stack_values(root, name)\n"
                 "    run_program(root, name, values, build_stack(root, name, values, located))\n"
                 "os._exit(0)  # as gpu-dra ends: without tearing the SDKs' modules down")
# The floor of migrate: reading the file with the line of every key, which its messages and `where` need.
_PARSE_ONLY = ("import gc, os, sys; from gpu_dra.cli.main import GC_THRESHOLDS; gc.set_threshold(*GC_THRESHOLDS)\n"
               "from gpu_dra.core.yamlsource import parse_documents\n"
               "parse_documents(open(sys.argv[1]).read(), sys.argv[1])\n"
               "os._exit(0)")


def organisation_rows(gpu_dra: str) -> list[str]:
    """`check --all-stacks` on the repository's 3 stacks and on organisations of 20 stacks (100 teams in all, and
    100 teams on every stack), and `migrate` of 4,000 workloads, in CPU seconds beside their floors: the program
    under mocks alone for check, the parse with lines for migrate. Targets: 3 stacks <= 2 s, 20 stacks and 100 teams
    <= 10 s, 4,000 workloads <= 5 s."""
    python = sys.executable
    rows = ["| input | command | CPU s (user + sys) | wall s | peak MB | floor CPU s |", "|---|---|---|---|---|---|"]

    def row(label: str, shown: str, usage: Usage, floor: Usage | None) -> None:
        rows.append(f"| {label} | `{shown}` | {usage.cpu:.2f} | {usage.wall:.2f} | {usage.peak:.0f} | "
                    f"{f'{floor.cpu:.2f}' if floor else ''} |")

    floor = measured_cpu([python, "-c", _PROGRAM_ONLY, str(ROOT)])
    row("the repository's 3 stacks (target <= 2 s)", "gpu-dra check --all-stacks",
        measured_cpu([gpu_dra, "check", "--all-stacks"], ok=(0, 1)), floor)
    for hosts, label, runs in ((1, "20 stacks, 100 teams in all (target <= 10 s)", 3),
                               (20, "20 stacks, the same 100 teams on every one", 1)):
        with tempfile.TemporaryDirectory() as folder:
            teams, most = organisation_project(Path(folder), hosts=hosts)
            label = f"{label}: {teams} teams, up to {most} on a stack"
            floor = measured_cpu([python, "-c", _PROGRAM_ONLY, folder], runs=runs)
            for jobs in ("1", "2"):
                shown = f"gpu-dra --project-dir ORG check --all-stacks --jobs {jobs}"
                row(label, shown, measured_cpu([gpu_dra, "--project-dir", folder, "check", "--all-stacks", "--jobs",
                                                jobs], runs=runs, ok=(0, 1)), floor)
    with tempfile.TemporaryDirectory() as folder:
        workloads = Path(folder) / "workloads-4000.yaml"
        migrate_workloads(workloads, 4000)
        row("4,000 workloads, examples/migrate's GPU workloads in turn (target <= 5 s)",
            "gpu-dra migrate --stack prod workloads-4000.yaml",
            measured_cpu([gpu_dra, "migrate", "--stack", "prod", str(workloads)], ok=(0, 1)),
            measured_cpu([python, "-c", _PARSE_ONLY, str(workloads)]))
    return rows


if __name__ == "__main__":
    if len(sys.argv) >= 2:  # build an organisation to look at: DIR [STACKS TEAMS HOSTS]
        print("teams in all, most on one stack:", organisation_project(Path(sys.argv[1]), *map(int, sys.argv[2:])))
    else:
        print("\n".join(organisation_rows(str(Path(sys.executable).parent / "gpu-dra"))))
