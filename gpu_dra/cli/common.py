"""What every verb shares: exit codes, the usage error, finding the project, running the program offline, what the
CLI prints (escaped, long values cut) and how Ctrl-C and SIGTERM end a run."""

from __future__ import annotations

import argparse
import atexit
import contextlib
import io
import json
import os
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NoReturn, TextIO, cast

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3
EXIT_INTERRUPTED, EXIT_TERMINATED = 130, 143  # Ctrl-C (SIGINT), SIGTERM


class UsageError(Exception):
    """Bad arguments or environment: printed as one line, exit 2."""


# --------------------------------------------------------------------------------------------- what is printed

# C0 and C1 controls but tab and newline (escape sequences, carriage returns, backspaces), and the bidirectional
# overrides that reorder what a terminal shows.
_UNPRINTABLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    """`text` with control characters written as Python escapes (`\\x1b`): log lines and values read from inputs
    reach the terminal, which would act on them."""
    return _UNPRINTABLE.sub(lambda match: repr(match.group())[1:-1], text)


def cut(text: str, limit: int = 200) -> str:
    """`text` whole up to `limit` characters, else its start and end: messages echo values of any length."""
    if len(text) <= limit:
        return text
    head, tail = text[: limit * 3 // 4], text[len(text) - limit // 4:]
    return f"{head}...[{len(text) - len(head) - len(tail):,} characters]...{tail}"


def message_text(text: str, limit: int = 1000) -> str:
    """An error message as printed: longer lines cut in the middle, so the file, line and key that lead a line and the
    advice that ends it stay (a finding's line is a few hundred characters; an echoed value can be megabytes)."""
    return "\n".join(cut(line, limit) for line in text.splitlines())


class OutputError(Exception):
    """What gpu-dra prints cannot be written (a full disk, /dev/full, stdout closed with `>&-`): exit 2, said in one
    line. A reader that went away (BrokenPipeError: `| head`) is none: it wants no more, and the run ends quietly."""


class _Closed(io.TextIOBase):
    """A standard stream closed before the start (`>&-`), which Python leaves None: writing to it fails."""

    def __init__(self, label: str):
        self.label = label

    def write(self, text: str) -> int:
        raise OutputError(f"cannot write to {self.label}: it is closed")


class _Printable:
    """A text stream whose writes go through `printable`, and whose failed writes are OutputErrors; everything else
    is the stream's."""

    def __init__(self, stream: TextIO, label: str):
        self.stream = stream
        self.label = label

    def write(self, text: str) -> int:
        try:
            return self.stream.write(printable(text))
        except BrokenPipeError:
            raise
        except OSError as error:
            raise self._failed(error) from None

    def flush(self) -> None:
        try:
            self.stream.flush()
        except BrokenPipeError:
            raise
        except OSError as error:
            raise self._failed(error) from None

    def _failed(self, error: OSError) -> OutputError:
        return OutputError(f"cannot write to {self.label}: {error.strerror or error}")

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


@contextlib.contextmanager
def printable_output() -> Iterator[None]:
    """Whatever a verb prints (log content, names and values from inputs) reaches the terminal escaped. A standard
    stream closed before the start stays one that fails each write, also after the block (exit handlers flush it)."""
    if sys.stdout is None:
        sys.stdout = cast(TextIO, _Closed("standard output"))
    if sys.stderr is None:
        sys.stderr = cast(TextIO, _Closed("standard error"))
    streams = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = (cast(TextIO, _Printable(stream, label))
                              for stream, label in zip(streams, ("standard output", "standard error"), strict=True))
    try:
        yield
    finally:
        sys.stdout, sys.stderr = streams


# --------------------------------------------------------------------------------------------- interrupts


class _Interrupts:
    """Ctrl-C's and SIGTERM's state in this process."""

    held = 0  # open `uninterrupted()` blocks
    pending: int | None = None  # the exit code of a signal that came inside one
    ending = False
    pid = 0  # the process that set the handlers: a child forked from it inherits them


_interrupts = _Interrupts()
# The shell's convention, 128 + the signal's number.
_EXIT_ON = {signal.SIGINT: EXIT_INTERRUPTED, signal.SIGTERM: EXIT_TERMINATED}


def end_process(code: int) -> NoReturn:
    """End now with `code`: flush what was printed and run the exit handlers (the kubernetes client removes its
    temporary credential files, multiprocessing stops its pools' workers), without waiting for other threads or
    tearing modules down. An interrupted Pulumi program can leave its event loop waiting on executor threads forever,
    and tearing down the Pulumi SDKs takes half a second in which a Ctrl-C would kill the process by the signal
    instead of exit 130."""
    if not _interrupts.ending:
        _interrupts.ending = True
        for stream in (sys.stdout, sys.stderr):
            # OSError, ValueError: the reader went away, nothing more to say; RuntimeError: the signal came while
            # the stream was being written (a reentrant call)
            with contextlib.suppress(OSError, ValueError, RuntimeError):
                stream.flush()
        atexit._run_exitfuncs()
    os._exit(code)


def _on_interrupt(signum: int, frame: Any) -> None:
    code = _EXIT_ON[signal.Signals(signum)]
    if os.getpid() != _interrupts.pid:  # a forked child (a pool's worker): the parent's exit handlers are not its own
        os._exit(code)
    if _interrupts.held:
        _interrupts.pending = _interrupts.pending or code
    else:
        end_process(code)


def end_on_interrupt() -> None:
    """Ctrl-C (exit 130) and SIGTERM (exit 143: `kill`, `timeout`, a CI job cancelled, a container stopped) end the
    run at once, wherever they come, through `end_process`: a KeyboardInterrupt raised into a half-done import or
    inside the Pulumi runtime (which catches it and waits for its RPCs) would turn into another error, a hang or a
    lost interrupt, and SIGTERM's default would skip the exit handlers. Only the main thread can set a signal
    handler; elsewhere Python's defaults stay."""
    if threading.current_thread() is threading.main_thread():
        _interrupts.pid = os.getpid()
        for signum in _EXIT_ON:
            signal.signal(signum, _on_interrupt)


def killed(process: Any, kill: Callable[[], object] | None = None) -> Callable[[], None]:
    """A cleanup for `ended_on_exit` that kills a child process (`kill`: how, by default SIGKILL to it alone) and
    waits a moment for it to end, so that it has ended, not only been signalled, when gpu-dra has."""

    def cleanup() -> None:
        (kill or process.kill)()
        with contextlib.suppress(Exception):  # gone already, or being waited on where the signal came
            process.wait(timeout=5)
    return cleanup


@contextlib.contextmanager
def ended_on_exit(cleanup: Callable[[], object]) -> Iterator[None]:
    """`cleanup` (a child process's kill) runs also when a signal ends the run inside the block: `end_process` runs
    the exit handlers, not `finally` blocks."""
    atexit.register(cleanup)
    try:
        yield
    finally:
        atexit.unregister(cleanup)


@contextlib.contextmanager
def child_process(args: list[str], **options: Any) -> Iterator[subprocess.Popen[str]]:
    """A child process (text mode) that a signal cannot leave running: it is started and its kill registered with the
    signals held, since a SIGTERM between the fork and the registration would end gpu-dra and leave the child."""
    with uninterrupted():
        process = subprocess.Popen(args, text=True, **options)
        cleanup = killed(process)
        atexit.register(cleanup)
    try:
        with process:
            yield process
    finally:
        atexit.unregister(cleanup)


@contextlib.contextmanager
def uninterrupted() -> Iterator[None]:
    """A Ctrl-C or SIGTERM inside the block ends the run when the block is done: files are written whole or not at
    all."""
    _interrupts.held += 1
    try:
        yield
    finally:
        _interrupts.held -= 1
        if not _interrupts.held and _interrupts.pending is not None:
            end_process(_interrupts.pending)


# --------------------------------------------------------------------------------------------- arguments

# Pulumi's rule for stack names (ParseStackName, pulumi/pulumi sdk/go/common/tokens); it is also part of a file name.
_STACK_NAME = re.compile(r"[A-Za-z0-9_.-]{1,100}")


def check_stack_name(name: str) -> None:
    if not _STACK_NAME.fullmatch(name):
        raise UsageError(f"--stack {cut(name, 60)!r}: not a stack name: at most 100 letters, digits, '-', '_' and "
                         "'.' (the stack file is stacks/Pulumi.<stack>.yaml)")


def request_timeout(text: str) -> float | None:
    """`--request-timeout` as kubectl reads it: seconds, or a number with s, m or h; 0 waits forever (None)."""
    match = re.fullmatch(r"([0-9]+(?:\.[0-9]*)?)([smh]?)", text.strip())
    if not match:
        raise argparse.ArgumentTypeError(f"{cut(text, 40)!r} is not a duration such as 30s, 2m or 0 (no limit)")
    seconds = float(match.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600}[match.group(2)]
    return seconds or None


def memory_size(text: str) -> int:
    """`--read-memory` as a Kubernetes quantity of bytes: 1Gi, 512Mi, 4G."""
    from gpu_dra.core.dra.quantity import QuantityError, parse_quantity

    try:
        size = parse_quantity(text)
    except QuantityError:
        size = None
    if size is None or size < 1 << 20:
        raise argparse.ArgumentTypeError(f"{cut(text, 40)!r} is not a size such as 1Gi or 4Gi (1Mi at least)")
    return int(size)


def check_kubernetes_version(version: str | None) -> None:
    """`--kubernetes-version`, before any input is read: one of the minor versions whose gates gpu-dra knows."""
    from gpu_dra.core.facts.gates import VERSIONS

    if version is not None and version not in VERSIONS:
        raise UsageError(f"--kubernetes-version {cut(version, 40)}: known versions {', '.join(VERSIONS)}")


# --------------------------------------------------------------------------------------------- project and inputs


def find_project_root(start: Path) -> Path:
    from gpu_dra.core.yamlsource import read_yaml

    other: tuple[Path, object] | None = None  # the nearest Pulumi.yaml naming another project
    try:
        for directory in (start, *start.parents):
            project = directory / "Pulumi.yaml"
            if project.exists():
                data = read_yaml(project, str(project)).data
                if isinstance(data, dict) and data.get("name") == "gpu-dra":
                    return directory
                other = other or (project, data.get("name") if isinstance(data, dict) else None)
    except OSError as error:  # a name too long, a folder that cannot be searched
        raise UsageError(f"{cut(str(start))}: cannot look for the gpu-dra project there: "
                         f"{error.strerror or error}") from None
    if other is not None:  # a renamed project: "pass --project-dir" would not help
        raise UsageError(f"{cut(str(other[0]))} names the project {cut(str(other[1]), 60)!r}, and gpu-dra reads the "
                         "project named gpu-dra: its stack files' config is gpu-dra:..., and every resource's URN "
                         "carries the project's name, so a renamed project is a new Pulumi project with new state. "
                         "Set `name: gpu-dra` there, or pass --project-dir to the gpu-dra project")
    raise UsageError(f"no gpu-dra project (Pulumi.yaml with name: gpu-dra) at or above {cut(str(start))}; "
                     "run inside the project or pass --project-dir")


def project_root(args: argparse.Namespace) -> Path:
    return find_project_root(Path(args.project_dir).resolve() if args.project_dir else Path.cwd())


def run_program_offline(root: Path, stack: str) -> Any:
    """Validate the stack (exit 2 on mistakes, before anything runs), then run the program under mocks."""
    from gpu_dra.core.config.loader import build_stack, stack_values

    values, located = stack_values(root, stack)
    validated = build_stack(root, stack, values, located)
    from gpu_dra.cli.offline import run_program  # imports Pulumi: only for the verbs that run the program

    return run_program(root, stack, values, validated)


def shown(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


def read_inputs(paths: list[str], lines: bool = True,
                args: argparse.Namespace | None = None) -> list[tuple[str, list[Any]]]:
    """(display name, parsed documents) per path; `-` is stdin. Unreadable or malformed input: exit 2.
    `lines=False` for dumps no finding points into (fleet-sized ResourceSlice lists parse 8 times faster).
    The files together may take `--read-memory` once parsed, where the verb has it (`args`), else PARSED_MEMORY."""
    from gpu_dra.core.yamlsource import PARSED_MEMORY, ParseBudget, parse_documents, read_text

    raisable = hasattr(args, "read_memory")  # the verbs with --cluster's options
    budget = ParseBudget(getattr(args, "read_memory", None) or PARSED_MEMORY,
                         " or raise --read-memory" if raisable else "")
    inputs = []
    for path in paths:
        name = "<stdin>" if path == "-" else path
        try:
            if path != "-":
                with open(path, encoding="utf-8") as stream:
                    text = read_text(stream, name)
            elif sys.stdin is None:  # `<&-`: Python starts without it
                raise UsageError("<stdin>: standard input is closed; pipe the input in, or name a file")
            else:
                text = read_text(sys.stdin, name)
        except (OSError, UnicodeDecodeError) as error:
            raise UsageError(f"{cut(name)}: cannot read: {getattr(error, 'strerror', None) or error}") from None
        inputs.append((name, parse_documents(text, name, lines=lines, budget=budget, keep=True)))
    return inputs


SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"  # what `check` and `doctor` write

# kubectl has no default limit; gpu-dra is run in CI, where a stalled API server should fail the job, not hang it.
DEFAULT_REQUEST_TIMEOUT = 30.0


def devices_json(document: Any, devices: list[Any], **options: Any) -> str:
    """`document` as strict JSON (NaN and Infinity are not JSON). A value JSON cannot hold came from a device's
    attributes or capacity (`.inf` in a dump): bad input, and the first device carrying one is named."""
    try:
        return json.dumps(document, allow_nan=False, **options)
    except (TypeError, ValueError):
        for device in devices:
            try:
                json.dumps([device.attributes, device.capacity], allow_nan=False)
            except (TypeError, ValueError):
                raise UsageError(f"{cut(device.source)}: device {cut(device.node, 100)}/{cut(device.name, 100)}: "
                                 "attribute and capacity values must be strings, finite numbers or booleans") from None
        raise


def stack_options(parser: argparse.ArgumentParser, all_stacks_help: str = "every stack in stacks/") -> None:
    """--stack S or --all-stacks, for the verbs that judge stacks."""
    target = parser.add_mutually_exclusive_group()
    target.add_argument("--stack", help="stack name (default dev)")
    target.add_argument("--all-stacks", action="store_true", help=all_stacks_help)


def selected_stacks(args: argparse.Namespace, root: Path) -> list[str]:
    from gpu_dra.core.config.loader import available_stacks

    return available_stacks(root) if args.all_stacks else [args.stack or "dev"]


def cluster_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--cluster", action="store_true",
                        help="read the cluster's DRA objects and Nodes through a kubeconfig, read-only (what each verb "
                             "lists, and the ClusterRole it needs: docs/troubleshooting.md)")
    parser.add_argument("--kubeconfig", help="kubeconfig file for --cluster (default: $KUBECONFIG, ~/.kube/config)")
    parser.add_argument("--context", help="kubeconfig context for --cluster (default: current)")
    parser.add_argument("--request-timeout", type=request_timeout, default=DEFAULT_REQUEST_TIMEOUT,
                        metavar="DURATION",
                        help=f"for --cluster: how long one API request, or the kubeconfig's credential plugin, may "
                             f"take, as kubectl's: 30s, 2m; 0 waits forever (default {DEFAULT_REQUEST_TIMEOUT:g}s). "
                             "The whole read may take 20 times as long")
    parser.add_argument("--read-memory", type=memory_size, default=None, metavar="SIZE",
                        help="how much memory the files given, and with --cluster the objects read, may take once "
                             "parsed, estimated before each file or page is (default 768Mi; a 1,000-node cluster's "
                             "ResourceSlices are estimated at ~100Mi)")


def read_live_cluster(args: argparse.Namespace, reads: Any = None) -> Any:
    """The cluster's objects (cli.cluster.ClusterState) for `--cluster`; what cannot be read is bad input."""
    from gpu_dra.cli.cluster import DEVICE_READS, ClusterError, read_cluster

    try:
        return read_cluster(args.kubeconfig, args.context, args.request_timeout, reads or DEVICE_READS,
                            getattr(args, "namespace", None), **({"memory": args.read_memory}
                                                                 if getattr(args, "read_memory", None) else {}))
    except ClusterError as error:
        raise UsageError(str(error)) from None


def gather(args: argparse.Namespace, cluster: Any = None,
           with_stack: bool = True) -> tuple[Any, list[dict[str, Any]], str]:
    """Inventory (devices, every typed slice read and the DeviceTaintRules), the other Kubernetes objects (classes,
    claims, pods and workloads, nodes) and a description of where they came from. `cluster`: what was read from
    the live cluster already, else it is read here with `--cluster`. `with_stack`: add the stack's classes and
    templates (not where the cluster's own are explained)."""
    from gpu_dra.core.analysis import inventory as inv
    from gpu_dra.core.analysis.inventory import InventoryError
    from gpu_dra.core.yamlsource import Located

    sources: list[tuple[str, list[Any]]] = read_inputs(args.paths, lines=False, args=args)
    origins = list(args.paths)
    if args.cluster:
        cluster = cluster or read_live_cluster(args)
        sources.append(("cluster", [Located(obj, {}) for obj in cluster.objects]))
        origins.append(f"cluster (context {cut(args.context)})" if args.context else "cluster")
    objects: list[dict[str, Any]] = []
    devices = inv.Inventory()
    for index, (name, documents) in enumerate(sources):
        try:
            found = inv.from_documents(name, documents)
        except InventoryError as error:
            raise UsageError(str(error)) from None
        if args.cluster and index == len(sources) - 1:  # the cluster's GPU nodes without slices, as doctor judges
            from gpu_dra.core.analysis.doctor import silent_gpu_node_notes

            devices.notes = silent_gpu_node_notes(cluster.of("Node"), found.slices) + cluster.notes
        devices.devices.extend(found.devices)
        devices.slices.extend(found.slices)  # those without devices too: they count in their pool
        devices.taint_rules.extend(found.taint_rules)
        mine = [obj for document in documents for obj in inv.objects_in_document(document.data)
                if obj.get("kind") not in ("ResourceSlice", "DeviceTaintRule")]
        validate_objects(mine, name)
        objects += mine
    origin = ", ".join(origins)
    if args.stack and with_stack:
        from gpu_dra.core.config.loader import load_stack  # the stack models (pydantic) only when a stack is read
        from gpu_dra.core.render import manifests

        stack = load_stack(project_root(args), args.stack)
        objects += manifests.stack_device_classes(stack)
        objects += [manifests.claim_template(team, t) for team in stack.teams for t in team.claim_templates]
        if not devices.devices:
            rules = devices.taint_rules
            devices = inv.synthesize(stack.config)
            devices.taint_rules = rules  # the files' rules apply to the synthesized fleet as to any other
            origin = f"stack {args.stack}'s GPU node groups at max size (synthesized)"
    if not devices.devices:
        where = f" in {', '.join(cut(name) for name, _ in sources)}" if sources else ""
        raise UsageError(f"no devices{where}: give ResourceSlice files (kubectl get resourceslices -o yaml > "
                         "slices.yaml), --cluster, or --stack to synthesize the stack's fleet")
    return devices, objects, origin


def validate_objects(objects: list[dict[str, Any]], source: str) -> None:
    """Claims and classes given to explain must have the API's shape; say which one does not, and where."""
    import kubernetes_validate

    from gpu_dra.core.dra import k8s_schema

    for obj in objects:
        if obj.get("kind") not in ("DeviceClass", "ResourceClaim", "ResourceClaimTemplate"):
            continue
        try:
            k8s_schema.validate(obj, "1.36", strict=False)
        except kubernetes_validate.ValidationError as error:
            meta: dict[str, Any] = obj["metadata"] if isinstance(obj.get("metadata"), dict) else {}
            location = ".".join(str(p) for p in error.path) or "(object)"
            raise UsageError(f"{cut(source)}: {obj.get('kind')} {cut(str(meta.get('name', '?')), 80)}: {location}: "
                             f"{cut(error.message)} (`gpu-dra lint` shows every problem)") from None
        except (kubernetes_validate.SchemaNotFoundError, kubernetes_validate.InvalidSchemaError) as error:
            raise UsageError(f"{cut(source)}: {obj.get('kind')}: {cut(str(error))}") from None
