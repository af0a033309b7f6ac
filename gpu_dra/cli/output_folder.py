"""The folders gpu-dra writes its output into (`render`, `preview --out`, `migrate --write`, `policy-pack --out`),
which users share with their own files and which others may be able to write into. This module alone keeps the
record of what gpu-dra wrote there: it reads and checks the record, decides what a run replaces and prunes, and
writes the record (the commands say only which files a run produces).

- The record: a command lists what it wrote in a file in the folder (`MANIFESTS` for render, preview and migrate
  --write; `POLICY_PACK` for policy-pack) and on the next run replaces and prunes only files listed there. A file it
  would write that exists and is not listed is the user's: the run stops before writing anything. A hand-edited
  record cannot widen this: only paths of the shape the command writes count (never a manifest folder's top, where a
  kustomization.yaml lives; never the pack's venv/). The record is not a manifest (kubectl apply -f reads only .yaml,
  .yml and .json files).
- A folder without the record: render and the like adopt the files in it that hold what they would write (an output
  folder of a version before the record loses nothing) and refuse any other in the way; policy-pack takes only an
  empty one.
- Links: nothing is written, read or pruned through a link below the folder. A linked subfolder would make gpu-dra
  write, or prune, files elsewhere; a link at the name of a temporary file would make it overwrite the file linked
  to. Either stops the run before anything is written (exit 2, naming the link). Subfolders are opened one at a
  time without following links (O_NOFOLLOW) and every file is created, renamed and removed relative to its folder's
  descriptor, so a link planted while gpu-dra runs is not followed either. The folder itself may be a link: the
  user named it.
- One run at a time: a run holds a lock on the folder (flock) while it writes.
- A run is written whole: each new file is first written under a temporary name beside its place, created
  exclusively (O_CREAT|O_EXCL|O_NOFOLLOW); only when all are written are they renamed into place, the files of the
  last run pruned and the record replaced, with Ctrl-C and SIGTERM held until that is done
  (`process.uninterrupted`). An error while the temporary files are written removes them: the folder stays as it was.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import NoReturn

from gpu_dra.cli.process import uninterrupted
from gpu_dra.cli.text import cut

_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: a FIFO put where a file was is not waited on.
_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_TOP = PurePosixPath(".")


class FolderError(Exception):
    """The folder cannot receive the files; nothing was written."""


@dataclass(frozen=True)
class Record:
    """The record a command keeps in its output folder: the file's name, its first line (a comment saying what it
    is), `owns`: whether a path inside the folder has the shape of one the command writes, and `maker`: the command
    as the refusal names it, set when it takes no folder that holds files without its record."""

    name: str
    header: str
    owns: Callable[[PurePosixPath], bool]
    maker: str | None = None


def _manifest(path: PurePosixPath) -> bool:
    """`<namespace or _cluster>/<kind>-<name>.yaml` (cli/manifest_files): nothing at the folder's top."""
    return len(path.parts) == 2 and path.suffix == ".yaml"


_PACK_FILES = frozenset({"PulumiPolicy.yaml", "__main__.py", "requirements.txt", ".gitignore"})


def _pack_file(path: PurePosixPath) -> bool:
    """The pack's own files and its copy of gpu_dra's source (cli/commands/policy_pack): never venv/, which
    `make policy-pack` makes there."""
    return str(path) in _PACK_FILES or (path.parts[:1] == ("gpu_dra",) and path.suffix == ".py")


MANIFESTS = Record(".gpu-dra-files", "# Files gpu-dra wrote here; the next render or preview replaces and prunes "
                   "these, nothing else.\n", _manifest)
POLICY_PACK = Record(".gpu-dra-policy-pack", "# Files `gpu-dra policy-pack` wrote here; the next build replaces and "
                     "prunes these, nothing else.\n", _pack_file, maker="`gpu-dra policy-pack`")


def check_folder(out: Path, record: Record, option: str = "--out") -> None:
    """Raise FolderError when `out` is not the command's to take (its record unreadable, or missing from a folder
    holding files for a command that takes only folders it made): before a slow build, as write_folder checks again."""
    with _Folders(out, option) as folders:
        top = folders.get(_TOP)
        if top is not None:
            _previous(folders, top, record)


