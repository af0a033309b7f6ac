"""Run the real `__main__.py` under Pulumi's mock runtime: no Pulumi CLI, no AWS, no cluster.

Records every resource registration (type, name, parent, inputs as the engine would see them, and the options the
engine acts on: provider, protect, replaceOnChanges, deleteBeforeReplace, aliases). Resource references
are not advertised by the monitor, so inputs carry URN strings and the registration never touches a second event
loop: the default MockMonitor deserializes resource references on an executor thread (pulumi/pulumi
sdk/python/lib/pulumi/runtime/mocks.py; the mechanism of pulumi/pulumi#6465), which intermittently failed with "got
Future attached to a different loop" here (docs/sources.md#pulumi-engine-facts).

The mock monitor resolved resource transforms on that executor thread too, by reading every callback servicer in the
SDK's process-wide `_CallbackServicer._servicers`, which the loop thread appends a new servicer to before the servicer
has its `_transforms`: a registration in that moment failed with "AttributeError: '_CallbackServicer' object has no
attribute '_transforms'" (1 run in 4 of `check` over 20 stacks). Registrations now run on the loop's own thread
(`_Inline`), and `_resolve_callbacks` below still reads a snapshot that skips a servicer still being made; the engine,
not the mocks, runs transforms (`gpu-dra check` applies the chart's).

Secrets never leave the run: a secret input or output is recorded as `[secret]`, and config the stack file keeps
under `secure:` is marked secret for the program, as the Pulumi CLI marks it.
"""

from __future__ import annotations

import concurrent.futures
import json
import logging
import runpy
import sys
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pulumi
from pulumi.runtime import mocks as pulumi_mocks
from pulumi.runtime import resource as pulumi_resource
from pulumi.runtime import rpc
from pulumi.runtime import settings as pulumi_settings
from pulumi.runtime._callbacks import _CallbackServicer
from pulumi.runtime.proto import resource_pb2, source_pb2
from pulumi.runtime.settings import get_project, get_root_resource, get_stack, set_root_resource
from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime.sync_await import _ensure_event_loop, _sync_await

from gpu_dra.core.config.loader import SECRET_PLACEHOLDER, build_stack, stack_values
from gpu_dra.core.config.models import Stack
from gpu_dra.core.data import plain
from gpu_dra.core.facts import pulumi_types
from gpu_dra.core.policy.engine.model import mock_cluster_security_group
from gpu_dra.core.yamlsource import collector_paused

PROJECT = "gpu-dra"
SECRET = "[secret]"  # what is recorded in place of a secret value
MOCK_ACCOUNT = "123456789012"
MOCK_KUBECONFIG = {"apiVersion": "v1", "kind": "Config", "clusters": [], "contexts": [], "users": []}


def _resolve_callbacks(callbacks: Any) -> list[Any]:
    """pulumi.runtime.mocks._resolve_callbacks on a snapshot: the servicer list and each servicer's transforms are
    copied whole (a C-level copy the loop thread cannot change halfway) and a servicer without `_transforms` yet is
    skipped, so a registration never fails on a servicer another thread is still creating."""
    by_token = {}
    for servicer in list(_CallbackServicer._servicers):
        by_token.update({token: fn for fn, token in dict(getattr(servicer, "_transforms", {})).items()})
    return [by_token[callback.token] for callback in callbacks if callback.token in by_token]


pulumi_mocks._resolve_callbacks = _resolve_callbacks


def _no_stack_trace() -> source_pb2.StackTrace:
    """What the mock run sends in place of each registration's stack trace: none. The SDK walks the whole Python
    stack for every resource (pulumi/pulumi sdk/python/lib/pulumi/runtime/resource.py `_get_stack_trace`) so the
    engine can show where it was declared; no engine reads it here and the recorder keeps no source position, and
    the walk was a fifth of a mock run."""
    return source_pb2.StackTrace()


pulumi_resource._get_stack_trace = _no_stack_trace


