"""The kubeconfig as `--cluster` reads it, through the kubernetes client's loader: every file it reads checked
first (a regular file of a sane size), its exec credential plugin bounded in time and killed with whatever it
started, and its failures said in one line naming the file (gpu_dra.cli.cluster describes the read as a whole)."""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import stat
import subprocess
import types
from collections.abc import Iterator
from typing import IO, Any

from kubernetes import client, config
from kubernetes.config import exec_provider, kube_config
from kubernetes.config.config_exception import ConfigException

from gpu_dra.cli.cluster import KUBECONFIG_BYTES, PLUGIN_GRACE, ClusterError
from gpu_dra.cli.process import ended_on_exit, killed
from gpu_dra.cli.text import cut


class PluginFailures(logging.Handler):
    """The kubeconfig loader logs a failed credential plugin and goes on without credentials (the API server then
    answers 401); collect those failures to report them instead. Other records go where they would have gone."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)  # what Python shows when no handler is set
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno >= logging.ERROR and os.path.basename(record.pathname) == "kube_config.py":
            self.messages.append(record.getMessage())
        elif logging.lastResort is not None:
            logging.lastResort.handle(record)

    def first(self) -> str:
        """The first failure, cut (a plugin's stderr may be long), though not where _credential_plugins' own
        messages say what happened: they cut the command to 100 characters."""
        return cut(self.messages[0], 300)


@contextlib.contextmanager
def credential_plugins(limit: float | None) -> Iterator[PluginFailures]:
    """While the cluster is read, the kubeconfig's exec credential plugin (`aws eks get-token`) runs at most `limit`
    seconds (the client waits on it forever), and its failures are collected rather than logged. The client starts a
    plugin with Popen and reads its output with communicate() (kubernetes-client/python@v35.0.0:
    kubernetes/config/exec_provider.py ExecProvider.run; kube_config.py CommandTokenSource for gcp's cmd-path), which
    waits until the output closes: a plugin that leaves a process behind holding it (`sh -c 'helper & echo ...'`)
    would hold the read after the plugin is gone. So a plugin runs in a process group of its own, which is killed
    at the limit (and when a signal ends gpu-dra), and its output is read at most PLUGIN_GRACE seconds longer."""
    failures = PluginFailures()

    class Bounded(subprocess.Popen[str]):
        def __init__(self, args: Any, **options: Any) -> None:
            # A plugin that reads the terminal (the client hands it stdin when stdout is one) must stay in the
            # terminal's foreground process group: in a group of its own, reading would stop it (SIGTTIN).
            self.grouped = options.get("stdin") is None
            super().__init__(args, **options, process_group=0 if self.grouped else None)

        def communicate(self, input: str | None = None, timeout: float | None = None) -> tuple[str, str]:
            with ended_on_exit(killed(self, self.kill_all)):
                try:
                    return super().communicate(input, timeout if timeout is not None else limit)
                except subprocess.TimeoutExpired:
                    exited = self.ended()
                    self.kill_all()
                    self.close_output()
                    command = cut(" ".join(map(str, self.args if isinstance(self.args, list) else [self.args])), 100)
                    failures.messages.append(
                        f"the credential plugin `{command}` exited, but a process it started kept its output open "
                        f"past {limit:g}s (--request-timeout)" if exited else
                        f"the credential plugin `{command}` did not finish within {limit:g}s (--request-timeout)")
                    raise

        def ended(self) -> bool:
            """Whether the plugin has ended, without reaping it: until it is reaped its pid stays its group's."""
            if self.returncode is not None:
                return True
            return os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None

        def kill_all(self) -> None:
            """The plugin and, in its group, whatever it started; nothing once it is reaped (its output has
            closed, and its pid may be another process's by now)."""
            if self.returncode is not None:
                return
            with contextlib.suppress(ProcessLookupError, PermissionError):  # gone already
                if self.grouped:
                    os.killpg(self.pid, signal.SIGKILL)
                else:
                    self.kill()

        def close_output(self) -> None:
            """What is left of the output is read for PLUGIN_GRACE seconds, then no longer: a process that left
            the group may hold it open."""
            try:
                super().communicate(timeout=PLUGIN_GRACE)
            except subprocess.TimeoutExpired:
                for stream in (self.stdout, self.stderr):
                    if stream is not None:
                        stream.close()
                self.wait()  # the plugin itself was killed

    root = logging.getLogger()
    root.addHandler(failures)
    bounded = types.SimpleNamespace(Popen=Bounded, PIPE=subprocess.PIPE)
    originals = exec_provider.subprocess, kube_config.subprocess
    exec_provider.subprocess = kube_config.subprocess = bounded
    try:
        yield failures
    finally:
        exec_provider.subprocess, kube_config.subprocess = originals
        root.removeHandler(failures)


_FILE_KINDS = ((stat.S_ISFIFO, "a named pipe"), (stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a device"),
               (stat.S_ISBLK, "a device"), (stat.S_ISSOCK, "a socket"))


def _kubeconfig_file(path: Any, mode: str = "r", *args: Any, **options: Any) -> IO[Any]:
    """`open` as the kubeconfig loader sees it: a file it reads (each kubeconfig of --kubeconfig or KUBECONFIG,
    merged, and a user's tokenFile) must be a regular file of at most KUBECONFIG_BYTES. A named pipe would block the
    open until something writes to it, /dev/zero would be read until memory runs out. Opened without blocking, then
    checked; what the loader writes is opened as it asks."""
    if any(flag in mode for flag in "wax+"):
        return open(path, mode, *args, **options)
    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            kind = next((name for test, name in _FILE_KINDS if test(info.st_mode)), "a special file")
            raise ConfigException(f"{cut(str(path))} is {kind}, not a regular file")
        if info.st_size > KUBECONFIG_BYTES:
            raise ConfigException(f"{cut(str(path))} holds {info.st_size:,} bytes, more than a kubeconfig "
                                  f"({KUBECONFIG_BYTES >> 20} MiB at most): is it the right file?")
        os.set_blocking(descriptor, True)
        return open(descriptor, mode, *args, **options)
    except BaseException:
        os.close(descriptor)
        raise


@contextlib.contextmanager
def _checked_kubeconfig_files() -> Iterator[None]:
    """The kubeconfig loader opens its files through `_kubeconfig_file` (it calls the builtin `open` of its module,
    kubernetes-client/python@v35.0.0: kubernetes/config/kube_config.py KubeConfigMerger.load_config and
    FileOrData.as_data), so that every file it reads is checked where it reads it: the paths of --kubeconfig and
    KUBECONFIG as the loader splits and expands them, and the files the kubeconfig names."""
    kube_config.open = _kubeconfig_file  # a module global shadows the builtin
    try:
        yield
    finally:
        del kube_config.open


def _kubeconfig_problem(error: Exception) -> str:
    """The loader fails on a malformed file with whatever Python raised (TypeError, AttributeError, a YAML error)."""
    text = " ".join(str(error).split())
    if isinstance(error, ConfigException | OSError):
        return cut(text)
    return f"not a valid kubeconfig ({type(error).__name__}: {cut(text)}); `kubectl config view` shows how it reads"


def client_configuration(kubeconfig: str | None, context: str | None, source: str, plugins: PluginFailures) -> Any:
    """The client configuration of the kubeconfig's context, its credentials fetched, or a ClusterError naming the
    file."""
    configuration = client.Configuration()
    files = [kubeconfig] if kubeconfig else [f for f in os.environ.get("KUBECONFIG", "").split(os.pathsep) if f] \
        or ["~/.kube/config"]
    if not any(os.path.exists(os.path.expanduser(f)) for f in files):
        given = "--kubeconfig" if kubeconfig else "KUBECONFIG" if os.environ.get("KUBECONFIG") else "the default"
        raise ClusterError(f"kubeconfig {source}: no such file ({given}); name one with --kubeconfig FILE or "
                           "KUBECONFIG, or write one for an EKS cluster: aws eks update-kubeconfig --name CLUSTER")
    try:
        with _checked_kubeconfig_files():
            config.load_kube_config(config_file=kubeconfig, context=context, client_configuration=configuration)
    except Exception as error:  # every failure here is the file's: see _kubeconfig_problem
        raise ClusterError(f"kubeconfig {source}: {_kubeconfig_problem(error)}") from None
    if plugins.messages:  # no credentials: every request would be refused
        raise ClusterError(f"kubeconfig {source}: {plugins.first()}")
    if not str(configuration.host).startswith(("https://", "http://")):
        raise ClusterError(f"kubeconfig {source}: the cluster's server {cut(str(configuration.host), 100)!r} is "
                           "not an https:// URL")
    configuration.retries = False  # urllib3 would repeat a request that timed out three more times
    return configuration
