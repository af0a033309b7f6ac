"""The output folders of render, preview --out, migrate --write and policy-pack (cli/output_folder, issue 24): a link
in the folder never makes gpu-dra write or delete a file outside it (exit 2, naming the link, nothing written), and a
run that fails while it writes leaves the folder as it was."""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
from pathlib import Path, PurePosixPath

import pytest

from gpu_dra.cli.manifest_files import write_manifests
from gpu_dra.cli.output_folder import MANIFESTS, POLICY_PACK, FolderError, Record, check_folder, write_folder

from .conftest import ROOT
from .test_cli import gpu_dra

PRECIOUS = "the user's file, outside the output folder\n"


def _tree(folder: Path) -> dict[str, str]:
    """Every entry under `folder`, hidden ones too; a link as where it points (not followed)."""
    entries = {}
    for path in sorted(folder.rglob("*")):
        name = path.relative_to(folder).as_posix()
        if path.is_symlink():
            entries[name] = f"link to {path.readlink()}"
        elif path.is_file():
            entries[name] = hashlib.sha256(path.read_bytes()).hexdigest()
        else:
            entries[name] = "folder"
    return entries


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("rendered") / "out"
    result = gpu_dra("render", "--stack", "dev", "--out", str(out))
    assert result.returncode == 0, result.stderr
    return out


