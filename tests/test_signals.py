"""SIGTERM ends a run as Ctrl-C does (issue 24): exit 143; an output folder left entirely of the last run or entirely
of this one; no worker left running or printing tracebacks; the kubeconfig's credentials written to temporary files
by the kubernetes client removed. Each run is the CLI in a child process of its own session, with a deadline."""

from __future__ import annotations

import base64
import contextlib
import functools
import hashlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml

from gpu_dra.core.analysis.schedlogs import parallel as schedlogs

from .conftest import ROOT

PROC = Path("/proc")
needs_proc = pytest.mark.skipif(not (PROC / "self" / "stat").exists(), reason="reads the process table in /proc")


def _start(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    """The CLI in a session (and process group) of its own: what it leaves running can be found."""
    return subprocess.Popen([sys.executable, "-m", "gpu_dra.cli.main", *args], cwd=ROOT, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})})


def _finish(process: subprocess.Popen[str], deadline: float = 60) -> tuple[int, str, str]:
    try:
        stdout, stderr = process.communicate(timeout=deadline)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        raise AssertionError(f"{process.args} still running after {deadline} s") from None
    return process.returncode, stdout, stderr


def _wait_until(ready: Callable[[], bool], process: subprocess.Popen[str], deadline: float = 120) -> None:
    end = time.monotonic() + deadline
    while not ready():
        if process.poll() is not None:
            raise AssertionError(f"{process.args} ended ({process.returncode}) before the moment to signal it: "
                                 f"{process.communicate()[1][-2000:]}")
        if time.monotonic() > end:
            os.killpg(process.pid, signal.SIGKILL)
            raise AssertionError(f"{process.args}: the moment to signal it did not come in {deadline} s")
        time.sleep(0.005)


def _group(group: int) -> dict[str, float]:
    """The processes of a process group that have not ended (zombies waiting to be reaped are done), each with the
    CPU seconds it has used."""
    found = {}
    tick = os.sysconf("SC_CLK_TCK")
    for entry in PROC.iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:  # ended while the table was read
                continue
            command, fields = stat[stat.index("(") + 1:stat.rindex(")")], stat[stat.rindex(")") + 2:].split()
            if int(fields[2]) == group and fields[0] != "Z":
                found[f"{entry.name} {command}"] = (int(fields[11]) + int(fields[12])) / tick  # utime + stime
    return found


# --------------------------------------------------------------------------------------------- logs


def _workers(process: subprocess.Popen[str], count: int, cpu_seconds: float) -> bool:
    """Whether `count` workers of `process` have each used `cpu_seconds` (0: they have started)."""
    return sum(seconds >= cpu_seconds for name, seconds in _group(process.pid).items()
               if not name.startswith(f"{process.pid} ")) >= count


@needs_proc
@pytest.mark.skipif(schedlogs._cores() < 2, reason="`gpu-dra logs` reads a file in parallel parts on 2+ cores it may "
                                                   "run on")
@pytest.mark.parametrize(("moment", "count", "cpu_seconds", "times"), [("as the first worker starts", 1, 0.0, 3),
                                                                       ("as 2 workers read their parts", 2, 0.1, 1)])