def write_folder(out: Path, files: dict[str, bytes], record: Record, option: str = "--out") -> list[Path]:
    """Write `files` (relative path -> content) into `out`, leave those already holding their content as they are,
    and prune what the record listed that this run does not write, with the folders that leaves empty. Raises
    FolderError, having written nothing, when a file of the user's is in the way or a link is met. `option`: the flag
    naming the folder, as messages name it."""
    _check_owned(files, record)
    try:
        with _Folders(out, option) as folders:
            top = folders.get(_TOP)
            previous: set[str] = set()
            if top is not None:
                folders.lock(top)
                previous = _previous(folders, top, record)
            changed, stale = _plan(folders, files, previous, record)
            with uninterrupted():
                _commit(folders, {r: files[r] for r in changed}, stale, previous, set(files), record)
    except OSError as error:
        raise FolderError(f"cannot write to {cut(str(out))}: {error.strerror or error}") from None
    return [out / relative for relative in files]


def _inside(path: PurePosixPath) -> bool:
    return path != _TOP and not path.is_absolute() and ".." not in path.parts


def _check_owned(files: dict[str, bytes], record: Record) -> None:
    """Each file a run writes is one its record owns when read back; else the next run takes it for the user's."""
    for relative in files:
        path = PurePosixPath(relative)
        if str(path) != relative or not _inside(path) or not record.owns(path):
            raise ValueError(f"{relative!r} is not a path {record.name} can own")


def _previous(folders: _Folders, top: int, record: Record) -> set[str]:
    """What the record lists that the command owns; nothing for a folder without the record that it may take."""
    listed = _read_record(folders, top, record)
    if listed is not None or record.maker is None:
        return listed or set()
    try:
        holds_files = bool(os.listdir(top))
    except OSError as error:
        raise FolderError(f"{cut(str(folders.out))}: {error.strerror or error}") from None
    if holds_files:
        raise FolderError(f"{cut(str(folders.out))} holds files and {record.maker} did not make it (no {record.name} "
                          f"in it); move it away or choose another {folders.option}. Nothing was written")
    return set()


def _read_record(folders: _Folders, top: int, record: Record) -> set[str] | None:
    """The paths the record lists that the command owns (relative, inside the folder); None without a record."""
    try:
        descriptor = os.open(record.name, _READ, dir_fd=top)
    except FileNotFoundError:
        return None
    except OSError as error:
        folders.refuse_link(_TOP / record.name, "gpu-dra's record of the files it wrote")
        raise FolderError(f"{cut(str(folders.out / record.name))}: cannot read: {error.strerror}") from None
    try:
        with open(descriptor, encoding="utf-8") as file:
            lines = file.read().splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise FolderError(f"{cut(str(folders.out / record.name))}: cannot read gpu-dra's record of the files "
                          f"it wrote ({getattr(error, 'strerror', None) or error}); remove it, and gpu-dra takes "
                          "every file in its way as yours") from None
    paths = set()
    for line in lines:
        path = PurePosixPath(line.strip())
        if line.strip() and not line.startswith("#") and _inside(path) and record.owns(path):
            paths.add(str(path))
    return paths


def _plan(folders: _Folders, files: dict[str, bytes], previous: set[str],
          record: Record) -> tuple[list[str], list[str]]:
    """What to write (new or changed files) and what to prune, checked before anything is written: no link on the
    way, no file of the user's in the way, no link where a temporary file goes."""
    changed, foreign = [], []
    for relative, content in files.items():
        path = PurePosixPath(relative)
        folder = folders.get(path.parent)
        folders.refuse_temporary_link(folder, path)
        entry = _entry(folder, path.name)
        if entry is not None and stat.S_ISREG(entry.st_mode) and _holds(folder, path.name, content):
            continue  # an output folder from before the record was kept loses nothing, and make sees no change
        if entry is not None and (relative not in previous or not _replaceable(entry)):
            foreign.append(relative)
        changed.append(relative)
    if foreign:
        first = min(foreign)
        raise FolderError(f"{cut(str(folders.out / first))} exists and gpu-dra did not write it (it is not listed in "
                          f"{cut(str(folders.out / record.name))}); move it away or choose another "
                          f"{folders.option}. Nothing was written")
    folders.refuse_temporary_link(folders.get(_TOP), _TOP / record.name)
    stale = []
    for relative in sorted(previous - set(files)):
        path = PurePosixPath(relative)
        entry = _entry(folders.get(path.parent), path.name)
        if entry is not None and _replaceable(entry):
            stale.append(relative)
    return changed, stale


