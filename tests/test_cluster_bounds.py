"""`--cluster` against what no Kubernetes API server sends and kubeconfigs that are no files: every read ends, within
a deadline and a memory cap, in exit 2 with a message naming the request or file and the bound, never a hang, an
exhausted memory or a traceback. Each runs the CLI as a child process (tests/fake_apiserver.py plays the server)."""

from __future__ import annotations

import copy
import json
import os
import resource
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpu_dra.cli.cluster import (
    KUBECONFIG_BYTES,
    OBJECTS_PER_READ,
    PAGES_PER_LIST,
    PAGES_PER_READ,
    READ_BYTES,
    RESPONSE_BYTES,
)

from .conftest import ROOT
from .fake_apiserver import MIB, FakeApiServer, Fault
from .test_cluster import _kubeconfig, _responses

GIB = 1 << 30
MEMORY_CAP = GIB  # address space of the CLI for the memory cases (RLIMIT_AS)
SLICES_PATH = "/apis/resource.k8s.io/v1/resourceslices"


class Run:
    """One run of the CLI: its exit code, output and seconds taken."""

    def __init__(self, returncode: int, stdout: str, stderr: str, took: float):
        self.returncode, self.stdout, self.stderr, self.took = returncode, stdout, stderr, took


def gpu_dra(*args: str, cwd: Path = ROOT, env: dict[str, str] | None = None, capped: bool = False,
            deadline: float = 60) -> Run:
    """The CLI in a process group of its own (what it starts goes with it if the deadline passes), under a memory
    cap where `capped`. A run that outlives the deadline fails the test."""

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))

    start = time.monotonic()
    process = subprocess.Popen([sys.executable, "-m", "gpu_dra.cli.main", *args], cwd=cwd, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, process_group=0,
                               env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
                               preexec_fn=cap if capped else None)
    try:
        stdout, stderr = process.communicate(timeout=deadline)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        pytest.fail(f"gpu-dra {' '.join(args)} ran longer than {deadline}s")
    return Run(process.returncode, stdout, stderr, time.monotonic() - start)


def bad_input(run: Run, *expected: str) -> None:
    assert run.returncode == 2, run.stdout + run.stderr
    assert "Traceback" not in run.stderr and "MemoryError" not in run.stderr, run.stderr
    for text in expected:
        assert text in run.stderr, run.stderr


@pytest.fixture
def fake_api() -> Iterator[FakeApiServer]:
    server = FakeApiServer()
    server.collections.update(_responses())
    yield from server.serve()


@pytest.fixture
def kubeconfig(fake_api: FakeApiServer, tmp_path: Path) -> Path:
    return fake_api.kubeconfig(tmp_path / "kubeconfig")


def inventory(kubeconfig: Path, *more: str, capped: bool = False) -> Run:
    return gpu_dra("inventory", "--cluster", "--kubeconfig", str(kubeconfig), *more, capped=capped)


# --------------------------------------------------------------------------------------------- pages


def test_continue_tokens_without_end_stop_at_the_pages_a_list_may_have(fake_api: FakeApiServer,
                                                                        kubeconfig: Path) -> None:
    """Before: read for as long as the server answered (18,000 GETs in 60 s)."""
    fake_api.faults[SLICES_PATH] = Fault(endless=True)
    run = inventory(kubeconfig)
    bad_input(run, f"answered GET {SLICES_PATH} with more than {PAGES_PER_LIST} pages of up to 500 objects "
                   "(continue tokens without end?)")
    assert fake_api.paths().count(SLICES_PATH) == PAGES_PER_LIST


def test_a_continue_token_given_twice_ends_the_list(fake_api: FakeApiServer, kubeconfig: Path) -> None:
    fake_api.faults[SLICES_PATH] = Fault(same_continue=True)
    bad_input(inventory(kubeconfig), f"answered GET {SLICES_PATH} page 2 with a continue token it gave before")
    assert fake_api.paths().count(SLICES_PATH) == 2