def test_sigterm_ends_logs_and_its_workers_at_once_without_a_traceback(
        tmp_path: Path, moment: str, count: int, cpu_seconds: float, times: int) -> None:
    """The parent stops its workers before it exits. They used to read on, then print BrokenPipeError tracebacks to
    the terminal once the parent was gone; and a pool stopped as it started had its thread start new workers, for
    which the parent then waited forever (a few runs, as that depends on where the signal lands)."""
    klog = (ROOT / "tests" / "data" / "scheduler-klog.log").read_bytes()
    log = tmp_path / "scheduler.log"
    log.write_bytes(klog * (4 * schedlogs.PARALLEL_BYTES // len(klog)))  # a second or more per part
    for _ in range(times):
        process = _start("logs", str(log))
        _wait_until(functools.partial(_workers, process, count, cpu_seconds), process)
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            raise AssertionError(f"`gpu-dra logs` still running 30 s after SIGTERM {moment}") from None
        left = list(_group(process.pid))  # as the parent is gone
        _, stderr = process.communicate(timeout=60)  # what the workers print until they end
        assert process.returncode == 143, stderr
        assert left == []
        assert "Traceback" not in stderr and "Error" not in stderr, stderr


# --------------------------------------------------------------------------------------------- kubeconfig credentials


@pytest.fixture
def silent_tls_server() -> Iterator[tuple[str, threading.Event]]:
    """An API server that accepts connections and never answers, not even the TLS handshake: its URL, and an event
    set once a client has connected."""
    listener = socket.create_server(("127.0.0.1", 0))
    connected = threading.Event()
    held: list[socket.socket] = []

    def accept() -> None:
        with contextlib.suppress(OSError):
            while True:
                held.append(listener.accept()[0])
                connected.set()

    threading.Thread(target=accept, daemon=True).start()
    yield f"https://127.0.0.1:{listener.getsockname()[1]}", connected
    listener.close()
    for connection in held:
        connection.close()


@pytest.mark.skipif(shutil.which("openssl") is None, reason="makes the client's key and certificate with openssl")
def test_sigterm_while_reading_a_cluster_removes_the_kubeconfigs_credentials_from_the_temp_folder(
        tmp_path: Path, silent_tls_server: tuple[str, threading.Event]) -> None:
    """The kubernetes client writes a kubeconfig's client-key-data (and certificates) to temporary files for the TLS
    library and removes them in an exit handler (kubernetes-client/python@v35.0.0: kubernetes/config/kube_config.py
    _create_temp_file_with_content); SIGTERM's default ended gpu-dra without running it, leaving the key behind."""
    key, certificate = tmp_path / "client.key", tmp_path / "client.crt"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out",
                    str(certificate), "-subj", "/CN=reader", "-days", "1"], check=True, capture_output=True,
                   timeout=60)
    url, connected = silent_tls_server
    encoded = {name: base64.b64encode(path.read_bytes()).decode() for name, path in
               (("key", key), ("certificate", certificate))}
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "lab",
        "clusters": [{"name": "lab", "cluster": {"server": url, "certificate-authority-data": encoded["certificate"]}}],
        "users": [{"name": "reader", "user": {"client-certificate-data": encoded["certificate"],
                                              "client-key-data": encoded["key"]}}],
        "contexts": [{"name": "lab", "context": {"cluster": "lab", "user": "reader"}}]}))
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    process = _start("inventory", "--cluster", "--kubeconfig", str(kubeconfig), "--request-timeout", "60s",
                     env={"TMPDIR": str(temporary)})
    written = key.read_bytes()
    _wait_until(lambda: connected.is_set() and any(p.read_bytes() == written for p in temporary.iterdir()), process)
    process.send_signal(signal.SIGTERM)  # while the request waits for the server
    code, _, stderr = _finish(process, 30)
    assert code == 143, stderr
    assert sorted(p.name for p in temporary.iterdir()) == []


# --------------------------------------------------------------------------------------------- output folders


def _tree(folder: Path) -> dict[str, str]:
    """Every entry under `folder`, hidden ones too: a file with a digest of its content, a folder as such."""
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "folder"
            for p in sorted(folder.rglob("*"))}


def _stamps(folders: list[Path]) -> list[int | None]:
    stamps: list[int | None] = []
    for folder in folders:
        try:
            stamps.append(os.stat(folder).st_mtime_ns)
        except FileNotFoundError:
            stamps.append(None)
    return stamps


def _signalled_as_it_writes(args: list[str], out: Path, after: float) -> tuple[int, str]:
    """Run `args`, which write into `out`, and send SIGTERM `after` seconds after the first change in the folder
    (a file or folder added, removed or renamed): as the run starts writing."""
    folders = [out, *(p for p in out.rglob("*") if p.is_dir())]
    before = _stamps(folders)
    process = _start(*args)
    while process.poll() is None and _stamps(folders) == before:
        time.sleep(0.0002)  # a run writes its files in milliseconds; a bare spin took a core from the run itself
    time.sleep(after)
    process.send_signal(signal.SIGTERM)
    code, _, stderr = _finish(process)
    return code, stderr


AFTER = (0.0, 0.0005, 0.002, 0.008)
ROUNDS = 3  # of AFTER at most: on a busy machine (the suite runs on every core) a run can finish before its signal


