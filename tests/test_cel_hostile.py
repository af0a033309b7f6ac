"""Hostile selectors from team files (issue 13, items 1 and 2): they end quickly, in little memory, with the verdict
Kubernetes gives. The reproducers run in a child process with a deadline and an address-space limit, so a
regression fails here instead of hanging the suite or exhausting the machine."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from gpu_dra.core.dra.cel import (
    CompileError,
    budget,
    compile_selector,
    cost_model,
    device_view,
    evaluate,
    instrument,
    kubernetes_cost,
    regex,
)

from .conftest import ROOT

P5 = ROOT / "tests" / "data" / "resourceslices" / "h100-80gb-hbm3_eks-p5_v25.12.0.yaml"
H100 = device_view("gpu.nvidia.com", {"productName": {"string": "NVIDIA H100 80GB HBM3"}})
PRODUCT = "device.attributes['gpu.nvidia.com'].productName"
BACKTRACKING = "^(([A-Za-z0-9 -]+)+)+Z$"  # Python's re takes minutes on a product name; RE2 is linear
CHAINED_REPLACE = "size('aaaaaaaaaa'" + ".replace('a','aaaaaaaaaa')" * 9 + ") > 0"
MEMORY = 2**30  # the address space a child may use: a regression that builds gigabytes fails with MemoryError
RANGE_100 = "[" + ",".join(map(str, range(100))) + "]"


def nested_binds(levels: int, first: str = "'aaaaaaaaaa'") -> str:
    """cel.bind(v1, x+x+...(10 times), cel.bind(v2, v1+v1+..., ...)): each level ten times the last."""
    body = f"size(v{levels}) > 0"
    for level in range(levels, 0, -1):
        previous = first if level == 1 else f"v{level - 1}"
        body = f"cel.bind(v{level}, {'+'.join([previous] * 10)}, {body})"
    return body


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


def evaluate_bounded(expressions: list[str], seconds: float = 30) -> list[list[object]]:
    """[matches, error] of each stored selector on an H100, evaluated in a child with a deadline and MEMORY."""
    code = (
        "import json, sys\n"
        "from gpu_dra.core.dra.cel import compile_selector, device_view, evaluate\n"
        "device = device_view('gpu.nvidia.com', {'productName': {'string': 'NVIDIA H100 80GB HBM3'}})\n"
        "results = [evaluate(compile_selector(e, check_cost=False), device) for e in json.load(sys.stdin)]\n"
        "print(json.dumps([[r.matches, r.error] for r in results]))\n")
    done = subprocess.run([sys.executable, "-c", code], input=json.dumps(expressions), capture_output=True, text=True,
                          timeout=seconds, cwd=ROOT, preexec_fn=_limited)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


# --------------------------------------------------------------------------------------------- item 1: RE2


def test_a_backtracking_pattern_ends_at_once_in_find_find_all_and_matches() -> None:
    """The issue's reproducer: with Python's re, find() ran past 90 s (Ctrl-C then read as a non-match)."""
    assert evaluate_bounded([
        f"{PRODUCT}.find('{BACKTRACKING}') == ''",
        f"{PRODUCT}.findAll('{BACKTRACKING}') == []",
        f"{PRODUCT}.matches('{BACKTRACKING}')",
        # a pattern that is not a literal reaches cel-cpp's matches() unchecked at compile time: RE2 there too
        f"cel.bind(p, '{BACKTRACKING}', {PRODUCT}.matches(p))",
    ], seconds=20) == [[True, None], [True, None], [False, None], [False, None]]


def test_the_regex_entry_point_for_other_checks_is_re2() -> None:
    """regex.search is the entry point for the lint rule that tries product patterns: linear, RE2's syntax."""
    assert regex.search(BACKTRACKING, "NVIDIA H100 80GB HBM3" * 3) is False
    assert regex.search("[[:alpha:]]+ H100", "NVIDIA H100 80GB HBM3") is True
    with pytest.raises(regex.RegexError, match="invalid perl operator"):
        regex.search("H100(?!x)", "NVIDIA H100 80GB HBM3")


@pytest.mark.parametrize("expression", [
    f"{PRODUCT}.find('\\\\pL') == 'N'",                   # Unicode classes
    f"{PRODUCT}.find('3\\\\z') == '3'",                   # end of text
    f"{PRODUCT}.find('[[:alpha:]]+') == 'NVIDIA'",        # POSIX classes
    f"{PRODUCT}.findAll('[[:digit:]]+', 2) == ['100', '80']",
    f"{PRODUCT}.matches('(?i)h100')",
    "'ab'.findAll('a*') == ['a', '']",                    # Go skips an empty match right after a match
    "'aXbX'.findAll('X', 0) == [] && 'aXbX'.findAll('X', -1) == ['X', 'X']",
])
def test_re2_syntax_and_go_semantics(expression: str) -> None:
    result = evaluate(compile_selector(expression), H100)
    assert result.error is None and result.matches is True