def _replaceable(entry: os.stat_result) -> bool:
    """A file, or a link put where one was (it is replaced or removed itself; what it points to is not touched)."""
    return stat.S_ISREG(entry.st_mode) or stat.S_ISLNK(entry.st_mode)


def _commit(folders: _Folders, changed: dict[str, bytes], stale: list[str], previous: set[str], written: set[str],
            record: Record) -> None:
    top = folders.make(_TOP)
    folders.lock(top)
    staged: list[tuple[int, str, str]] = []  # (folder, temporary name, name)
    try:
        for relative, content in changed.items():
            path = PurePosixPath(relative)
            folder = folders.make(path.parent)
            staged.append((folder, folders.stage(folder, path, content), path.name))
        # The record first lists what either run wrote: a run killed half-way still owns all it wrote.
        staged.insert(0, (top, folders.stage(top, _TOP / record.name, _listing(record, previous | written)),
                          record.name))
    except BaseException:
        for folder, temporary, _ in staged:
            with contextlib.suppress(OSError):
                os.unlink(temporary, dir_fd=folder)
        folders.remove_created()
        raise
    for folder, temporary, name in staged:
        os.replace(temporary, name, src_dir_fd=folder, dst_dir_fd=folder)
    for relative in stale:
        path = PurePosixPath(relative)
        parent = folders.opened.get(path.parent)  # opened when planned; gone if emptied by someone else since
        if parent is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path.name, dir_fd=parent)
            folders.remove_if_empty(path.parent)
    os.replace(folders.stage(top, _TOP / record.name, _listing(record, written)), record.name,
               src_dir_fd=top, dst_dir_fd=top)


def _listing(record: Record, paths: set[str]) -> bytes:
    """The record's content."""
    return (record.header + "".join(f"{p}\n" for p in sorted(paths))).encode()


