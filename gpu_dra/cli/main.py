"""`gpu-dra`: one verb per user task. Exit codes: 0 ok, 1 findings, 2 bad input, 3 a bug in gpu-dra."""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback
from collections import Counter
from pathlib import Path
from typing import Any

from gpu_dra import __version__
from gpu_dra.core.findings import ConfigError

# Every verb imports what it needs when it runs: `--help` and the light verbs never pay for pydantic or Pulumi.

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3


class UsageError(Exception):
    """Bad arguments or environment: printed as one line, exit 2."""


def find_project_root(start: Path) -> Path:
    from gpu_dra.core.yamlsource import read_yaml

    for directory in (start, *start.parents):
        project = directory / "Pulumi.yaml"
        if project.exists():
            data = read_yaml(project, str(project)).data
            if isinstance(data, dict) and data.get("name") == "gpu-dra":
                return directory
    raise UsageError(f"no gpu-dra project (Pulumi.yaml with name: gpu-dra) at or above {start}; "
                     "run inside the project or pass --project-dir")


def _root(args: argparse.Namespace) -> Path:
    return find_project_root(Path(args.project_dir).resolve() if args.project_dir else Path.cwd())


def _run(root: Path, stack: str) -> Any:
    """Validate the stack (exit 2 on mistakes, before anything runs), then run the program under mocks."""
    from gpu_dra.core.loader import build_stack, stack_values

    values, located = stack_values(root, stack)
    build_stack(root, stack, values, located)
    from gpu_dra.cli.offline import run_program  # imports Pulumi: only for the verbs that run the program

    return run_program(root, stack, values)


# --------------------------------------------------------------------------------------------- verbs


def _tree_lines(run: Any) -> list[str]:
    children: dict[str, list[Any]] = {}
    urns = {r.urn for r in run.resources}
    for resource in run.resources:
        parent = resource.parent if resource.parent in urns else ""
        children.setdefault(parent, []).append(resource)
    lines: list[str] = []

    def walk(parent: str, prefix: str) -> None:
        items = sorted(children.get(parent, []), key=lambda r: (r.type, r.name))
        for index, resource in enumerate(items):
            last = index == len(items) - 1
            branch = "└─ " if last else "├─ "
            lock = " [protected]" if resource.protect else ""
            lines.append(f"{prefix}{branch}{resource.type}  {resource.name}{lock}")
            walk(resource.urn, prefix + ("   " if last else "│  "))

    walk("", "")
    return lines


def _write(run: Any, out: Path) -> list[Path]:
    from gpu_dra.cli.manifest_files import OutputError, kubernetes_objects, write_manifests

    try:
        return write_manifests(kubernetes_objects(run), out)
    except OutputError as error:
        raise UsageError(str(error)) from None


def cmd_preview(args: argparse.Namespace) -> int:
    root = _root(args)
    run = _run(root, args.stack)
    out = Path(args.out).resolve() if args.out else root / "build" / args.stack
    written = _write(run, out)
    if args.format == "json":
        print(json.dumps({"stack": args.stack, "resources": [
            {"type": r.type, "name": r.name, "urn": r.urn, "parent": r.parent or None, "protect": r.protect,
             "inputs": r.inputs} for r in run.resources]}, indent=2, sort_keys=True))
        return EXIT_OK
    print(f"Stack {args.stack} (project gpu-dra), offline preview under Pulumi mocks: nothing was deployed.")
    print()
    print("\n".join(_tree_lines(run)))
    print()
    print("Resources by type:")
    for type_, count in sorted(Counter(r.type for r in run.resources).items()):
        print(f"  {count:4d}  {type_}")
    print(f"  {len(run.resources):4d}  total")
    print()
    print(f"{len(written)} Kubernetes objects written to {_shown(out, root)}/")
    return EXIT_OK