@dataclass(frozen=True)
class Registration:
    type: str
    name: str
    urn: str
    parent: str
    custom: bool
    protect: bool
    inputs: dict[str, Any]
    dependencies: tuple[str, ...] = ()
    id: str = ""
    provider: str = ""  # the provider reference `<provider URN>::<provider ID>`, as the engine resolves it
    replace_on_changes: tuple[str, ...] = ()
    delete_before_replace: bool = False
    retain_on_delete: bool = False  # the engine leaves the cloud object in place when it deletes the resource
    aliases: tuple[str, ...] = ()  # the URNs the engine matches old state against
    additional_secret_outputs: tuple[str, ...] = ()  # outputs the engine stores encrypted
    transforms: int = 0  # resource transforms the program registered on it (they also run on a component's children)
    outputs: dict[str, Any] = field(default_factory=dict)  # what the mocks answered (mock_outputs), redacted


@dataclass
class ProgramRun:
    stack: str
    resources: list[Registration] = field(default_factory=list)
    outputs: dict[str, Any] = field(default_factory=dict)
    invokes: list[str] = field(default_factory=list)  # the functions (data sources) the program called, by token

    def by_type(self, type_: str) -> list[Registration]:
        return [r for r in self.resources if r.type == type_]


def mock_outputs(type_: str, name: str, inputs: dict[str, Any]) -> dict[str, Any]:
    """Outputs a real deployment would add and the program reads (remote components have no children here)."""
    out = dict(inputs)
    if type_ == "eks:index:Cluster":
        out.update(kubeconfigJson=json.dumps(MOCK_KUBECONFIG), kubeconfig=MOCK_KUBECONFIG,
                   core={"endpoint": f"https://{name}.mock.eks.amazonaws.com"},
                   clusterSecurityGroupId=mock_cluster_security_group(name))  # EKS's own (skipDefaultSecurityGroups)
    elif type_.startswith("aws:"):
        service = type_.split(":")[1].split("/")[0]
        out.setdefault("arn", f"arn:aws:{service}:mock:{MOCK_ACCOUNT}:{name}")
        out.setdefault("name", name)
        if type_ == "aws:ec2/launchTemplate:LaunchTemplate":
            out["latestVersion"] = 1
    return out


class _Mocks(pulumi.runtime.Mocks):
    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        return f"{args.name}-id", mock_outputs(args.typ, args.name, args.inputs)

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict[str, Any], list[tuple[str, str]]]:
        if args.token == pulumi_types.ADDON_VERSION:  # what EKS answers is unknowable offline: say so in the value
            addon, version = args.args.get("addonName"), args.args.get("kubernetesVersion")
            return {"id": addon, "addonName": addon, "kubernetesVersion": version,
                    "version": f"(EKS's default {addon} for Kubernetes {version}, looked up by pulumi up)"}, []
        return {}, []


class _Engine(pulumi_mocks.MockEngine):
    """Pulumi's mock engine, which logs, and answers a deploy's version check (components/engine_config.py) as a
    CLI recent enough would: what a real engine answers is its own."""

    def RequirePulumiVersion(self, request: Any) -> None:  # noqa: N802 - gRPC method name
        return None