def _entry(folder: int | None, name: str) -> os.stat_result | None:
    """The entry itself (a link is not followed); None when it or its folder is missing."""
    if folder is None:
        return None
    try:
        return os.stat(name, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        return None


def _holds(folder: int | None, name: str, content: bytes) -> bool:
    try:
        with open(os.open(name, _READ, dir_fd=folder), "rb") as file:
            return file.read(len(content) + 1) == content
    except OSError:
        return False


class _Folders:
    """The output folder and its subfolders, each opened once without following a link, and the subfolders made."""

    def __init__(self, out: Path, option: str):
        self.out, self.option = out, option
        self.opened: dict[PurePosixPath, int] = {}
        self.created: list[PurePosixPath] = []
        self.locked = False

    def __enter__(self) -> _Folders:
        return self

    def __exit__(self, *exc: object) -> None:
        for descriptor in self.opened.values():
            os.close(descriptor)

    def lock(self, top: int) -> None:
        """One run at a time writes the folder: another's temporary files are not taken for a killed run's, nor its
        renames mixed with this run's. The lock goes with the descriptor, when the run ends however it ends."""
        if not self.locked:
            try:
                fcntl.flock(top, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise FolderError(f"another gpu-dra is writing {cut(str(self.out))} now; run this once it is done. "
                                  "Nothing was written") from None
            except OSError:  # a file system without locks (NFS without its lock daemon): as before there were locks
                pass
            self.locked = True

    def get(self, relative: PurePosixPath) -> int | None:
        """The folder's descriptor; None when it is missing."""
        return self._open(relative, create=False)

    def make(self, relative: PurePosixPath) -> int:
        """The folder's descriptor, it and the folders above it made where missing."""
        descriptor = self._open(relative, create=True)
        if descriptor is None:  # removed between being made and opened
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), str(self.out / relative))
        return descriptor

    def _open(self, relative: PurePosixPath, create: bool) -> int | None:
        if relative in self.opened:
            return self.opened[relative]
        if relative == _TOP:
            descriptor = self._open_top(create)
        else:
            parent = self._open(relative.parent, create)
            if parent is None:
                return None
            descriptor = self._open_below(parent, relative, create)
        if descriptor is not None:
            self.opened[relative] = descriptor
        return descriptor

    def _open_top(self, create: bool) -> int | None:
        try:
            if create:
                self.out.mkdir(parents=True, exist_ok=True)
            return os.open(self.out, _FOLDER)
        except FileNotFoundError:
            return None
        except NotADirectoryError:
            raise FolderError(f"{cut(str(self.out))} is a file; {self.option} takes a folder") from None
        except OSError as error:  # a name too long, a folder that cannot be searched
            raise FolderError(f"{self.option} {cut(str(self.out))}: {error.strerror or error}") from None

    def _open_below(self, parent: int, relative: PurePosixPath, create: bool) -> int | None:
        try:
            return os.open(relative.name, _FOLDER | os.O_NOFOLLOW, dir_fd=parent)
        except FileNotFoundError:
            if not create:
                return None
        except OSError as error:
            self.refuse_link(relative)
            if isinstance(error, NotADirectoryError):
                raise FolderError(f"{cut(str(self.out / relative))} is a file where gpu-dra puts a folder; move it "
                                  f"away or choose another {self.option}. Nothing was written") from None
            raise
        os.mkdir(relative.name, dir_fd=parent)
        self.created.append(relative)
        return os.open(relative.name, _FOLDER | os.O_NOFOLLOW, dir_fd=parent)

    def refuse_link(self, relative: PurePosixPath, what: str = "") -> None:
        """Raise FolderError naming the link when `relative` is one (`what`: what gpu-dra puts at its name)."""
        parent = self.opened[relative.parent]
        with contextlib.suppress(OSError):
            if stat.S_ISLNK(os.stat(relative.name, dir_fd=parent, follow_symlinks=False).st_mode):
                target = os.readlink(relative.name, dir_fd=parent)
                role = f" at the name of {what}" if what else ""
                raise FolderError(f"{cut(str(self.out / relative))} is a link (to {cut(target)}){role}: gpu-dra "
                                  f"writes and prunes only inside {self.option} {cut(str(self.out))} and never "
                                  f"through a link. Remove the link or choose another {self.option}. Nothing was "
                                  "written")

    def refuse_temporary_link(self, folder: int | None, path: PurePosixPath) -> None:
        """A link where the temporary file of `path` goes stops the run before anything is written."""
        entry = _entry(folder, _temporary(path.name))
        if entry is not None and not stat.S_ISREG(entry.st_mode):
            self.refuse_temporary(path, entry)

    def refuse_temporary(self, path: PurePosixPath, entry: os.stat_result) -> NoReturn:
        temporary = path.parent / _temporary(path.name)
        if stat.S_ISLNK(entry.st_mode):
            self.refuse_link(temporary, f"gpu-dra's temporary copy of {path.name}")
        raise FolderError(f"{cut(str(self.out / temporary))} is in the way of gpu-dra's temporary copy of "
                          f"{path.name}; move it away. Nothing was written")

    def stage(self, folder: int, path: PurePosixPath, content: bytes) -> str:
        """Write `content` to the temporary name beside `path`, created exclusively: never through a link put there.
        A file left there by a run that was killed is replaced."""
        temporary = _temporary(path.name)
        for _ in range(2):
            try:
                descriptor = os.open(temporary, _CREATE, 0o666, dir_fd=folder)  # the umask applies, as to any file
            except FileExistsError:
                entry = os.stat(temporary, dir_fd=folder, follow_symlinks=False)
                if not stat.S_ISREG(entry.st_mode):
                    self.refuse_temporary(path, entry)
                os.unlink(temporary, dir_fd=folder)
                continue
            with open(descriptor, "wb") as file:
                file.write(content)
            return temporary
        raise FolderError(f"{cut(str(self.out / path.parent / temporary))} keeps coming back while gpu-dra writes "
                          "there; is another gpu-dra writing this folder? Nothing was written")

    def remove_created(self) -> None:
        """Remove the folders this run made (after a failure), deepest first, if they are empty."""
        for relative in reversed(self.created):
            with contextlib.suppress(OSError):
                os.rmdir(relative.name, dir_fd=self.opened[relative.parent])

    def remove_if_empty(self, relative: PurePosixPath) -> None:
        """Remove `relative` and then its parents while they are empty, up to the output folder."""
        while relative != _TOP:
            try:
                os.rmdir(relative.name, dir_fd=self.opened[relative.parent])
            except OSError:  # not empty (or no longer a folder): the folders above are not empty either
                return
            os.close(self.opened.pop(relative))
            relative = relative.parent


def _temporary(name: str) -> str:
    return f".{name}.tmp"

