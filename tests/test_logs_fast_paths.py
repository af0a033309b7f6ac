"""`gpu-dra logs` reads most lines by shorter ways than the full parse (klog's plain key=value pairs looked up one
key at a time, a dense block read line by line, a file read in parallel parts): each must give what the full way
gives, on lines built to trip them."""

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

HEADERS = ["I1201 10:00:00.000000       1 ", "E1201 10:00:00.5 12 ", "I1201 10:00:00.000000  \u0661 ",
           "2022-11-10T20:30:18.670662874Z stderr F I1201 10:00:00.000000 1 ", "I1201 x 1 ", "W12 10:00 1 "]
CALLERS = ["allocator.go:12", "dynamicresources.go:420", "schedule_one.go:98", "server.go:1", "tracker.go:443",
           "a b.go:1", "x.go"]
MESSAGES = ['"Device in use"', '"CEL result"', '"Done with allocation"', '"pod unschedulable"', '"Observed a panic"',
            '"Plugin \\"DynamicResources\\" failed"', '"claimed lease"', '"err=1 pod=x"', "unquoted message", '"open']
KEYS = ["pod", "claim", "claims", "resourceclaims", "resourceClaim", "err", "reason", "status", "success", "logger",
        "plugin", "panic", "node", "xpod", "currentClaim", "x.pod", ".pod"]
VALUES = ['"ml/a"', '"ml/b"', "ml/c", '""', "<", "null", "<nil>", "true", "false", '"a pod=ml/z"', '"x err=boom"',
          '["ml/a-gpu"]', 'x"y', '"a\\"b"', '"could not find ResourceClaim \\"ml/c\\""', '"claim ml/d: gone"',
          '"DynamicResources"', '"dra-manager"', '"FilterWithNominatedPods.Filter.DynamicResources"', '"open', "a=b",
          "\u00e9"]
SEPARATORS = [" ", " ", " ", "  ", "\t", "", '" ']


def _line(rng: random.Random) -> str:
    """A line in klog's form with values and keys that trip a reader (half of them), or of any of these pieces."""
    plain = rng.random() < 0.5
    pairs = "".join((" " if plain else rng.choice(SEPARATORS)) + rng.choice(KEYS[:-2] if plain else KEYS) + "="
                    + rng.choice(VALUES[:9] if plain and rng.random() < 0.8 else VALUES)
                    for _ in range(rng.randint(0, 4)))
    return (rng.choice(HEADERS[:1] if plain else HEADERS) + rng.choice(CALLERS[:5] if plain else CALLERS) + "] "
            + rng.choice(MESSAGES[:5] if plain else MESSAGES) + pairs)


def _reading(reading: line_reading._Reading | None) -> tuple[object, ...] | None:
    return None if reading is None else (*reading[:6], line_reading._shown(reading.shown))


def _parsed(text: str) -> tuple[object, ...] | None:
    """The reading of the full parse: every key=value pair read by _KV, then looked at."""
    line = schedlogs.parse_line(0, text)
    if line is None:
        return None
    return _reading(line_reading._Reading._of_fields(text, line.caller, line.message, line.fields))


def _read(lines: list[str], monkeypatch: pytest.MonkeyPatch) -> tuple[list[tuple[object, ...] | None], int]:
    """The readings of `lines`, and how many were parsed whole."""
    parse_record, parsed = line_reading._parse_record, []

    def counted(*args: object) -> schedlogs.LogLine:
        parsed.append(args)
        return parse_record(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(line_reading, "_parse_record", counted)
    readings = [line_reading._Reading.of(line) for line in lines]
    monkeypatch.undo()
    return [_reading(reading) for reading in readings], len(parsed)


def test_a_line_read_key_by_key_reads_as_parsed_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(25)
    lines = [_line(rng) for _ in range(20_000)]
    readings, parsed = _read(lines, monkeypatch)
    assert sum(reading is not None for reading in readings) - parsed > 2_000  # read key by key
    assert [line for line, reading in zip(lines, readings, strict=True) if reading != _parsed(line)] == []


def test_the_lines_of_a_v7_log_are_read_key_by_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """The bench's V(7) log (bench/generate.py, from the allocator's source): 9 lines in 10 are not parsed whole."""
    sys.path.insert(0, str(Path(__file__).parent.parent / "bench"))
    import generate

    lines = generate.scheduler_log_v7(1).splitlines()
    readings, parsed = _read(lines, monkeypatch)
    assert all(readings) and parsed < len(lines) // 10
    assert readings == [_parsed(line) for line in lines]


# Allocator lines name no pod: they go to the pod the last line before them named, a DRA line or not.
ASIDE = "".join(
    f'I1201 10:00:00.000000       1 schedule_one.go:98] "Attempting to schedule pod" pod="ml/p{n % 7}"\n'
    + (f'I1201 10:00:00.000000       1 schedule_one.go:314] "Successfully bound pod to node" pod="web/w{n}"\n'
       if n % 3 == 0 else "")
    + 'I1201 10:00:00.000000       1 allocator.go:180] "Starting allocation" numClaims=1\n' * (n % 4)
    + ('I1201 10:00:00.000000       1 server.go:1] "Serving" port=10259\n' if n % 5 == 0 else "")
    for n in range(400))


@pytest.mark.parametrize("text", [ASIDE, MIXED, NEW_FORMATS], ids=["aside", "mixed", "new formats"])
def test_a_dense_block_read_line_by_line_reads_as_its_runs(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    """After a block of mostly DRA lines the next is read line by line, its lines that are no candidates naming
    the pod in between; blocks of 1 KB here, read either way."""
    monkeypatch.setattr(scanning, "_mostly", lambda dra_lines, lines: False)
    runs = _full(schedlogs.scan(io.BytesIO(text.encode()), block_size=1024))
    monkeypatch.setattr(scanning, "_mostly", lambda dra_lines, lines: True)
    assert _full(schedlogs.scan(io.BytesIO(text.encode()), block_size=1024)) == runs