class RecordingMonitor(pulumi_mocks.MockMonitor):
    """A mock monitor that records parents and protection, and sends resource references as plain URNs."""

    def __init__(self, mocks: pulumi.runtime.Mocks):
        super().__init__(mocks)
        self.registrations: list[Registration] = []
        self.invokes: set[str] = set()

    def Invoke(self, request: Any) -> Any:  # noqa: N802 - gRPC method name
        self.invokes.add(request.tok)
        return super().Invoke(request)

    def GetDeploymentInfo(self, request: Any) -> Any:  # noqa: N802 - gRPC method name
        info = super().GetDeploymentInfo(request)
        return resource_pb2.DeploymentInfo(supportedFeatures=[
            f for f in info.supportedFeatures if f != resource_pb2.RESOURCE_MONITOR_FEATURE_RESOURCE_REFERENCES])

    def SupportsFeature(self, request: Any) -> Any:  # noqa: N802
        if request.id == "resourceReferences":
            return type("SupportsFeatureResponse", (), {"hasSupport": False})
        return super().SupportsFeature(request)

    def RegisterResource(self, request: Any) -> Any:  # noqa: N802
        """MockMonitor.RegisterResource (pulumi/pulumi sdk/python/lib/pulumi/runtime/mocks.py) on the program's own
        thread (see `_Inline`), so without its `_sync_await`, which would pump the running loop from inside one of
        its callbacks: the mocks' state is plain data, whose serialization never waits (`_serialized`)."""
        urn = self.make_urn(request.parent, request.type, request.name)
        if urn in self.resources:  # the engine would refuse it too: "Duplicate resource URN"
            raise ValueError(f"duplicate resource URN {urn}")
        if request.type == "pulumi:pulumi:Stack":
            return resource_pb2.RegisterResourceResponse(urn=urn)
        inputs = rpc.deserialize_properties(request.object)
        mock_id, state = self.mocks.new_resource(pulumi.runtime.MockResourceArgs(
            typ=request.type, name=request.name, inputs=inputs, provider=request.provider,
            resource_id=request.importId, custom=request.custom or False,
            transforms=_resolve_callbacks(request.transforms)))
        id_ = mock_id or ""  # the engine's answer has an ID field, "" when unset
        response = resource_pb2.RegisterResourceResponse(urn=urn, id=id_,
                                                         object=_serialized(rpc.serialize_properties(state, {})))
        self.resources[urn] = pulumi_mocks.MockMonitor.ResourceRegistration(urn, id_, state)
        self.registrations.append(Registration(
            type=request.type, name=request.name, urn=urn, parent=request.parent, custom=bool(request.custom),
            protect=bool(request.protect), inputs=plain(_redacted(inputs)),
            dependencies=tuple(sorted(request.dependencies)), id=id_, provider=request.provider,
            replace_on_changes=tuple(request.replaceOnChanges), delete_before_replace=bool(request.deleteBeforeReplace),
            retain_on_delete=bool(request.retainOnDelete),
            aliases=tuple(self._alias_urn(request, alias) for alias in request.aliases),
            additional_secret_outputs=tuple(request.additionalSecretOutputs), transforms=len(request.transforms),
            outputs=plain(_redacted(state))))
        return response

    def _alias_urn(self, request: Any, alias: Any) -> str:
        """An alias as the URN the engine looks up: a spec's blank fields are the resource's own (collapseAliasToUrn
        in pulumi/pulumi pkg/resource/deploy/step_generator.go), in the URN scheme of this monitor."""
        if alias.WhichOneof("alias") == "urn":
            return str(alias.urn)
        spec = alias.spec
        parent = "" if spec.noParent else spec.parentUrn or request.parent
        _, _, qualified, name = self.make_urn(parent, spec.type or request.type, spec.name or request.name).split(
            "::", 3)
        return "::".join([f"urn:pulumi:{spec.stack or get_stack()}", spec.project or get_project(), qualified, name])


def _serialized(coroutine: Coroutine[Any, Any, Any]) -> Any:
    """The result of a coroutine that finishes without waiting (serializing plain data), run to its end here."""
    try:
        coroutine.send(None)
    except StopIteration as finished:
        return finished.value
    coroutine.close()
    raise RuntimeError("serializing a mock resource's state waited on something: it holds more than plain data")