REGEX_CALLS = {"matches": "{x}.matches({p})", "find": "{x}.find({p}) == ''", "findAll": "{x}.findAll({p}) == []"}


@pytest.mark.parametrize("function", REGEX_CALLS)
@pytest.mark.parametrize("pattern,reason", [("'(a)\\\\1'", "invalid escape sequence"),
                                            ("'a(?=b)'", "invalid perl operator")])
def test_patterns_re2_rejects_are_compile_errors(function: str, pattern: str, reason: str) -> None:
    """Backreferences and lookaround are Perl, not RE2: the API server rejects such a literal."""
    with pytest.raises(CompileError) as caught:
        compile_selector(REGEX_CALLS[function].format(x=PRODUCT, p=pattern))
    assert caught.value.kind == "regex" and reason in caught.value.message


@pytest.mark.parametrize("function", REGEX_CALLS)
def test_a_computed_invalid_pattern_is_a_runtime_error(function: str) -> None:
    """Not a literal, so only evaluation sees it: an error that aborts the claim (cel-go: `Illegal regex: ...`);
    matches() runs in cel-cpp, whose RE2 reports the same reason."""
    expression = "cel.bind(p, '(a)\\\\1', " + REGEX_CALLS[function].format(x=PRODUCT, p="p") + ")"
    result = evaluate(compile_selector(expression), H100)
    assert result.matches is False and result.error is not None and "invalid escape sequence" in result.error


# --------------------------------------------------------------------------------------------- item 2: bounds


def test_chained_replace_is_rejected_on_write_with_the_api_servers_estimate() -> None:
    """Kubernetes estimates replace's result from its operands (kubernetes/apiserver@v0.34.0:pkg/cel/library/
    cost.go): 'a'-> 10 a's grows tenfold per call, and each call costs 0.2 per character of its input, so the nine
    calls cost 2 + 20 + ... + 2e8 = 222,222,222, plus size() and `>`."""
    with pytest.raises(CompileError) as caught:
        compile_selector(CHAINED_REPLACE)
    assert caught.value.kind == "cost" and "estimated cost 222222224" in caught.value.message


@pytest.mark.parametrize("text,old,new,size", [
    # kubernetes/apiserver@v0.34.0:pkg/cel/library/cost_test.go TestSize, the replace rows
    ((3, 3), (0, 0), (1, 1), (7, 7)),
    ((3, 3), (1, 1), (0, 0), (0, 3)),
    ((4, 4), (2, 2), (4, 4), (4, 8)),
    ((4, 4), (0, 1), (0, 2), (0, 14)),
    ((4, 4), (1, 1), (1, 2), (4, 8)),
    ((4, 4), (1, 2), (1, 1), (2, 4)),
])
def test_replace_result_sizes_as_upstream_estimates_them(text, old, new, size) -> None:
    Range = cost_model.Range
    assert kubernetes_cost._replaced(Range(*text), Range(*old), Range(*new)) == Range(*size)


def test_replace_costs_what_upstream_asserts() -> None:
    """cost_test.go: "'abc 123 def 123'.replace('123', '456')" costs 3, estimated and at run time; the equality
    adds ceil(min(15, 1) * 0.1) = 1."""
    assert compile_selector("'abc 123 def 123'.replace('123', '456') == 'x'").estimated_cost == 4
    with budget.evaluation() as spent:
        assert budget.replace("abc 123 def 123", "123", "456") == "abc 456 def 456"
    assert spent.cost == 3


@pytest.mark.parametrize("expression", [CHAINED_REPLACE, nested_binds(10)])
def test_stored_growth_stops_at_the_schedulers_cost_limit(expression: str) -> None:
    """The issue's reproducers, which died with MemoryError at 3 GB: the scheduler stops both at actual cost
    1,000,000 (the seventh replace costs 2,000,000), with cel-go's words."""
    assert evaluate_bounded([expression]) == [[False, budget.COST_EXCEEDED]]