@pytest.fixture(scope="module")
def pack(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("pack") / "out"
    result = gpu_dra("policy-pack", "--out", str(out))
    assert result.returncode == 0, result.stderr
    return out


# Per command: its arguments, the folder of its first run, and a file it wrote and writes again.
COMMANDS = {"render": (["render", "--stack", "dev"], "rendered", "_cluster/deviceclass-gpu-l4.yaml"),
            "policy-pack": (["policy-pack"], "pack", "requirements.txt")}


@pytest.mark.parametrize("command", COMMANDS)
def test_a_link_at_a_temporary_files_name_is_refused_and_what_it_points_to_untouched(
        command: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """gpu-dra wrote `.<name>.tmp` and renamed it: a link planted at that name made it overwrite the file linked to
    (any file the user may write), and the link then became the output file."""
    args, first_run, relative = COMMANDS[command]
    out = tmp_path / "out"
    shutil.copytree(request.getfixturevalue(first_run), out)
    rewritten = out / relative
    rewritten.write_text(rewritten.read_text() + "# changed since: the run writes it again\n")
    victim = tmp_path / "victim.txt"
    victim.write_text(PRECIOUS)
    link = rewritten.with_name(f".{rewritten.name}.tmp")
    link.symlink_to(victim)
    before = _tree(out)
    result = gpu_dra(*args, "--out", str(out))
    assert victim.read_text() == PRECIOUS
    assert result.returncode == 2, result.stderr
    assert f"{link} is a link (to {victim}) at the name of gpu-dra's temporary copy of {rewritten.name}" \
           in result.stderr and "Nothing was written" in result.stderr
    assert _tree(out) == before


# Per command: a subfolder it writes into and a file of an earlier run there that this run no longer writes.
SUBFOLDERS = {"render": ("research", "resourceclaimtemplate-retired.yaml"),
              "policy-pack": ("gpu_dra/core/facts", "retired.py")}


@pytest.mark.parametrize("command", COMMANDS)
def test_a_linked_subfolder_is_neither_written_nor_pruned_through(command: str, tmp_path: Path,
                                                                 request: pytest.FixtureRequest) -> None:
    """A subfolder replaced by a link to a folder of the user's: writing through it replaced the user's files of the
    same names, and pruning through it deleted the user's file that the record (of the folder's earlier life)
    listed."""
    args, first_run, _ = COMMANDS[command]
    subfolder, retired = SUBFOLDERS[command]
    out = tmp_path / "out"
    shutil.copytree(request.getfixturevalue(first_run), out)
    elsewhere = tmp_path / "elsewhere"
    shutil.move(out / subfolder, elsewhere)
    (out / subfolder).symlink_to(elsewhere, target_is_directory=True)
    (elsewhere / retired).write_text(PRECIOUS)
    for path in elsewhere.iterdir():
        path.write_text(PRECIOUS)  # the user's files now, under the names gpu-dra writes
    record = next(out.glob(".gpu-dra-*"))
    record.write_text(record.read_text() + f"{subfolder}/{retired}\n")
    theirs, before = _tree(elsewhere), _tree(out)
    result = gpu_dra(*args, "--out", str(out))
    assert _tree(elsewhere) == theirs
    assert result.returncode == 2, result.stderr
    assert f"{out / subfolder} is a link (to {elsewhere}): gpu-dra writes and prunes only inside --out {out} and " \
           "never through a link" in result.stderr
    assert _tree(out) == before


def test_a_linked_subfolder_that_holds_only_files_to_prune_is_refused(rendered: Path, tmp_path: Path) -> None:
    """This run writes nothing there: only the pruning would go through the link."""
    out = tmp_path / "out"
    shutil.copytree(rendered, out)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "resourceclaimtemplate-x.yaml").write_text(PRECIOUS)
    (out / "retired-team").symlink_to(elsewhere, target_is_directory=True)
    record = out / ".gpu-dra-files"
    record.write_text(record.read_text() + "retired-team/resourceclaimtemplate-x.yaml\n")
    result = gpu_dra("render", "--stack", "dev", "--out", str(out))
    assert (elsewhere / "resourceclaimtemplate-x.yaml").read_text() == PRECIOUS
    assert result.returncode == 2, result.stderr
    assert f"{out / 'retired-team'} is a link (to {elsewhere})" in result.stderr


# --------------------------------------------------------------------------------------------- the writer itself

OWNED = Record(".record", "# written by the test\n", lambda path: path.suffix == ".yaml")


def test_a_failure_while_the_files_are_written_leaves_the_folder_as_it_was(tmp_path: Path) -> None:
    """The second file's temporary name is one character too long for the file system (255 bytes): the first file,
    already written under its temporary name, is neither renamed into place nor left behind, and the folder made
    for the second is removed."""
    out = tmp_path / "out"
    write_folder(out, {"a/first.yaml": b"old\n", "a/gone.yaml": b"old\n"}, OWNED)
    before = _tree(out)
    long_name = "n" * (255 - len(".yaml")) + ".yaml"  # fits; `.<name>.tmp` does not
    with pytest.raises(FolderError, match="cannot write to .*File name too long"):
        write_folder(out, {"a/first.yaml": b"new\n", f"b/{long_name}": b"new\n"}, OWNED)
    assert _tree(out) == before


def test_a_temporary_file_left_by_a_killed_run_is_replaced(tmp_path: Path) -> None:
    """Temporary files are created exclusively; one a killed run left (a file, not a link) does not block the next."""
    out = tmp_path / "out"
    (out / "a").mkdir(parents=True)
    (out / "a" / ".first.yaml.tmp").write_text("half of a file")
    assert write_folder(out, {"a/first.yaml": b"whole\n"}, OWNED) == [out / "a" / "first.yaml"]
    assert _tree(out).keys() == {".record", "a", "a/first.yaml"}
    assert (out / "a" / "first.yaml").read_text() == "whole\n"


def test_a_link_put_where_a_recorded_file_was_is_replaced_by_the_file(tmp_path: Path) -> None:
    """The link itself goes (rename replaces the name); the file it pointed to keeps its content."""
    out = tmp_path / "out"
    write_folder(out, {"a/first.yaml": b"old\n"}, OWNED)
    victim = tmp_path / "victim.yaml"
    victim.write_text(PRECIOUS)
    (out / "a" / "first.yaml").unlink()
    (out / "a" / "first.yaml").symlink_to(victim)
    write_folder(out, {"a/first.yaml": b"new\n"}, OWNED)
    assert not (out / "a" / "first.yaml").is_symlink() and (out / "a" / "first.yaml").read_text() == "new\n"
    assert victim.read_text() == PRECIOUS


def test_links_on_no_path_gpu_dra_writes_or_prunes_are_left_alone(tmp_path: Path) -> None:
    """Links elsewhere in the folder, on no path gpu-dra writes or prunes, are no concern of the run."""
    out = tmp_path / "out"
    (out / "docs").mkdir(parents=True)
    (out / "docs" / "latest").symlink_to(ROOT / "docs", target_is_directory=True)
    write_folder(out, {"a/first.yaml": b"new\n"}, OWNED)
    assert (out / "docs" / "latest").is_symlink()


def test_one_run_at_a_time_writes_a_folder(tmp_path: Path) -> None:
    """A second run does not take the first's temporary files for a killed run's, nor mix its renames in."""
    out = tmp_path / "out"
    write_folder(out, {"a/first.yaml": b"old\n"}, OWNED)
    before = _tree(out)
    descriptor = os.open(out, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)  # as a run writing the folder holds it
        with pytest.raises(FolderError, match=f"another gpu-dra is writing {out} now"):
            write_folder(out, {"a/first.yaml": b"new\n"}, OWNED)
    finally:
        os.close(descriptor)
    assert _tree(out) == before
    write_folder(out, {"a/first.yaml": b"new\n"}, OWNED)
    assert (out / "a" / "first.yaml").read_text() == "new\n"


# --------------------------------------------------------------------------------------------- the record

def _namespace(name: str) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


def test_a_hand_edited_manifest_record_cannot_prune_a_file_at_the_folders_top(tmp_path: Path) -> None:
    """render, preview and migrate --write write `<namespace or _cluster>/<kind>-<name>.yaml` only: a record listing
    the user's kustomization.yaml beside them (any .yaml counted before) does not make the next run delete it."""
    out = tmp_path / "out"
    write_manifests([_namespace("a"), _namespace("b")], out)
    (out / "kustomization.yaml").write_text(PRECIOUS)
    (out / "_cluster" / "notes.txt").write_text(PRECIOUS)
    with open(out / MANIFESTS.name, "a") as record:
        record.write("kustomization.yaml\n_cluster/notes.txt\n")
    write_manifests([_namespace("a")], out)
    assert (out / "kustomization.yaml").read_text() == PRECIOUS
    assert (out / "_cluster" / "notes.txt").read_text() == PRECIOUS
    assert not (out / "_cluster" / "namespace-b.yaml").exists()
    assert (out / MANIFESTS.name).read_text().splitlines()[1:] == ["_cluster/namespace-a.yaml"]


def test_policy_pack_takes_no_folder_holding_files_without_its_record(tmp_path: Path) -> None:
    """The rule is the writer's, checked while it holds the folder (not only by the build before its probe); render's
    record adopts such a folder."""
    out = tmp_path / "out"
    out.mkdir()
    (out / ".hidden").write_text(PRECIOUS)
    for check in (lambda: check_folder(out, POLICY_PACK),
                  lambda: write_folder(out, {"__main__.py": b"pass\n"}, POLICY_PACK)):
        with pytest.raises(FolderError, match=f"{out} holds files and `gpu-dra policy-pack` did not make it "
                                              f"\\(no {POLICY_PACK.name} in it\\); move it away or choose another "
                                              "--out. Nothing was written"):
            check()
    assert _tree(out) == {".hidden": hashlib.sha256(PRECIOUS.encode()).hexdigest()}
    check_folder(out, MANIFESTS)
    write_folder(out, {"_cluster/namespace-a.yaml": b"kind: Namespace\n"}, MANIFESTS)
    assert (out / ".hidden").read_text() == PRECIOUS
    empty = tmp_path / "empty"
    empty.mkdir()
    write_folder(empty, {"__main__.py": b"pass\n"}, POLICY_PACK)
    assert (empty / POLICY_PACK.name).read_text().splitlines()[1:] == ["__main__.py"]


@pytest.mark.parametrize("relative", ["kustomization.yaml", "a/b/c.yaml", "../escape/x.yaml", "a//b.yaml", "a/b.yml"])
def test_a_file_its_record_would_not_own_is_not_written(relative: str, tmp_path: Path) -> None:
    """The record reads back only paths of the command's shape: a file outside that shape would be taken for the
    user's by the next run (or escape the folder), so the writer refuses it as gpu-dra's bug, writing nothing."""
    with pytest.raises(ValueError, match=f"is not a path {MANIFESTS.name} can own"):
        write_folder(tmp_path / "out", {"_cluster/fine.yaml": b"x\n", relative: b"x\n"}, MANIFESTS)
    assert not (tmp_path / "out").exists() and not (tmp_path / "escape").exists()
    assert MANIFESTS.owns(PurePosixPath("_cluster/fine.yaml"))
