"""Hostile input to the CLI (issue 24, items 8 and 9): numbers no API object holds, keys that are lists or
mappings, input that never ends or is not there, output that cannot be written, and a scheduler log line shaped to
make its parse quadratic. Each is bad input (exit 2, a message naming the file and object) or is read in time: never
an internal error (exit 3), a traceback or a hang. The CLI runs as a child process with a deadline."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import pytest

from gpu_dra.core.dra.objects import ObjectError
from gpu_dra.core.dra.slices import parse_slice
from gpu_dra.core.yamlsource import PARSED_MEMORY, parsed_size

from .conftest import ROOT, Project

DUMP = ROOT / "tests" / "data" / "resourceslices" / "h100-80gb-hbm3_eks-p5_v25.12.0.yaml"
CLAIM = ROOT / "examples" / "claim-pair-same-pcie-root.yaml"
FIRST_SLICE = "ResourceSlice ip-100-64-147-149.ec2.internal-compute-domain.nvidia.com-pslfg"
DEADLINE = 60  # seconds: each run here takes a few
MEMORY = 1 << 30


def _cli(*argv: str | Path, stdout: int | IO[Any] = subprocess.PIPE, stdin: int | IO[Any] = subprocess.DEVNULL,
         closed: int | None = None, deadline: float = DEADLINE) -> subprocess.CompletedProcess[str]:
    """gpu-dra as a child process, within `deadline` seconds and 1 GB of address space; `closed`: a file descriptor
    it starts without (0 as `<&-`, 1 as `>&-`)."""

    def limits() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))
        if closed is not None:
            os.close(closed)

    return subprocess.run([sys.executable, "-m", "gpu_dra.cli.main", *map(str, argv)], cwd=ROOT, text=True,
                          stdin=stdin, stdout=stdout, stderr=subprocess.PIPE, timeout=deadline, preexec_fn=limits,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


def _refused(result: subprocess.CompletedProcess[str], *named: str) -> None:
    """Exit 2, no traceback, and a message that names each of `named`."""
    assert (result.returncode, "Traceback" in result.stderr) == (2, False), result.stderr
    for text in named:
        assert text in result.stderr, result.stderr


def _edited(tmp_path: Path, old: str, new: str, count: int = 1) -> Path:
    """A copy of the p5 dump with `old` replaced by `new` (`count` times)."""
    text = DUMP.read_text()
    assert text.count(old) >= count
    path = tmp_path / "slices.yaml"
    path.write_text(text.replace(old, new, count))
    return path


VERBS: dict[str, Callable[[Path], tuple[str | Path, ...]]] = {
    "inventory": lambda path: ("inventory", path),
    "explain": lambda path: ("explain", path, CLAIM),
    "doctor": lambda path: ("doctor", path),
}


# --------------------------------------------------------------------------------------------- numbers


@pytest.mark.parametrize("verb", VERBS)
@pytest.mark.parametrize("field", ["resourceSliceCount", "generation"])
def test_an_infinite_pool_count_names_the_slice_and_the_field(tmp_path: Path, field: str, verb: str) -> None:
    """`int(.inf)` raised OverflowError: exit 3 in all three verbs."""
    path = _edited(tmp_path, f"      {field}: 1\n", f"      {field}: .inf\n")
    _refused(_cli(*VERBS[verb](path)), f"slices.yaml: {FIRST_SLICE}: spec.pool.{field} is inf")


@pytest.mark.parametrize("value,shown", [
    (float("-inf"), "-inf"), (float("nan"), "nan"), (2**64, "18446744073709551616"), (True, "True"), ("5", "'5'"),
    (1.5, "1.5"), (0, "0"), (-1, "-1"), (10**400, "a number of more than 40 digits"),
], ids=["-inf", "nan", "2^64", "true", "text", "1.5", "0", "-1", "10^400"])
def test_a_pool_count_the_api_would_not_store_is_refused(value: Any, shown: str) -> None:
    """Each was read as a count no slice has (True as 1, "5" as 5, 1.5 as 1, 0 as 1, 2^64 and 10^400 beyond the
    int64 the API holds), or crashed (-inf)."""
    slice_ = {"metadata": {"name": "s"}, "spec": {"driver": "d", "pool": {"name": "p", "resourceSliceCount": value}}}
    with pytest.raises(ObjectError) as error:
        parse_slice(slice_, "s.yaml")
    assert str(error.value).startswith(f"s.yaml: ResourceSlice s: spec.pool.resourceSliceCount is {shown}; ")


def test_an_infinite_int_attribute_names_the_device_and_the_attribute(tmp_path: Path) -> None:
    """The CEL view took `int(.inf)`: OverflowError, exit 3, in explain."""
    path = _edited(tmp_path, "        id:\n          int: 0\n", "        id:\n          int: .inf\n")
    _refused(_cli("explain", path, CLAIM),
             f"slices.yaml: {FIRST_SLICE}: spec.devices[0].attributes.id.int must be a whole number that fits an int64")


@pytest.mark.parametrize("verb", VERBS)
def test_a_number_of_5000_digits_is_refused_at_its_line(tmp_path: Path, verb: str) -> None:
    """yaml-rs read it (a million digits take it seconds), and printing it failed: Python prints no int of more
    than 4,300 digits (exit 3)."""
    path = _edited(tmp_path, "        id:\n          int: 0\n", "        id:\n          int: 1" + "0" * 5000 + "\n")
    _refused(_cli(*VERBS[verb](path)), "slices.yaml:23: items[0].spec.devices[0].attributes.id.int: a number of 5,001 "
                                       "characters, which nothing gpu-dra reads holds")


def test_an_infinite_request_count_is_a_lint_finding(tmp_path: Path) -> None:
    claim = tmp_path / "claim.yaml"
    claim.write_text(CLAIM.read_text().replace("count: 2", "count: .inf", 1))
    result = _cli("lint", claim)
    assert (result.returncode, result.stderr) == (1, "")
    assert "count (line" in result.stdout and "inf is not of type 'integer'" in result.stdout


def test_a_node_offering_1e999999_gpus_is_read_in_time(tmp_path: Path) -> None:
    """int() of the quantity took 40 s, and printing it failed (more than 4,300 digits). No int64 holds it, so it is
    no count of GPUs the device plugin offers (parse_quantity refuses it)."""
    nodes = tmp_path / "nodes.yaml"
    nodes.write_text("apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Node\n"
                     "  metadata: {name: ip-100-64-147-149.ec2.internal}\n"
                     "  status: {allocatable: {nvidia.com/gpu: '1e999999'}, nodeInfo: {kubeletVersion: v1.34.2}}\n")
    result = _cli("doctor", DUMP, nodes, deadline=20)
    assert (result.returncode, result.stderr) == (0, "")
    assert "NVIDIA's device plugin offers" not in result.stdout


def test_a_quota_of_1e5000_shows_in_the_drift(tmp_path: Path) -> None:
    """The quota's value as a whole number had more than 4,300 digits: str() failed, exit 3. No quantity holds it,
    so the drift shows it as written."""
    quota = tmp_path / "quota.yaml"
    quota.write_text("apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ResourceQuota\n"
                     "  metadata: {name: gpu-dra-devices, namespace: ml-training}\n"
                     "  spec: {hard: {count/resourceclaims.resource.k8s.io: '1e5000'}}\n")
    result = _cli("doctor", "--stack", "dev", quota, deadline=20)
    assert (result.returncode, "Traceback" in result.stderr) == (0, False), result.stderr
    assert "-    count/resourceclaims.resource.k8s.io: 1e5000" in result.stdout


def test_a_workload_asking_1e999999_gpus_is_refused_in_time(tmp_path: Path) -> None:
    deployment = tmp_path / "web.yaml"
    deployment.write_text((ROOT / "examples" / "migrate" / "deployment-web.yaml").read_text()
                          .replace("nvidia.com/gpu: 1", "nvidia.com/gpu: 1e999999", 1))
    _refused(_cli("migrate", "--stack", "staging", deployment, deadline=20),
             "web.yaml:32: Deployment inference/web: spec.template.spec.containers[0].resources.limits"
             "['nvidia.com/gpu']: '1e999999' is too large for a Kubernetes quantity (at most 2^63-1)")


# --------------------------------------------------------------------------------------------- keys


@pytest.mark.parametrize("verb", [*VERBS, "lint"])
def test_a_key_that_is_a_list_holding_a_mapping_is_refused(tmp_path: Path, verb: str) -> None:
    """The 10 bytes the fuzzer found: yaml-rs made the key a tuple holding a dict, TypeError, exit 3."""
    path = tmp_path / "key.yaml"
    path.write_text("{[a: {}]}")
    _refused(_cli(*VERBS.get(verb, lambda path: ("lint", path))(path)), "key.yaml:1: a key is a list or mapping")


# --------------------------------------------------------------------------------------------- reading and writing


def test_a_pod_file_whose_node_name_is_a_list_is_bad_input(tmp_path: Path) -> None:
    """The API stores spec.nodeName as a string; a list in a Pod file matched no node and read as "not
    allocatable" (exit 1) instead of naming the mistake."""
    pod = tmp_path / "pod.yaml"
    pod.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ml-training}\nspec:\n"
                   "  nodeName: [a, b]\n  containers: [{name: c, image: x, resources: {claims: [{name: g}]}}]\n"
                   "  resourceClaims: [{name: g, resourceClaimName: h100-pair-same-pcie-root}]\n")
    _refused(_cli("explain", DUMP, pod, CLAIM, "--pod", "ml-training/p"),
             "Pod ml-training/p: spec.nodeName: must be a string (a node's name), not list")