def _shown(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


def cmd_render(args: argparse.Namespace) -> int:
    root = _root(args)
    run = _run(root, args.stack)
    out = Path(args.out).resolve()
    for path in _write(run, out):
        print(_shown(path, Path.cwd()))
    return EXIT_OK


def cmd_schema(args: argparse.Namespace) -> int:
    from gpu_dra.core.schema import stack_schema, team_schema

    schemas = {"stack": stack_schema, "team": team_schema}
    print(json.dumps(schemas[args.file](), indent=2))
    return EXIT_OK


def _feature_gates(text: str) -> dict[str, bool]:
    gates: dict[str, bool] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, sep, value = item.partition("=")
        if not sep or value.lower() not in ("true", "false"):
            raise UsageError(f"--feature-gates: {item!r} is not Name=true or Name=false")
        gates[name] = value.lower() == "true"
    return gates


def cmd_lint(args: argparse.Namespace) -> int:
    from gpu_dra.core import driver
    from gpu_dra.core.config import DraDriver
    from gpu_dra.core.gates import VERSIONS
    from gpu_dra.core.manifest_lint import Target, fixed_object, lint_object, objects_in, severity_counts

    if args.kubernetes_version not in VERSIONS:
        raise UsageError(f"--kubernetes-version {args.kubernetes_version}: known versions {', '.join(VERSIONS)}")
    try:
        chart = DraDriver.model_validate({"chart": args.chart, "version": args.chart_version})
    except Exception:
        raise UsageError(f"--chart {args.chart} --chart-version {args.chart_version}: not a pinned chart version "
                         "such as 0.4.1 or 25.12.0") from None
    target = Target(args.kubernetes_version, args.platform, _feature_gates(args.feature_gates or ""),
                    driver.release_level(chart))
    findings = []
    objects = []
    for name, documents in _read_inputs(args.paths):
        for obj in objects_in(name, documents):
            objects.append(obj)
            findings.extend(lint_object(obj, target))
    counts = severity_counts(findings)
    if args.format == "json":
        print(json.dumps({"findings": [f.as_dict() for f in findings]}, indent=2))
    else:
        _print_lint(objects, findings, counts, fixed_object)
    return EXIT_FINDINGS if counts["error"] else EXIT_OK


def _print_lint(objects: list[Any], findings: list[Any], counts: dict[str, int], fixer: Any) -> None:
    from gpu_dra.cli.manifest_files import dump_yaml

    if not objects:
        print("no DeviceClass, ResourceClaim or ResourceClaimTemplate found")
        return
    for obj in objects:
        mine = [f for f in findings if f.object == obj.name and f.file == obj.file]
        status = "ok" if not mine else f"{len(mine)} finding(s)"
        print(f"{obj.file}:{obj.line(('kind',)) or 1}: {obj.name}: {status}")
        for finding in mine:
            print(f"  {finding.severity:7} {finding.rule}  {finding.path} (line {finding.line})")
            print(f"          {finding.message}")
            if finding.fix:
                fix = finding.fix.strip().replace("\n", "\n               ")
                print(f"          fix: {fix}")
        fixed = fixer(obj) if any(f.severity == "error" for f in mine) else None
        if fixed is not None:
            print(f"  corrected {obj.name}:")
            print("    " + dump_yaml(fixed).rstrip().replace("\n", "\n    "))
    print(f"{len(objects)} object(s): {counts['error']} error(s), {counts['warning']} warning(s)")


def _read_inputs(paths: list[str], lines: bool = True) -> list[tuple[str, list[Any]]]:
    """(display name, parsed documents) per path; `-` is stdin. Unreadable or malformed input: exit 2.
    `lines=False` for dumps no finding points into (fleet-sized ResourceSlice lists parse 8 times faster)."""
    from gpu_dra.core.yamlsource import parse_documents

    inputs = []
    for path in paths:
        name = "<stdin>" if path == "-" else path
        try:
            text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise UsageError(f"{name}: cannot read: {getattr(error, 'strerror', None) or error}") from None
        inputs.append((name, parse_documents(text, name, lines=lines)))
    return inputs


def _gather(args: argparse.Namespace) -> tuple[Any, list[dict[str, Any]], str]:
    """Inventory, Kubernetes objects (classes, claims) and a description of where they came from."""
    from gpu_dra.core import inventory as inv
    from gpu_dra.core import manifests
    from gpu_dra.core.inventory import InventoryError
    from gpu_dra.core.yamlsource import Located

    sources: list[tuple[str, list[Any]]] = _read_inputs(args.paths, lines=False)
    origins = list(args.paths)
    notes: list[str] = []
    if args.cluster:
        from gpu_dra.cli.cluster import ClusterError, read_cluster

        try:
            objects_read, notes = read_cluster(args.kubeconfig, args.context)
        except ClusterError as error:
            raise UsageError(str(error)) from None
        sources.append(("cluster", [Located(obj, {}) for obj in objects_read]))
        origins.append(f"cluster (context {args.context})" if args.context else "cluster")
    objects: list[dict[str, Any]] = []
    devices = inv.Inventory(notes=notes)
    for name, documents in sources:
        try:
            found = inv.from_documents(name, documents)
        except InventoryError as error:
            raise UsageError(str(error)) from None
        devices.devices.extend(found.devices)
        for document in documents:
            objects.extend(dict(obj) for obj in inv.objects_in_document(document.data)
                           if obj.get("kind") != "ResourceSlice")
    _validate_objects(objects)
    origin = ", ".join(origins)
    if args.stack:
        from gpu_dra.core.loader import load_stack

        stack = load_stack(_root(args), args.stack)
        objects += manifests.stack_device_classes(stack)
        objects += [manifests.claim_template(team, t) for team in stack.teams for t in team.claim_templates]
        if not devices.devices:
            devices = inv.synthesize(stack.config)
            origin = f"stack {args.stack}'s GPU node groups at max size (synthesized)"
    if not devices.devices:
        raise UsageError("no devices: give ResourceSlice files (kubectl get resourceslices -o yaml > slices.yaml), "
                         "--cluster, or --stack to synthesize the stack's fleet")
    return devices, objects, origin


def _validate_objects(objects: list[dict[str, Any]]) -> None:
    """Claims and classes given to explain must have the API's shape; say which one does not, and where."""
    import kubernetes_validate

    from gpu_dra.core import k8s_schema

    for obj in objects:
        if obj.get("kind") not in ("DeviceClass", "ResourceClaim", "ResourceClaimTemplate"):
            continue
        try:
            k8s_schema.validate(obj, "1.36", strict=False)
        except kubernetes_validate.ValidationError as error:
            meta: dict[str, Any] = obj["metadata"] if isinstance(obj.get("metadata"), dict) else {}
            location = ".".join(str(p) for p in error.path) or "(object)"
            raise UsageError(f"{obj.get('kind')} {meta.get('name', '?')}: {location}: {error.message} "
                             "(`gpu-dra lint` shows every problem)") from None
        except (kubernetes_validate.SchemaNotFoundError, kubernetes_validate.InvalidSchemaError) as error:
            raise UsageError(f"{obj.get('kind')}: {error}") from None


def cmd_inventory(args: argparse.Namespace) -> int:
    devices, _, origin = _gather(args)
    by_node: dict[str, list[Any]] = {}
    for device in devices.devices:
        by_node.setdefault(device.node, []).append(device)
    if args.format == "json":
        print(json.dumps({"source": origin, "notes": devices.notes, "nodes": [
            {"name": node, "devices": [{"driver": d.driver, "pool": d.pool, "name": d.name,
                                        "attributes": d.attributes, "capacity": d.capacity} for d in items]}
            for node, items in sorted(by_node.items())]}, separators=(",", ":")))
        return EXIT_OK
    print(f"Inventory from {origin}: {len(by_node)} node(s), {len(devices.devices)} device(s)")
    for note in devices.notes:
        print(f"  {note}")
    models: dict[tuple[str, ...], list[Any]] = {}
    for device in devices.devices:
        key = (device.driver, str(device.attribute(f"{device.driver}/productName") or device.attribute(
            f"{device.driver}/type") or "-"))
        models.setdefault(key, []).append(device)
    header = ("DRIVER", "MODEL", "NODES", "DEVICES", "MEMORY", "ARCHITECTURE", "COMPUTE", "DRIVER VERSION")
    rows = [header]
    for (driver, model), items in sorted(models.items()):
        first = items[0]
        rows.append((driver, model, str(len({d.node for d in items})), str(len(items)),
                     first.capacity.get("memory", "-"), str(first.attribute(f"{driver}/architecture") or "-"),
                     str(first.attribute(f"{driver}/cudaComputeCapability") or "-"),
                     str(first.attribute(f"{driver}/driverVersion") or "-")))
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    print()
    for row in rows:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())
    print()
    shown = sorted(by_node.items())
    for node, items in shown[:40]:
        names = ", ".join(d.name for d in items)
        print(f"  {node}: {names}")
    if len(shown) > 40:
        print(f"  ... and {len(shown) - 40} more nodes (--format json lists them all)")
    return EXIT_OK