def _whole(verb: list[str], old: Path, new: dict[str, str], tmp_path: Path) -> None:
    """For each delay: a folder holding the `old` run, `verb` writing the `new` one into it, SIGTERM as it writes;
    the folder is then all of one run, whichever it is. Another round of the delays follows while fewer than two
    runs were ended by the signal."""
    first = _tree(old)
    assert first != new
    ended = 0
    for index, after in enumerate(AFTER * ROUNDS):
        if index % len(AFTER) == 0 and ended >= 2:  # a round is done, and it did
            break
        out = tmp_path / f"out-{index}"
        shutil.copytree(old, out, symlinks=True)
        code, stderr = _signalled_as_it_writes([*verb, "--out", str(out)], out, after)
        assert "Traceback" not in stderr and "internal error" not in stderr, stderr
        assert code in (143, 0), (after, code, stderr)  # 0: it was done before the signal came
        ended += code == 143
        assert _tree(out) in (first, new), (after, code, sorted(set(_tree(out).items()) ^ set(new.items())))
    assert ended >= 2


def test_sigterm_while_render_writes_leaves_one_runs_folder(tmp_path: Path) -> None:
    old, new = tmp_path / "dev", tmp_path / "prod"
    for stack, folder in (("dev", old), ("prod", new)):
        process = _start("render", "--stack", stack, "--out", str(folder))
        assert _finish(process, 120)[0] == 0
    _whole(["render", "--stack", "prod"], old, _tree(new), tmp_path)


def test_sigterm_while_policy_pack_writes_leaves_one_builds_folder(tmp_path: Path) -> None:
    """The earlier build differs in every file and had one more, which this build prunes."""
    old, new = tmp_path / "earlier", tmp_path / "now"
    for folder in (old, new):
        assert _finish(_start("policy-pack", "--out", str(folder)), 120)[0] == 0
    record = old / ".gpu-dra-policy-pack"
    for path in old.rglob("*"):
        if path.is_file() and path != record:
            path.write_bytes(path.read_bytes() + b"\n# an earlier build\n")
    (old / "gpu_dra" / "core" / "gone.py").write_text("# a module an earlier build copied\n")
    record.write_text(record.read_text() + "gpu_dra/core/gone.py\n")
    _whole(["policy-pack"], old, _tree(new), tmp_path)


@needs_proc
def test_sigterm_while_policy_pack_probes_its_imports_leaves_no_process_or_temporary_folder(tmp_path: Path) -> None:
    """The build imports the copied pack in a child Python from a temporary folder: SIGTERM then stops the child and
    removes the folder, as Ctrl-C does."""
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    process = _start("policy-pack", "--out", str(tmp_path / "pack"), env={"TMPDIR": str(temporary)})
    _wait_until(lambda: len(_group(process.pid)) >= 2, process)  # gpu-dra and the probe
    process.send_signal(signal.SIGTERM)
    code, _, stderr = _finish(process, 30)
    assert code == 143, stderr
    assert list(_group(process.pid)) == []
    assert list(temporary.iterdir()) == [] and not (tmp_path / "pack").exists()


@pytest.mark.parametrize("signum,code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)], ids=["SIGTERM", "Ctrl-C"])
def test_a_signal_while_the_files_are_written_ends_the_run_once_all_are_in_place(tmp_path: Path, signum: int,
                                                                                 code: int) -> None:
    """Deterministic: the signal arrives as the first file is written; the run ends with its code once the whole
    run is in place, the record listing exactly what is there."""
    script = """
import os, signal, sys
from pathlib import Path
from gpu_dra.cli import manifest_files, output_folder
from gpu_dra.cli.process import end_on_interrupt

end_on_interrupt()
stage = output_folder._Folders.stage
def signalled(folders, folder, path, content):
    os.kill(os.getpid(), int(sys.argv[2]))
    return stage(folders, folder, path, content)
output_folder._Folders.stage = signalled
objects = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": f"team-{i}"}} for i in range(20)]
manifest_files.write_manifests(objects, Path(sys.argv[1]))
print("went on after the signal")
"""
    out = tmp_path / "out"
    result = subprocess.run([sys.executable, "-c", script, str(out), str(int(signum))], capture_output=True, text=True,
                            timeout=60, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert (result.returncode, result.stdout, result.stderr) == (code, "", "")
    written = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()}
    assert written == {".gpu-dra-files", *(f"_cluster/namespace-team-{i}.yaml" for i in range(20))}
    listed = (out / ".gpu-dra-files").read_text().splitlines()[1:]
    assert sorted(listed) == sorted(written - {".gpu-dra-files"})
