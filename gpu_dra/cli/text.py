"""What the CLI prints: values from inputs escaped and cut, and standard streams whose failed writes are one
OutputError; the JSON documents that carry device values."""

from __future__ import annotations

import contextlib
import io
import json
import re
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, cast

from gpu_dra.cli.process import UsageError

if TYPE_CHECKING:  # the inventory's types only: printing needs no parser
    from gpu_dra.core.analysis.inventory import Device

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"  # what `check`, `doctor` and `upgrade` write


def sarif_document(rules: Mapping[str, tuple[str, str]], results: list[dict[str, Any]]) -> dict[str, Any]:
    """A SARIF 2.1.0 log of one gpu-dra run: its rules (id -> (level, description)) and results."""
    from gpu_dra import __version__

    described = [{"id": rule, "shortDescription": {"text": text}, "defaultConfiguration": {"level": level}}
                 for rule, (level, text) in rules.items()]
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [{
        "tool": {"driver": {"name": "gpu-dra", "version": __version__, "rules": described}}, "results": results}]}

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


def shown(path: Path, root: Path) -> str:
    """`path` relative to `root` where it is under it, else as it is."""
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


def devices_json(document: Any, devices: Sequence[Device], **options: Any) -> str:
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
