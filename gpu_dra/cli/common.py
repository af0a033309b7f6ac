"""What every verb shares: exit codes, the usage error, finding the project, running the program offline."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3
EXIT_INTERRUPTED = 130


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


def read_inputs(paths: list[str], lines: bool = True) -> list[tuple[str, list[Any]]]:
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


def cluster_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--cluster", action="store_true",
                        help="read ResourceSlices, DeviceClasses, ResourceClaims and Nodes from a live cluster")
    parser.add_argument("--kubeconfig", help="kubeconfig file for --cluster (default: $KUBECONFIG, ~/.kube/config)")
    parser.add_argument("--context", help="kubeconfig context for --cluster (default: current)")


def gather(args: argparse.Namespace) -> tuple[Any, list[dict[str, Any]], str]:
    """Inventory, Kubernetes objects (classes, claims) and a description of where they came from."""
    from gpu_dra.core.analysis import inventory as inv
    from gpu_dra.core.analysis.inventory import InventoryError
    from gpu_dra.core.render import manifests
    from gpu_dra.core.yamlsource import Located

    sources: list[tuple[str, list[Any]]] = read_inputs(args.paths, lines=False)
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
    validate_objects(objects)
    origin = ", ".join(origins)
    if args.stack:
        from gpu_dra.core.config.loader import load_stack

        stack = load_stack(project_root(args), args.stack)
        objects += manifests.stack_device_classes(stack)
        objects += [manifests.claim_template(team, t) for team in stack.teams for t in team.claim_templates]
        if not devices.devices:
            devices = inv.synthesize(stack.config)
            origin = f"stack {args.stack}'s GPU node groups at max size (synthesized)"
    if not devices.devices:
        raise UsageError("no devices: give ResourceSlice files (kubectl get resourceslices -o yaml > slices.yaml), "
                         "--cluster, or --stack to synthesize the stack's fleet")
    return devices, objects, origin


def validate_objects(objects: list[dict[str, Any]]) -> None:
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
            raise UsageError(f"{obj.get('kind')} {meta.get('name', '?')}: {location}: {error.message} "
                             "(`gpu-dra lint` shows every problem)") from None
        except (kubernetes_validate.SchemaNotFoundError, kubernetes_validate.InvalidSchemaError) as error:
            raise UsageError(f"{obj.get('kind')}: {error}") from None