@pytest.mark.parametrize("expression", [
    nested_binds(8, first="[0,1,2,3,4,5,6,7,8,9]"),  # list concatenation costs 1 in Kubernetes
    f"size({PRODUCT}.replace('', '{'x' * 4000}').replace('', '{'y' * 4000}')) > 0",  # replace costs its input
    "[" + ",".join(["0"] * 2000) + "].map(x, x).size() > 0",  # cel-cpp's map() copies its list at every step
    "cel.bind(b, 'b'.replace('', '" + "x" * 4000 + "'), '%s'.format([[" + ",".join(["b"] * 2000) + "]]) != '')",
    "cel.bind(b, 'b'.replace('', '" + "x" * 4000 + "'), '%s'.format([[[b]]]) != '')",  # too deep to bound
])
def test_what_kubernetes_charges_little_for_stops_at_the_size_bound(expression: str) -> None:
    assert evaluate_bounded([expression]) == [[False, budget.SIZE_EXCEEDED]]


@pytest.mark.parametrize("expression", [
    f"cel.bind(b, {PRODUCT}.replace('', '{'x' * 4000}'), [{','.join(['b'] * 500)}].join('') != '')",
    "cel.bind(b, 'b'.replace('', '" + "x" * 4000 + "').replace('', 'y'), " + RANGE_100 + ".all(i, " + RANGE_100
    + ".all(j, !b.contains('zz') && b.lowerAscii() != '' && b != 'c')))",
])
def test_traversals_of_built_values_are_charged(expression: str) -> None:
    assert evaluate_bounded([expression]) == [[False, budget.COST_EXCEEDED]]


def test_the_limit_aborts_even_where_cel_would_absorb_the_error() -> None:
    """In cel-go the limit panics out of the evaluation; here the error value would vanish in `|| true`."""
    expression = f"[1, 2].exists(i, {CHAINED_REPLACE.replace(' > 0', ' < 0')}) || true"
    assert evaluate_bounded([expression]) == [[False, budget.COST_EXCEEDED]]


@pytest.mark.parametrize("expression", [
    "device.driver == 'gpu.nvidia.com' && device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('20Gi')) >= 0"
    f" && {PRODUCT}.matches('A100|H100|H200') && {PRODUCT}.lowerAscii().contains('h100')",
    "device.attributes['gpu.nvidia.com'].exists(k, k.startsWith('product'))",
])
def test_selectors_that_build_nothing_run_uninstrumented(expression: str) -> None:
    """Only calls that build values, or read built ones, are guarded: the usual selector runs as compiled."""
    assert instrument.GUARD.encode() not in compile_selector(expression).program.serialize()


def test_selectors_that_build_within_the_bounds_evaluate_as_before() -> None:
    expression = (f"cel.bind(n, {PRODUCT} + '/' + device.driver, n.split('/')[1] == 'gpu.nvidia.com' && "
                  f"[n, 'x'].join(',').endsWith(',x') && '%s-%d'.format([n.substring(0, 6), 3]) == 'NVIDIA-3' && "
                  "[1, 2] + [3] == [1, 2, 3] && b'a' + b'b' == b'ab' && 'abc'.replace('b', 'bb', 1) == 'abbc' && "
                  "[1, 2, 3].map(x, x * 2).filter(x, x > 2) == [4, 6] && strings.quote(n).size() > 2)")
    result = evaluate(compile_selector(expression, check_cost=False), H100)
    assert result.error is None and result.matches is True


# --------------------------------------------------------------------------------------------- through the CLI


def _claim_file(directory: Path, name: str, expression: str) -> Path:
    path = directory / f"{name}.yaml"
    path.write_text(yaml.safe_dump({
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
        "metadata": {"name": name, "namespace": "ml"},
        "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
            "deviceClassName": "gpu.nvidia.com", "selectors": [{"cel": {"expression": expression}}]}}]}}}},
        sort_keys=False))
    return path


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "gpu_dra.cli.main", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=60)
    assert time.monotonic() - started < 30, f"{args} took {time.monotonic() - started:.0f} s"
    return done


def test_cli_lint_and_explain_end_quickly_on_hostile_claims(tmp_path: Path) -> None:
    backtracking = _claim_file(tmp_path, "backtracking", f"{PRODUCT}.find('{BACKTRACKING}') == ''")
    growth = _claim_file(tmp_path, "growth", CHAINED_REPLACE)

    linted = _cli("lint", str(backtracking), str(growth))
    assert linted.returncode == 1, linted.stderr
    assert "ResourceClaimTemplate/ml/backtracking: ok" in linted.stdout
    assert "too complex, exceeds cost limit (estimated cost 222222224, limit 1000000)" in linted.stdout

    explained = _cli("explain", str(P5), str(backtracking), str(growth))
    assert explained.returncode == 1, explained.stderr
    assert "claim ml/backtracking: allocatable on 1 node(s)" in explained.stdout
    assert ("claim ml/growth: NOT allocatable: claim ml/growth: selector #0: CEL runtime error: operation cancelled: "
            "actual cost limit exceeded") in explained.stdout