def test_the_pages_of_the_whole_read_are_bounded(fake_api: FakeApiServer, kubeconfig: Path) -> None:
    """Five lists of one object a page, each within the pages of a list, more than the read's together."""
    per_list = PAGES_PER_READ // 4 - 10
    lists = [SLICES_PATH, "/apis/resource.k8s.io/v1/deviceclasses", "/apis/resource.k8s.io/v1/resourceclaims",
             "/api/v1/nodes", "/apis/resource.k8s.io/v1/resourceclaimtemplates"]
    for path in lists:
        fake_api.collections[path] = [{"metadata": {"name": f"o{i}", "namespace": "ml"}} for i in range(per_list)]
    fake_api.page_size = 1
    run = gpu_dra("explain", "--cluster", "--kubeconfig", str(kubeconfig))
    bad_input(run, f"answered more than {PAGES_PER_READ:,} pages in all by GET {lists[4]}",
              "With explain, -n NAMESPACE reads one namespace's pods and events.")
    assert len(fake_api.requests) == 1 + PAGES_PER_READ  # /version, then every page the bound lets through


def test_the_read_as_a_whole_has_a_deadline(fake_api: FakeApiServer, kubeconfig: Path) -> None:
    """Each page comes in time, the pages never end: the read stops at 20 times --request-timeout. Each page comes
    0.45 s before its timeout: with the suite on every core of a busy machine, 0.3 s was sometimes not enough."""
    fake_api.faults[SLICES_PATH] = Fault(endless=True, stall=0.05)
    run = inventory(kubeconfig, "--request-timeout", "0.5")
    bad_input(run, "took longer than 10s in all (20 times --request-timeout), at GET "
                   f"{SLICES_PATH}: a slow cluster may need a longer --request-timeout")
    assert run.took < 20  # the pages never end


# --------------------------------------------------------------------------------------------- bytes


@pytest.mark.parametrize("announced", [True, False], ids=["content-length", "until-closed"])
def test_an_answer_of_a_gigabyte_is_refused_within_the_memory_cap(fake_api: FakeApiServer, kubeconfig: Path,
                                                                  announced: bool) -> None:
    """Before: the body was read whole (2.1 GB resident; under a 1 GiB cap MemoryError, reported as "cannot reach
    the API server")."""
    fake_api.faults[SLICES_PATH] = Fault(size=GIB, unannounced=not announced)
    run = inventory(kubeconfig, capped=True)
    size = f"of {GIB:,} bytes (its Content-Length)" if announced else f"of more than {RESPONSE_BYTES:,} bytes"
    bad_input(run, f"answered GET {SLICES_PATH} with a body {size}, more than one answer may hold (64 MiB")


def test_a_gzip_bomb_is_inflated_no_further_than_an_answer_may_hold(fake_api: FakeApiServer,
                                                                    kubeconfig: Path) -> None:
    """4 MB that inflate to 4 GiB. Before: inflated until the request timed out (1.9 GB resident)."""
    fake_api.faults[SLICES_PATH] = Fault(gzip_bomb=4 * GIB)
    run = inventory(kubeconfig, capped=True)
    bad_input(run, f"answered GET {SLICES_PATH} with a body of more than {RESPONSE_BYTES:,} bytes (inflated from ")


def test_the_bytes_of_the_whole_read_are_bounded(fake_api: FakeApiServer, kubeconfig: Path) -> None:
    """Pages each within what an answer may hold, without end: the read stops at READ_BYTES in all (with
    --read-memory raised, which these pages of padding would reach first)."""
    fake_api.faults[SLICES_PATH] = Fault(size=60 * MIB, endless=True)
    run = inventory(kubeconfig, "--read-memory", "8Gi", capped=True)
    bad_input(run, f"answered more than {READ_BYTES:,} bytes in all by GET {SLICES_PATH}")
    assert fake_api.paths().count(SLICES_PATH) == READ_BYTES // (60 * MIB) + 1


def test_json_that_amplifies_is_refused_before_it_is_parsed(fake_api: FakeApiServer, kubeconfig: Path) -> None:
    """An answer within what one may hold whose JSON takes 24 times its size in memory: 20 million empty objects
    (60 MB; 1.6 GB as Python dicts). Its parsed size is estimated from the text first: refused in time, without a
    memory cap, and with what to do."""
    fake_api.faults[SLICES_PATH] = Fault(empty_items=20_000_000)
    run = inventory(kubeconfig)
    bad_input(run, f"the objects the API server at {fake_api.url} answered, up to GET {SLICES_PATH}, would take "
                   "about 2,346 MiB of memory once parsed, more than --read-memory (768 MiB): raise it")
    assert run.took < 30