def test_a_closed_stdin_is_bad_input() -> None:
    result = _cli("lint", "-", closed=0)
    _refused(result)
    assert result.stderr == "gpu-dra: <stdin>: standard input is closed; pipe the input in, or name a file\n"


def test_logs_with_a_closed_stdin_is_bad_input() -> None:
    result = _cli("logs", "-", closed=0)
    _refused(result)
    assert result.stderr == "gpu-dra: <stdin>: standard input is closed; pipe the log in, or name a file\n"


def test_logs_refuses_a_device_it_would_read_for_ever() -> None:
    """logs streams (a live log comes through a pipe), so /dev/zero named as the log ran until killed."""
    _refused(_cli("logs", "/dev/zero", deadline=20), "/dev/zero: a device, not a log file")


ENDLESS = "is longer than 256 Mi characters, more than any file of its kind gpu-dra reads"


def test_an_endless_file_is_refused_within_the_bounds() -> None:
    _refused(_cli("lint", "/dev/zero"), f"/dev/zero: {ENDLESS}")


def test_an_endless_stdin_is_refused_within_the_bounds() -> None:
    with open("/dev/zero", "rb") as zeros:
        _refused(_cli("inventory", "-", stdin=zeros), f"<stdin>: {ENDLESS}")


def test_a_team_file_linked_to_an_endless_device_is_refused_within_the_bounds(project: Project) -> None:
    """A pull request can add a team file that is a symbolic link: read whole, it filled the memory."""
    team = project.root / "stacks" / "teams" / "research.yaml"
    team.unlink()
    team.symlink_to("/dev/zero")
    _refused(_cli("--project-dir", project.root, "render", "--stack", "dev", "--out", project.root / "out"),
             "stacks/teams/research.yaml: is longer than 4 Mi characters, more than any file of its kind")