def cmd_explain(args: argparse.Namespace) -> int:
    from gpu_dra.core.explain import (
        EXAMPLES,
        Explainer,
        claims_from_objects,
        classes_from_objects,
        in_use_from_claims,
    )

    devices, objects, origin = _gather(args)
    claims = claims_from_objects(objects)
    if args.claim:
        claims = [c for c in claims if args.claim in (c.name, c.name.rsplit("/", 1)[-1])]
        if not claims:
            raise UsageError(f"no claim or claim template named {args.claim!r} in the inputs")
    if not claims:
        raise UsageError("no ResourceClaim or ResourceClaimTemplate in the inputs (give files, or --stack)")
    explainer = Explainer(classes_from_objects(objects))
    in_use = in_use_from_claims(objects)
    reports = [explainer.explain(claim, devices, in_use) for claim in claims]
    if args.format == "json":
        examples = None if args.all_devices else EXAMPLES
        print(json.dumps({"source": origin, "claims": [r.as_dict(examples) for r in reports]},
                         separators=(",", ":")))
    else:
        print(f"Devices from {origin}: {len(devices.nodes())} node(s), {len(devices.devices)} device(s)\n")
        for report in reports:
            _print_report(report, args.verbose)
    return EXIT_OK if all(r.allocatable for r in reports) else EXIT_FINDINGS