def test_read_memory_raises_the_bound(fake_api: FakeApiServer, kubeconfig: Path) -> None:
    fake_api.faults[SLICES_PATH] = Fault(empty_items=20_000_000)
    run = inventory(kubeconfig, "--read-memory", "512Mi")
    bad_input(run, "more than --read-memory (512 MiB)")
    assert inventory(kubeconfig, "--read-memory", "lots").stderr.endswith(
        "argument --read-memory: 'lots' is not a size such as 1Gi or 4Gi (1Mi at least)\n")


def test_memory_running_out_is_said_so(fake_api: FakeApiServer, kubeconfig: Path) -> None:
    """Where the machine has less memory than --read-memory allows: the error says memory ran out, not "cannot reach
    the API server: MemoryError" as before."""
    fake_api.faults[SLICES_PATH] = Fault(empty_items=20_000_000)
    run = inventory(kubeconfig, "--read-memory", "8Gi", capped=True)
    bad_input(run, f"memory ran out while the answer to GET {SLICES_PATH} from {fake_api.url} was parsed (60,000,",
              "bytes of JSON): the machine has too little for this cluster's objects")
    assert "cannot reach" not in run.stderr


def test_the_objects_of_the_whole_read_are_bounded(fake_api: FakeApiServer, kubeconfig: Path) -> None:
    """Before: 20 million objects in 60 MB went on to inventory, which was still at them after 60 s."""
    fake_api.faults[SLICES_PATH] = Fault(empty_items=OBJECTS_PER_READ + 1)
    run = inventory(kubeconfig, capped=True)
    bad_input(run, f"answered more than {OBJECTS_PER_READ:,} objects in all by GET {SLICES_PATH}")


def test_the_body_of_a_refusal_is_not_read(fake_api: FakeApiServer, kubeconfig: Path) -> None:
    """Before: the kubernetes client read a refusal's body whole into memory (MemoryError under the cap)."""
    fake_api.faults[SLICES_PATH] = Fault(status=403, size=GIB)
    bad_input(inventory(kubeconfig, capped=True), f"refused GET {SLICES_PATH}: HTTP 403")


def test_answers_in_gzip_are_read_as_kube_apiserver_sends_them(fake_api: FakeApiServer, kubeconfig: Path) -> None:
    """gzip is asked for, as kubectl does; kube-apiserver compresses answers over 128 KiB. A GPU node without slices
    on the third page: its note shows the gzipped pages were read."""
    filler = {f"topology.example.com/zone-{i}": "x" * 40 for i in range(8)}
    nodes = [{"metadata": {"name": f"cpu-{i:04}", "labels": filler}} for i in range(1500)]
    nodes[1200] = {"metadata": {"name": "gpu-1200", "labels": {"nvidia.com/gpu.present": "true"}}}
    fake_api.collections["/api/v1/nodes"] += nodes
    run = inventory(kubeconfig)
    assert run.returncode == 0, run.stderr
    assert ("node gpu-1200 has NVIDIA GPUs (label nvidia.com/gpu.present=true), but publishes no ResourceSlice"
            in run.stdout)
    assert fake_api.gzipped == 3  # 1,502 nodes: three pages of 500 (~330 kB each), then 2


# --------------------------------------------------------------------------------------------- wrong types


def _with_slice_node_name(fake_api: FakeApiServer, node_name: Any) -> str:
    slices = copy.deepcopy(fake_api.collections[SLICES_PATH])
    slices[0]["spec"]["nodeName"] = node_name
    fake_api.collections[SLICES_PATH] = slices
    return str(slices[0]["metadata"]["name"])


@pytest.mark.parametrize("verb", ["explain", "doctor", "inventory"])
@pytest.mark.parametrize(("node_name", "written"), [(["a"], "a list"), ({"a": 1}, "a mapping"), ([], "a list"),
                                                    (5, "5")], ids=["list", "mapping", "empty-list", "number"])
