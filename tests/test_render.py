"""`render` and `preview` write into folders users share: they replace and prune only what they wrote."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import yaml

from .conftest import ROOT, Project
from .test_cli import gpu_dra

RECORD = ".gpu-dra-files"


def tree(folder: Path) -> dict[str, str]:
    """Every file under `folder` with a digest of its content."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_render_into_the_repository_root_deletes_and_changes_nothing(tmp_path: Path) -> None:
    copy = tmp_path / "gpu-dra"
    shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns(".git", ".venv", "build", "__pycache__", "*.egg-info"))
    before = tree(copy)
    result = gpu_dra("render", "--stack", "dev", "--out", ".", cwd=copy)
    assert result.returncode == 0, result.stderr
    after = tree(copy)
    assert {path: digest for path, digest in after.items() if path in before} == before
    written = set(after) - set(before)
    assert RECORD in written and "_cluster/deviceclass-gpu-l4.yaml" in written
    assert all(p == RECORD or p.endswith(".yaml") for p in written)


def test_a_foreign_file_in_the_output_folder_survives_reruns(tmp_path: Path) -> None:
    out = tmp_path / "manifests"
    (out / "inference").mkdir(parents=True)
    (out / "kustomization.yaml").write_text("resources: []\n")
    (out / "inference" / "notes.yaml").write_text("mine: true\n")
    for _ in range(2):
        assert gpu_dra("render", "--stack", "dev", "--out", str(out)).returncode == 0
    assert (out / "kustomization.yaml").read_text() == "resources: []\n"
    assert (out / "inference" / "notes.yaml").read_text() == "mine: true\n"
    assert (out / "inference" / "resourceclaimtemplate-gpu-20gb-any.yaml").exists()


def test_the_file_of_a_removed_template_is_pruned(project: Project, tmp_path: Path) -> None:
    out = tmp_path / "out"
    stale = out / "inference" / "resourceclaimtemplate-l40s.yaml"
    assert gpu_dra("--project-dir", str(project.root), "render", "--stack", "dev", "--out", str(out)).returncode == 0
    assert stale.exists()
    project.edit("stacks/teams/inference.yaml",
                 lambda team: team.update(claimTemplates=[t for t in team["claimTemplates"] if t["name"] != "l40s"]))
    result = gpu_dra("--project-dir", str(project.root), "render", "--stack", "dev", "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert not stale.exists()
    assert (out / "inference" / "resourceclaimtemplate-gpu-20gb-any.yaml").exists()
    assert "inference/resourceclaimtemplate-l40s.yaml" not in (out / RECORD).read_text()


def test_a_user_file_where_an_object_would_go_stops_the_run_before_anything_is_written(tmp_path: Path) -> None:
    out = tmp_path / "out"
    (out / "_cluster").mkdir(parents=True)
    theirs = out / "_cluster" / "deviceclass-gpu-l4.yaml"
    theirs.write_text("# hand-edited\n")
    result = gpu_dra("render", "--stack", "dev", "--out", str(out))
    assert result.returncode == 2
    assert "deviceclass-gpu-l4.yaml exists and gpu-dra did not write it" in result.stderr
    assert theirs.read_text() == "# hand-edited\n"
    assert sorted(p.name for p in out.rglob("*")) == ["_cluster", "deviceclass-gpu-l4.yaml"]


def test_a_record_cannot_make_gpu_dra_delete_outside_its_folder(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    outside = tmp_path / "precious.yaml"
    outside.write_text("keep: me\n")
    (out / RECORD).write_text(f"../precious.yaml\n{outside}\nREADME.md\n")
    assert gpu_dra("render", "--stack", "dev", "--out", str(out)).returncode == 0
    assert outside.read_text() == "keep: me\n"


def test_out_must_be_a_folder(tmp_path: Path) -> None:
    target = tmp_path / "file.yaml"
    target.write_text("x: 1\n")
    result = gpu_dra("render", "--stack", "dev", "--out", str(target))
    assert result.returncode == 2 and "is a file; --out takes a folder" in result.stderr
    assert target.read_text() == "x: 1\n"


def test_a_folder_written_before_the_record_existed_is_adopted(tmp_path: Path) -> None:
    """Files identical to what would be written lose nothing: a build/ folder of an earlier version upgrades."""
    out = tmp_path / "out"
    assert gpu_dra("render", "--stack", "dev", "--out", str(out)).returncode == 0
    (out / RECORD).unlink()
    result = gpu_dra("render", "--stack", "dev", "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert "_cluster/deviceclass-gpu-l4.yaml" in (out / RECORD).read_text()


def test_two_objects_for_one_file_stop_the_run(tmp_path: Path) -> None:
    import pytest

    from gpu_dra.cli.manifest_files import FolderError, write_manifests

    same = [{"apiVersion": f"{group}/v1", "kind": "Thing", "metadata": {"name": "x", "namespace": "n"}, "spec": {}}
            for group in ("a.example.com", "b.example.com")]
    with pytest.raises(FolderError, match="two objects would be written to n/thing-x.yaml"):
        write_manifests(same, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_render_to_stdout_is_what_out_writes(tmp_path: Path) -> None:
    """`-o yaml` (to pipe into kubectl apply --dry-run=server -f - or kubectl diff -f -) and `-o json` (a List) hold
    the objects --out writes, apiVersion and kind first."""
    written = gpu_dra("render", "--stack", "prod", "--out", str(tmp_path / "out"))
    assert written.returncode == 0, written.stderr
    files = [yaml.safe_load(p.read_text()) for p in sorted((tmp_path / "out").rglob("*.yaml"))]
    streamed = gpu_dra("render", "--stack", "prod", "-o", "yaml")
    assert streamed.returncode == 0 and streamed.stdout.startswith("apiVersion: ")
    documents = list(yaml.safe_load_all(streamed.stdout))
    key = lambda obj: (obj["kind"], obj["metadata"].get("namespace", ""), obj["metadata"]["name"])  # noqa: E731
    assert sorted(documents, key=key) == sorted(files, key=key)
    listed = json.loads(gpu_dra("render", "--stack", "prod", "-o", "json").stdout)
    assert (listed["kind"], listed["items"]) == ("List", documents)


def test_render_charts_adds_the_modelled_chart_objects_and_names_the_others() -> None:
    plain = list(yaml.safe_load_all(gpu_dra("render", "--stack", "staging", "-o", "yaml").stdout))
    result = gpu_dra("render", "--stack", "staging", "-o", "yaml", "--charts")
    with_charts = list(yaml.safe_load_all(result.stdout))
    added = with_charts[len(plain):]
    assert with_charts[:len(plain)] == plain
    assert {(o["kind"], o["metadata"].get("namespace")) for o in added} >= {("DaemonSet", "nvidia-dra-driver")}
    assert "gpu-dra: note: chart kueue 0.19.2 is not modelled by gpu-dra: `helm template` renders its objects" \
        in result.stderr.splitlines()


def test_render_needs_out_or_output() -> None:
    result = gpu_dra("render", "--stack", "prod")
    assert result.returncode == 2 and "one of the arguments --out -o/--output is required" in result.stderr