def _print_report(report: Any, verbose: bool) -> None:
    if report.allocatable:
        nodes = ", ".join(report.nodes[:5]) + (f", ... ({len(report.nodes)} in all)" if len(report.nodes) > 5 else "")
        print(f"claim {report.claim}: allocatable on {len(report.nodes)} node(s): {nodes}")
    else:
        print(f"claim {report.claim}: NOT allocatable: {report.reason}")
    for request in report.requests:
        print(f"  request {request.name}: {len(request.matching)} device(s) match")
        for reason, devices in sorted(request.rejected.items(), key=lambda item: -len(item[1])):
            where = ", ".join(f"{d.node}/{d.name}" for d in devices[: 6 if verbose else 3])
            more = f", +{len(devices) - (6 if verbose else 3)}" if len(devices) > (6 if verbose else 3) else ""
            print(f"    {len(devices)} x {reason}  ({where}{more})")
    if report.solution:
        node, allocations = report.solution
        picked = "; ".join(f"{a.request}{'/' + a.subrequest if a.subrequest else ''} -> "
                           f"{', '.join(d.name for d in a.devices)}" for a in allocations)
        print(f"  first solution: {node}: {picked}")
    print()


def cmd_logs(args: argparse.Namespace) -> int:
    from gpu_dra.core import schedlogs

    name = args.path or "-"
    try:
        stream = sys.stdin if name == "-" else open(name, encoding="utf-8", errors="replace")  # noqa: SIM115
    except OSError as error:
        raise UsageError(f"{name}: cannot read: {error.strerror}") from None
    if args.pod:
        print(f"pod {args.pod}")
    with stream:
        report = schedlogs.scan(stream, args.pod, _print_log_line if args.pod else None)
    print(f"{report.kept} DRA line(s) of {report.scanned} read, {len(report.pods)} pod(s)")
    for pod in report.pods.values():
        if not args.pod:
            claims = ", ".join(sorted(pod.claims))
            print(f"\npod {pod.pod}" + (f" (claims: {claims})" if claims else ""))
            if pod.count > len(pod.recent):
                print(f"  ... {pod.count - len(pod.recent)} earlier line(s); `--pod {pod.pod}` shows all "
                      f"{pod.count}")
            for line in pod.recent:
                _print_log_line(line)
        if pod.reason:
            print(f"  => {pod.reason}")
    hint = report.verbosity_hint()
    if hint:
        print(f"\nnote: {hint}")
    return EXIT_OK