def test_a_slice_whose_node_name_is_no_string_is_bad_input(fake_api: FakeApiServer, kubeconfig: Path, verb: str,
                                                           node_name: Any, written: str) -> None:
    """Before: exit 3 (TypeError: unhashable type) in explain and inventory; doctor took ['a'] for a node's name."""
    name = _with_slice_node_name(fake_api, node_name)
    run = gpu_dra(verb, "--cluster", "--kubeconfig", str(kubeconfig))
    bad_input(run, f"cluster: ResourceSlice {name}: spec.nodeName must be a node's name (a string), not {written}")


@pytest.mark.parametrize(("node_name", "written"), [(["a"], "a list"), ({"a": 1}, "a mapping"), ([], "a list")],
                         ids=["list", "mapping", "empty-list"])
def test_a_pod_whose_node_name_is_no_string_is_bad_input(fake_api: FakeApiServer, kubeconfig: Path, node_name: Any,
                                                         written: str) -> None:
    """Read for explain's Pending pods. Before: an empty list was taken for no node, and the others' pods, from a
    server that ignores fieldSelector, dropped as bound to a node."""
    fake_api.ignore_selectors = True
    fake_api.collections["/api/v1/pods"] = [{
        "metadata": {"name": "trainer", "namespace": "ml"}, "status": {"phase": "Pending"},
        "spec": {"nodeName": node_name, "containers": [{"name": "c", "image": "x"}],
                 "resourceClaims": [{"name": "gpu", "resourceClaimName": "busy"}]}}]
    run = gpu_dra("explain", "--cluster", "--kubeconfig", str(kubeconfig))
    bad_input(run, "answered GET /api/v1/pods with Pod ml/trainer whose spec.nodeName is "
                   f"{written}, not a string")


# --------------------------------------------------------------------------------------------- credential plugins

CREDENTIAL = json.dumps({"apiVersion": "client.authentication.k8s.io/v1beta1", "kind": "ExecCredential",
                         "status": {"token": "t0ken"}})
# A helper the plugin starts, holding the plugin's output, writing its pid first; `escape`: in a session of its own.
HELPER = ("import os, subprocess, sys; subprocess.Popen([sys.executable, '-c', "
          "'import os, sys, time; {escape}open(sys.argv[1], \"w\").write(str(os.getpid())); time.sleep(60)', "
          "sys.argv[1]]); {then}")


def _helper_gone(pid_file: Path) -> bool:
    """Whether the helper whose pid `pid_file` holds has ended (gone, or a zombie no one reaped yet)."""
    for _ in range(50):
        if pid_file.exists() and pid_file.read_text():
            break
        time.sleep(0.1)
    stat = Path(f"/proc/{pid_file.read_text()}/stat")
    for _ in range(50):
        if not stat.exists() or stat.read_text().rpartition(")")[2].split()[0] == "Z":
            return True
        time.sleep(0.1)
    return False


def _plugin_run(tmp_path: Path, command: str, args: list[str]) -> Run:
    plugin = {"exec": {"apiVersion": "client.authentication.k8s.io/v1beta1", "command": command, "args": args}}
    _kubeconfig(tmp_path / "kubeconfig", "http://127.0.0.1:9", plugin)
    return gpu_dra("inventory", "--cluster", "--kubeconfig", "kubeconfig", "--request-timeout", "3s", cwd=tmp_path)


@pytest.mark.parametrize("then", ["print(" + repr(CREDENTIAL) + ")", "import time; time.sleep(60)"],
                         ids=["plugin-exited", "plugin-sleeps"])
def test_a_credential_plugin_whose_helper_holds_its_output_is_bounded(tmp_path: Path, then: str) -> None:
    """Before: communicate() waited for the output to close, 60 s, whatever --request-timeout said."""
    run = _plugin_run(tmp_path, sys.executable, ["-c", HELPER.format(escape="", then=then), str(tmp_path / "pid")])
    outcome = ("exited, but a process it started kept its output open past 3s" if then.startswith("print")
               else "did not finish within 3s")
    bad_input(run, "kubeconfig kubeconfig: the credential plugin `", f"` {outcome} (--request-timeout)")
    assert run.took < 20
    assert _helper_gone(tmp_path / "pid")  # killed with the plugin's process group


