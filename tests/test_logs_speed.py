"""`gpu-dra logs` on a kube-scheduler log at V(7), where nearly every line is new (it names the pod, node and device):
its lines are read through their skeletons (the line with its quoted values left out: a few per log), not key by
key, and a block of mostly new lines turns looking lines up off for the next blocks. Each way gives what the full
way gives."""

from __future__ import annotations

import io
import random
import sys
from pathlib import Path

import pytest

from gpu_dra.core.analysis import schedlogs
from gpu_dra.core.analysis.schedlogs import reading as line_reading
from gpu_dra.core.analysis.schedlogs import scanning

from .test_logs import MIXED, NEW_FORMATS, _full
from .test_logs_fast_paths import ASIDE, _line, _parsed, _reading

sys.path.insert(0, str(Path(__file__).parent.parent / "bench"))
import generate  # noqa: E402  (bench/generate.py: the logs `make bench` reads)

V7 = generate.scheduler_log_v7(1)


def test_the_lines_of_a_v7_log_are_read_through_a_few_skeletons(monkeypatch: pytest.MonkeyPatch) -> None:
    """The allocator's lines of the bench's V(7) log share 13 skeletons, and none is read key by key or parsed
    whole, those that name a claim neither."""
    monkeypatch.setattr(line_reading, "_SKELETONS", {})
    slow: list[str] = []
    for name in ("_of_plain", "_of_fields"):
        real = getattr(line_reading._Reading, name).__func__

        def counted(cls: type, text: str, *args: object, real: object = real) -> object:
            slow.append(text)
            return real(cls, text, *args)  # type: ignore[operator]

        monkeypatch.setattr(line_reading._Reading, name, classmethod(counted))
    lines = V7.splitlines()
    readings = [line_reading._Reading.of(line) for line in lines]
    allocator = [line for line in lines if "allocator_incubating.go" in line]
    read_slowly = [line for line in slow if "allocator_incubating.go" in line]
    assert allocator and read_slowly == []
    assert len({key for key, skeleton in line_reading._SKELETONS.items() if "allocator_incubating" in key}) == 13
    monkeypatch.undo()
    assert [_reading(reading) for reading in readings] == [_parsed(line) for line in lines]


def test_lines_alike_but_for_their_quoted_values_read_as_parsed_whole() -> None:
    """Lines that share a skeleton, and values that trip a reader: each read as the full parse reads it."""
    rng = random.Random(7)
    templates = [_line(rng) for _ in range(300)]
    values = ["ml/a", "", "<", "a b", "x=y", "claim ml/c", "ResourceClaim", "DynamicResources", "dra-x", "pod=ml/z",
              "null", "true", "'", "\u00e9", "laim "]
    lines = []
    for template in templates:
        parts = template.split('"')
        for _ in range(5):  # the same skeleton, other quoted values (the message stays)
            lines.append('"'.join(part if index % 2 == 0 or index == 1 else rng.choice(values)
                                  for index, part in enumerate(parts)))
    assert [line for line in lines if _reading(line_reading._Reading.of(line)) != _parsed(line)] == []


@pytest.mark.parametrize("text", [V7, ASIDE, MIXED, NEW_FORMATS], ids=["v7", "aside", "mixed", "new formats"])
def test_lines_read_each_give_what_lines_looked_up_give(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    """Looking lines up turned off after every block, or never: the same report; blocks of 4 KB."""
    monkeypatch.setattr(scanning, "_mostly_new", lambda new_lines, lines: False)
    looked_up = _full(schedlogs.scan(io.BytesIO(text.encode()), block_size=4096))
    monkeypatch.setattr(scanning, "_mostly_new", lambda new_lines, lines: True)
    assert _full(schedlogs.scan(io.BytesIO(text.encode()), block_size=4096)) == looked_up


def test_a_v7_log_turns_looking_lines_up_off(monkeypatch: pytest.MonkeyPatch) -> None:
    """After its first block (of mostly new lines) a V(7) log's lines are read each, those seen before too: nearly
    as many readings as DRA lines; with looking up never turned off, only the new lines are read (7 in 10)."""
    read: list[str] = []
    real = line_reading._Reading.of

    def counted(cls: type, text: str) -> object:
        read.append(text)
        return real(text)

    monkeypatch.setattr(line_reading._Reading, "of", classmethod(counted))
    report = schedlogs.scan(io.BytesIO(V7.encode()), block_size=64 << 10)
    assert len(read) > report.kept * 0.9
    read.clear()
    monkeypatch.setattr(scanning, "_mostly_new", lambda new_lines, lines: False)
    schedlogs.scan(io.BytesIO(V7.encode()), block_size=64 << 10)
    assert len(read) < report.kept * 0.8
