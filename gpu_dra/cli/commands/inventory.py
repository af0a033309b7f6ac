"""`gpu-dra inventory`: nodes x devices from ResourceSlice dumps, a live cluster, or a stack's fleet."""

from __future__ import annotations

import argparse

from gpu_dra.cli.arguments import cluster_options
from gpu_dra.cli.process import EXIT_OK
from gpu_dra.cli.sources import gather
from gpu_dra.cli.text import devices_json
from gpu_dra.core.analysis.inventory import Device

EXAMPLES = """examples:
  kubectl get resourceslices -o json > slices.json && gpu-dra inventory slices.json
  gpu-dra inventory --stack prod
  gpu-dra inventory --cluster --context prod

exit codes: 0 the inventory was printed, 2 bad input (an unreadable file or cluster, no such stack)
"""


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="*", metavar="FILE", help="kubectl get resourceslices -o yaml output, or -")
    parser.add_argument("--stack", help="synthesize the stack's GPU node groups at max size")
    cluster_options(parser)
    parser.add_argument("--format", choices=["text", "json"], default="text")


def run(args: argparse.Namespace) -> int:
    devices, _, origin = gather(args)
    by_node: dict[str, list[Device]] = {}
    for device in devices.devices:
        by_node.setdefault(device.node, []).append(device)
    if args.format == "json":
        print(devices_json({"source": origin, "notes": devices.notes, "nodes": [
            {"name": node, "devices": [{"driver": d.driver, "pool": d.pool, "name": d.name,
                                        "attributes": d.attributes, "capacity": d.capacity} for d in items]}
            for node, items in sorted(by_node.items())]}, devices.devices, separators=(",", ":")))
        return EXIT_OK
    print(f"Inventory from {origin}: {len(by_node)} node(s), {len(devices.devices)} device(s)")
    for note in devices.notes:
        print(f"  {note}")
    models: dict[tuple[str, ...], list[Device]] = {}
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