def _print_log_line(line: Any) -> None:
    detail = " ".join(f"{k}={v}" for k, v in line.fields.items() if k != "pod")
    print(f"  {line.number:6d} {line.caller:28} {line.message}" + (f"  {detail}" if detail else ""))


def cmd_check(args: argparse.Namespace) -> int:
    from gpu_dra.cli import check
    from gpu_dra.core.loader import available_stacks, load_stack
    from gpu_dra.core.policy import MANDATORY

    root = _root(args)
    stacks = available_stacks(root) if args.all_stacks else [args.stack or "dev"]
    if args.pack_config:
        if len(stacks) != 1:
            raise UsageError("--pack-config writes one stack's config; use --stack")
        print(json.dumps(check.pack_config(load_stack(root, stacks[0])), indent=2, sort_keys=True))
        return EXIT_OK
    found, problems = [], []
    for name in stacks:  # every stack's config mistakes in one run, not the first stack's only
        try:
            found += check.check_stack(root, name)
        except ConfigError as error:
            problems += error.findings
    if problems:
        raise ConfigError(problems)
    if args.format == "json":
        print(json.dumps(check.as_json(stacks, found), indent=2))
    elif args.format == "sarif":
        print(json.dumps(check.as_sarif(found, __version__), indent=2))
    else:
        for name in stacks:
            mine = [f for f in found if f.stack == name]
            mandatory = sum(1 for f in mine if f.violation.enforcement == MANDATORY)
            print(f"stack {name}: {mandatory} mandatory, {len(mine) - mandatory} advisory violation(s)")
            for item in sorted(mine, key=lambda f: (f.violation.enforcement != MANDATORY, f.file, f.line)):
                v = item.violation
                print(f"  [{v.enforcement}] {v.policy}  {item.file}:{item.line}")
                print(f"      {v.message}")
    return EXIT_FINDINGS if any(f.violation.enforcement == MANDATORY for f in found) else EXIT_OK


def _cluster_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--cluster", action="store_true",
                        help="read ResourceSlices, DeviceClasses, ResourceClaims and Nodes from a live cluster")
    parser.add_argument("--kubeconfig", help="kubeconfig file for --cluster (default: $KUBECONFIG, ~/.kube/config)")
    parser.add_argument("--context", help="kubeconfig context for --cluster (default: current)")


OUT_HELP = ("one YAML file per object under <namespace>/ or _cluster/. gpu-dra lists what it wrote in "
            "<folder>/.gpu-dra-files and on the next run replaces and prunes only those files; it never deletes or "
            "overwrites a file of yours, and stops before writing anything if one is in the way")