def test_a_team_file_made_to_fill_the_memory_is_refused_at_once(project: Project) -> None:
    """A pull request's team file of 200 MB of empty mappings: parsed with lines it would take gigabytes; a project
    file (a few kB) is read up to 4 Mi characters."""
    team = project.root / "stacks" / "teams" / "research.yaml"
    with team.open("w") as out:
        out.write("name: research\nnotes: [" + "{}, " * (50 << 20) + "{}]\n")
    _refused(_cli("--project-dir", project.root, "check", "--stack", "dev", deadline=30),
             "stacks/teams/research.yaml: is longer than 4 Mi characters, more than any file of its kind")


def test_a_team_file_under_the_size_bound_made_to_fill_the_memory_is_refused_at_once(project: Project) -> None:
    """3 MB of `- a: b` lines, under the 4 Mi characters of a project file, would take about 1 GB parsed with lines:
    a project file may take PROJECT_FILE_MEMORY once parsed."""
    team = project.root / "stacks" / "teams" / "research.yaml"
    team.write_text("name: research\nnotes:\n" + "- a: b\n" * 430_000)
    _refused(_cli("--project-dir", project.root, "check", "--stack", "dev", deadline=30),
             "stacks/teams/research.yaml: would take about", "more than the 64 MiB gpu-dra gives a stack or team file")