def test_a_shell_plugin_with_a_background_job_is_bounded(tmp_path: Path) -> None:
    run = _plugin_run(tmp_path, "sh", ["-c", f"sleep 60 & echo '{CREDENTIAL}'"])
    bad_input(run, "kubeconfig kubeconfig: the credential plugin `sh -c sleep 60 & echo '{",
              "exited, but a process it started kept its output open past 3s (--request-timeout)")
    assert run.took < 20


def test_a_helper_that_leaves_the_plugin_s_process_group_does_not_hold_the_read(tmp_path: Path) -> None:
    """It cannot be killed with the group: its output is read PLUGIN_GRACE seconds longer, then no more."""
    pid_file = tmp_path / "pid"
    helper = HELPER.format(escape="os.setsid(); ", then="print(" + repr(CREDENTIAL) + ")")
    try:
        run = _plugin_run(tmp_path, sys.executable, ["-c", helper, str(pid_file)])
        bad_input(run, "exited, but a process it started kept its output open past 3s (--request-timeout)")
        assert run.took < 20
    finally:
        for _ in range(50):
            if pid_file.exists() and pid_file.read_text():
                os.kill(int(pid_file.read_text()), signal.SIGKILL)  # the helper this test started
                break
            time.sleep(0.1)


# --------------------------------------------------------------------------------------------- kubeconfig files


@pytest.mark.parametrize("kind", ["named pipe", "directory", "device", "huge"])
def test_a_kubeconfig_that_is_no_file_is_refused_before_it_is_read(tmp_path: Path, kind: str) -> None:
    """Before: a named pipe blocked the open forever, /dev/zero was read until memory ran out."""
    name = "config"
    if kind == "named pipe":
        os.mkfifo(tmp_path / name)
    elif kind == "directory":
        (tmp_path / name).mkdir()
    elif kind == "device":
        name = "/dev/zero"
    else:
        with (tmp_path / name).open("wb") as sparse:
            sparse.truncate(200 * MIB)
    run = gpu_dra("inventory", "--cluster", "--kubeconfig", name, cwd=tmp_path, capped=True, deadline=30)
    if kind == "huge":
        bad_input(run, f"kubeconfig {name}: {name} holds {200 * MIB:,} bytes, more than a kubeconfig "
                       f"({KUBECONFIG_BYTES >> 20} MiB at most)")
    else:
        bad_input(run, f"kubeconfig {name}: {name} is a {kind}, not a regular file")


def test_each_file_of_kubeconfig_is_checked(fake_api: FakeApiServer, tmp_path: Path) -> None:
    """KUBECONFIG names files to merge: the loader reads each, so each is checked."""
    fake_api.kubeconfig(tmp_path / "kubeconfig")
    os.mkfifo(tmp_path / "more")
    run = gpu_dra("inventory", "--cluster", cwd=tmp_path, env={"KUBECONFIG": "kubeconfig:more"}, deadline=30)
    bad_input(run, "kubeconfig kubeconfig:more: more is a named pipe, not a regular file")


def test_a_token_file_that_is_a_named_pipe_is_refused(fake_api: FakeApiServer, tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "token")
    _kubeconfig(tmp_path / "kubeconfig", fake_api.url, {"tokenFile": "token"})
    run = gpu_dra("inventory", "--cluster", "--kubeconfig", "kubeconfig", cwd=tmp_path, deadline=30)
    bad_input(run, "kubeconfig kubeconfig: ", "/token is a named pipe, not a regular file")  # named absolute


def test_a_kubeconfig_of_ordinary_size_is_read(fake_api: FakeApiServer, tmp_path: Path) -> None:
    """Many clusters with their certificates, within KUBECONFIG_BYTES: read as before."""
    config = yaml.safe_load(fake_api.kubeconfig(tmp_path / "kubeconfig").read_text())
    certificate = "QUJD" * 400  # the size of a base64 CA certificate
    config["clusters"] += [{"name": f"c{i}", "cluster": {"server": "https://example.com",
                                                        "certificate-authority-data": certificate}}
                           for i in range(400)]
    (tmp_path / "kubeconfig").write_text(yaml.safe_dump(config))
    assert (tmp_path / "kubeconfig").stat().st_size > KUBECONFIG_BYTES // 2
    run = gpu_dra("inventory", "--cluster", "--kubeconfig", "kubeconfig", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
