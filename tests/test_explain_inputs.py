"""What explain says of its inputs themselves (issue 27, item 5): inputs without devices say what they lack and how
to get it; claims of one name from different files are told apart by the file."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from .test_cli import gpu_dra
from .test_explain_pods import P5, template

DUMP_IT = ("give every driver's ResourceSlices (kubectl get resourceslices -o yaml > slices.yaml), --cluster, or "
           "--stack to synthesize the stack's fleet")


def test_claims_of_one_name_from_two_files_name_their_file(tmp_path: Path) -> None:
    first, second = tmp_path / "cluster-a.yaml", tmp_path / "cluster-b.yaml"
    first.write_text(yaml.safe_dump_all([template("pair", count=2), template("alone")]))
    second.write_text(yaml.safe_dump(template("pair", count=9)))
    result = gpu_dra("explain", str(P5), str(first), str(second))
    assert result.returncode == 1, result.stderr
    lines = [line for line in result.stdout.splitlines() if line.startswith("claim ")]
    assert [line.split(": ")[0] for line in lines] == [
        f"claim ml/pair (from {first})", "claim ml/alone", f"claim ml/pair (from {second})"]
    claims = json.loads(gpu_dra("explain", str(P5), str(first), str(second), "--format", "json").stdout)["claims"]
    assert [(c["claim"], c["file"], c["allocatable"]) for c in claims] == [
        ("ml/pair", str(first), True), ("ml/alone", None, True), ("ml/pair", str(second), False)]


def test_inputs_without_slices_say_so(tmp_path: Path) -> None:
    claims = tmp_path / "claims.yaml"
    claims.write_text(yaml.safe_dump(template("one")))
    result = gpu_dra("explain", str(claims))
    assert result.returncode == 2
    assert result.stderr == f"gpu-dra: no devices in {claims}: they hold no ResourceSlice; {DUMP_IT}\n"


def test_inputs_with_nodes_and_no_slices_say_where_devices_are(tmp_path: Path) -> None:
    inputs = tmp_path / "nodes-and-claims.yaml"
    inputs.write_text(yaml.safe_dump_all([{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "gpu-1"}},
                                          template("one")]))
    result = gpu_dra("explain", str(inputs))
    assert result.returncode == 2
    assert result.stderr == (f"gpu-dra: no devices in {inputs}: they hold 1 Node(s) but no ResourceSlice (a DRA driver "
                             f"publishes a node's devices in ResourceSlices, not on the Node); {DUMP_IT}\n")


def test_slices_listing_no_device_say_so(tmp_path: Path) -> None:
    dump = yaml.safe_load(P5.read_text())
    for item in dump["items"]:
        item["spec"]["devices"] = []
    slices = tmp_path / "slices.yaml"
    slices.write_text(yaml.safe_dump(dump))
    claims = tmp_path / "claims.yaml"
    claims.write_text(yaml.safe_dump(template("one")))
    result = gpu_dra("explain", str(slices), str(claims))
    assert result.returncode == 2
    assert result.stderr == (
        f"gpu-dra: no devices in {slices}, {claims}: their 2 ResourceSlice(s) (driver compute-domain.nvidia.com, "
        "gpu.nvidia.com) list no device: slices of shared counters only, or a driver whose kubelet plugin found "
        f"nothing to publish; {DUMP_IT}\n")