# The shapes that cost the most memory per character through each parser (tests/test_yamlsource_memory.py), each
# sized to just under the default bound (PARSED_MEMORY) by its estimate: read whole under a 1 GB address space.
def _items_under(make: Callable[[int], str], parser: str) -> int:
    per_thousand = parsed_size(make(1001), parser) - parsed_size(make(1), parser)
    return (PARSED_MEMORY - (16 << 20)) * 1000 // per_thousand


HEAVIEST = {
    "json": (lambda n: '{"kind": "List", "items": [' + ",".join(["{}"] * n) + "]}", "json-unique", "inventory"),
    "yaml": (lambda n: "kind: List\nitems:\n" + "- a: b\n" * n, "yaml", "inventory"),
    "lines": (lambda n: "kind: List\nitems:\n" + "- - - a\n" * n, "lines", "lint"),
}


@pytest.mark.parametrize("shape", HEAVIEST)
def test_a_dump_at_the_memory_bound_is_read_within_1_gb(tmp_path: Path, shape: str) -> None:
    """21 MB of empty objects in a JSON List took 1.1 GB in `gpu-dra inventory`: bounded by size only, and every
    object copied once more after the parse."""
    make, parser, verb = HEAVIEST[shape]
    path = tmp_path / "dump.yaml"
    path.write_text(make(_items_under(make, parser)))
    result = _cli(verb, path)
    assert "Traceback" not in result.stderr and "MemoryError" not in result.stderr, result.stderr
    assert result.returncode in (0, 1, 2) and "would take about" not in result.stderr, result.stderr


@pytest.mark.parametrize("shape", HEAVIEST)
def test_a_dump_over_the_memory_bound_is_refused_before_it_is_parsed(tmp_path: Path, shape: str) -> None:
    make, parser, verb = HEAVIEST[shape]
    path = tmp_path / "dump.yaml"
    path.write_text(make(_items_under(make, parser) * 11 // 10))
    _refused(_cli(verb, path, deadline=20), f"{path}: would take about", "more than the 768 MiB gpu-dra gives")


def test_the_files_of_one_run_share_the_memory_bound(tmp_path: Path) -> None:
    """Two files each under --read-memory, together over it: the second is refused, naming what was left."""
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    for path in (first, second):
        path.write_text('{"kind": "List", "items": [' + ",".join(["{}"] * 30_000) + "]}")
    _refused(_cli("inventory", "--read-memory", "6Mi", first, second),
             f"{second}: would take about", "MiB left of the 6 MiB", "raise --read-memory")
    assert "would take" not in _cli("inventory", "--read-memory", "12Mi", first, second).stderr


@pytest.mark.parametrize("argv", [("lint", CLAIM), ("explain", DUMP, CLAIM), ("inventory", DUMP), ("--help",),
                                  ("lint", "--help"), ("--version",)],
                         ids=["lint", "explain", "inventory", "help", "lint-help", "version"])
def test_output_that_cannot_be_written_is_one_line_and_exit_2(argv: tuple[str | Path, ...]) -> None:
    """Large output failed with OSError (exit 3), short output was lost with exit 0 or 1."""
    with open("/dev/full", "w") as full:
        result = _cli(*argv, stdout=full)
    assert (result.returncode, result.stderr) == (2, "gpu-dra: cannot write to standard output: No space left on "
                                                     "device\n")


def test_a_closed_stdout_is_one_line_and_exit_2() -> None:
    """Python starts with sys.stdout None: AttributeError, exit 3, and a traceback at exit."""
    result = _cli("lint", CLAIM, closed=1)
    assert (result.returncode, result.stderr) == (2, "gpu-dra: cannot write to standard output: it is closed\n")


# --------------------------------------------------------------------------------------------- logs


def test_a_long_word_in_a_dra_line_is_parsed_in_linear_time(tmp_path: Path) -> None:
    """Each key=value search started at every character of a word: 40,000 characters took 13 s; 400,000 take
    minutes that way, and well under a second now."""
    log = tmp_path / "scheduler.log"
    log.write_text('I1129 10:00:00.000000 1 dynamicresources.go:123] "pod unschedulable" pod="ml/train-0" '
                   'plugin="DynamicResources" ' + "a" * 400_000 + "\n")
    result = _cli("logs", log, deadline=30)
    assert (result.returncode, result.stderr) == (0, "")
    assert "1 DRA line(s) of 1 read, 1 pod(s)" in result.stdout and "pod ml/train-0" in result.stdout