class _Inline(concurrent.futures.ThreadPoolExecutor):
    """The program run's executor: each call done at once on the loop's thread. The SDK hands every monitor call to
    an executor thread (`run_in_executor` in pulumi/pulumi sdk/python/lib/pulumi/runtime/resource.py), made for a
    gRPC round trip to the engine; the mock monitor answers in microseconds, and the thread switches cost more than
    the answers (a tenth of the repository's 3 stacks' mock runs)."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> concurrent.futures.Future[Any]:
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as error:  # as an executor thread hands it over: raised where the result is awaited
            future.set_exception(error)
        return future


def _redacted(value: Any) -> Any:
    """`value` with every secret (as `rpc.deserialize_properties` wraps them) replaced by SECRET."""
    if rpc.is_rpc_secret(value):
        return SECRET
    if isinstance(value, dict):
        return {key: _redacted(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_redacted(item) for item in value]
    return value


async def _exported(outputs: dict[str, Any]) -> dict[str, Any]:
    """The stack outputs' values, secret ones as SECRET."""
    values = {}
    for key, value in outputs.items():
        output = pulumi.Output.from_input(value)
        values[key] = SECRET if await output.is_secret() else await output.future()
    return values


class _ProgramMessages(logging.Handler):
    """The program's `pulumi.log` warnings and errors under mocks, on stderr as gpu-dra's own read."""

    def emit(self, record: logging.LogRecord) -> None:
        print(f"gpu-dra: {record.levelname.lower()}: {record.getMessage()}", file=sys.stderr)


def _program_log() -> logging.Logger:
    log = logging.getLogger("gpu_dra.program")
    if not log.handlers:
        log.addHandler(_ProgramMessages())
        log.propagate = False
    return log


def engine_config(values: dict[str, Any]) -> dict[str, str]:
    """Config as the Pulumi CLI hands it to a program: scalars as text, objects and lists JSON-encoded."""
    return {key: value if isinstance(value, str) else json.dumps(value) for key, value in values.items()}


def run_program(root: Path, stack: str, config: dict[str, Any], validated: Stack | None = None,
                deploy: bool = False) -> ProgramRun:
    """Run `<root>/__main__.py` for `stack` with `config` (`gpu-dra:key` -> value) under mocks. `validated`: the
    Stack the caller already loaded from that config, handed to the program so it is not validated twice. The run is
    a preview, as the program sees it, unless `deploy`: then it runs as `pulumi up` runs it after its preview."""
    pulumi.runtime.set_all_config(engine_config(config),
                                  [key for key, value in config.items() if value == SECRET_PLACEHOLDER])
    mocks = _Mocks()
    monitor = RecordingMonitor(mocks)
    set_root_resource(None)  # type: ignore[arg-type]  # a fresh root stack per run, so runs never share outputs
    pulumi.runtime.set_mocks(mocks, project=PROJECT, stack=stack, preview=False, monitor=monitor,
                             logger=_program_log())
    pulumi_settings.SETTINGS.engine = _Engine(_program_log())
    program = str(root / "__main__.py")

    def program_main() -> None:
        runpy.run_path(program, run_name="__main__",
                       init_globals={"VALIDATED_STACK": validated, "OFFLINE_PREVIEW": not deploy})

    # No collection inside a run, and what the first run of a process leaves (the SDKs' modules the program imports,
    # a million objects that live to the end) is moved out of the collector's sight: it scanned them again and again,
    # a tenth of a check of the repository's stacks, and a run makes a few tens of thousands of objects of garbage.
    # A later run's garbage is collected after it as before; the frozen first one's stays (a few MB, once a process).
    first_run = not _frozen
    _frozen.append(True)
    with collector_paused(keep=first_run):
        _ensure_event_loop().set_default_executor(_Inline())
        _sync_await(run_pulumi_func(program_main))
        root_stack = get_root_resource()
        outputs = _sync_await(_exported(getattr(root_stack, "outputs", None) or {}))
    resources = sorted(monitor.registrations, key=lambda r: r.urn)
    return ProgramRun(stack=stack, resources=resources, outputs=plain(outputs), invokes=sorted(monitor.invokes))


def run_program_offline(root: Path, stack: str) -> ProgramRun:
    """Validate the stack (exit 2 on mistakes, before anything runs), then run the program under mocks."""
    values, located = stack_values(root, stack)
    return run_program(root, stack, values, build_stack(root, stack, values, located))


_frozen: list[bool] = []  # whether this process has run the program (and frozen what that run left)