def build_parser() -> argparse.ArgumentParser:
    from gpu_dra.core.gates import DEFAULT_KUBERNETES_VERSION
    from gpu_dra.core.nvidia import DEFAULT_CHART_VERSION

    parser = argparse.ArgumentParser(prog="gpu-dra", description="GPU scheduling on EKS with Kubernetes DRA.")
    parser.add_argument("--version", action="version", version=f"gpu-dra {__version__}")
    parser.add_argument("--project-dir", help="the gpu-dra project (default: found from the current directory)")
    parser.add_argument("--debug", action="store_true", help="show tracebacks of internal errors")
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="VERB")

    preview = verbs.add_parser("preview", help="run the program offline under Pulumi mocks; print the resources")
    preview.add_argument("--stack", default="dev", help="stack name (stacks/Pulumi.<stack>.yaml; default dev)")
    preview.add_argument("--format", choices=["text", "json"], default="text")
    preview.add_argument("--out", help=f"folder for the Kubernetes manifests (default build/<stack>); {OUT_HELP}")
    preview.set_defaults(func=cmd_preview)

    render = verbs.add_parser("render", help="write the stack's Kubernetes objects as YAML, nothing else")
    render.add_argument("--stack", required=True)
    render.add_argument("--out", required=True, help=f"folder for the manifests; {OUT_HELP}")
    render.set_defaults(func=cmd_render)

    lint = verbs.add_parser("lint", help="check DeviceClass/ResourceClaim(Template) YAML offline: schema, CEL, "
                                         "lint rules, feature gates")
    lint.add_argument("paths", nargs="+", metavar="PATH", help="YAML files (multi-document or kind: List), or -")
    lint.add_argument("--kubernetes-version", default=DEFAULT_KUBERNETES_VERSION,
                      help=f"target Kubernetes minor version (default {DEFAULT_KUBERNETES_VERSION})")
    lint.add_argument("--platform", choices=["eks", "existing"], default="eks",
                      help="eks: upstream gate defaults, no alpha; existing: --feature-gates apply")
    lint.add_argument("--feature-gates", help="gates of an existing cluster, e.g. DRAConsumableCapacity=true")
    lint.add_argument("--chart", default="dra-driver-nvidia-gpu", help="NVIDIA DRA chart line (attribute catalog)")
    lint.add_argument("--chart-version", default=DEFAULT_CHART_VERSION,
                      help=f"NVIDIA DRA chart version (default {DEFAULT_CHART_VERSION})")
    lint.add_argument("--format", choices=["text", "json"], default="text")
    lint.set_defaults(func=cmd_lint)

    check = verbs.add_parser("check", help="run the policy pack offline on stacks (exit 1 on a mandatory violation)")
    target = check.add_mutually_exclusive_group()
    target.add_argument("--stack", help="stack name (default dev)")
    target.add_argument("--all-stacks", action="store_true", help="every stack in stacks/")
    check.add_argument("--format", choices=["text", "json", "sarif"], default="text")
    check.add_argument("--pack-config", action="store_true",
                       help="print the stack's config for `pulumi preview --policy-pack-config` instead")
    check.set_defaults(func=cmd_check)

    inventory = verbs.add_parser("inventory", help="nodes x devices from ResourceSlice files or a stack's fleet")
    inventory.add_argument("paths", nargs="*", metavar="FILE", help="kubectl get resourceslices -o yaml output, or -")
    inventory.add_argument("--stack", help="synthesize the stack's GPU node groups at max size")
    _cluster_options(inventory)
    inventory.add_argument("--format", choices=["text", "json"], default="text")
    inventory.set_defaults(func=cmd_inventory)

    explain = verbs.add_parser("explain", help="which devices and nodes satisfy each claim, and why not")
    explain.add_argument("paths", nargs="*", metavar="FILE",
                         help="ResourceSlices, DeviceClasses, ResourceClaims, ResourceClaimTemplates (YAML), or -")
    explain.add_argument("--stack", help="add the stack's classes and templates (and its fleet, without slices)")
    explain.add_argument("--claim", help="only this claim or template (name or namespace/name)")
    _cluster_options(explain)
    explain.add_argument("--verbose", action="store_true", help="list more devices per reason")
    explain.add_argument("--all-devices", action="store_true",
                         help="JSON: list every matching and rejected device (default: each count and the first 5)")
    explain.add_argument("--format", choices=["text", "json"], default="text")
    explain.set_defaults(func=cmd_explain)

    logs = verbs.add_parser("logs", help="kube-scheduler DRA log lines per pod and claim, with the final reason")
    logs.add_argument("path", nargs="?", metavar="FILE", help="kube-scheduler log (klog text or JSON); - for stdin")
    logs.add_argument("--pod", metavar="NAMESPACE/NAME",
                      help="every DRA line of this pod, as it is read (default: per pod the last "
                           "20 lines, the claims and the final reason)")
    logs.set_defaults(func=cmd_logs)

    schema = verbs.add_parser("schema", help="print the JSON Schema of stack or team files, for editors")
    schema.add_argument("file", choices=["stack", "team"], nargs="?", default="stack")
    schema.set_defaults(func=cmd_schema)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except ConfigError as error:
        print(error, file=sys.stderr)
        return EXIT_USAGE
    except UsageError as error:
        print(f"gpu-dra: {error}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # the reader (head, less) went away: nothing left to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    except Exception as error:  # a bug in gpu-dra, not a user mistake
        if args.debug:
            traceback.print_exc()
        print(f"gpu-dra: internal error: {type(error).__name__}: {error} (rerun with --debug for the traceback; "
              "please report it)", file=sys.stderr)
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
