"""tools/transcribe_allocator_table.py: the Go it evaluates, the JSON it writes, and that it stops on Go it does not
know instead of writing a table that differs from upstream's (the tables themselves: test_allocator_upstream.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from .conftest import load_tool

tool = load_tool("transcribe_allocator_table")


def _evaluate(go: str) -> Any:
    evaluator = tool.Evaluator("case.go", {})
    return evaluator.eval(tool.Parser(tool.tokenize(go, 1), "case.go").expression())


def test_a_closure_runs_its_statements_on_the_objects_it_builds() -> None:
    value = _evaluate("""func() *resourceapi.ResourceSlice {
        s := &resourceapi.ResourceSlice{
            ObjectMeta: metav1.ObjectMeta{Name: "slice-1"},
            Spec: resourceapi.ResourceSliceSpec{
                Pool: resourceapi.ResourcePool{Name: "pool-1", Generation: 1, ResourceSliceCount: 1},
                Devices: []resourceapi.Device{{Name: "device-1"}},
            },
        }
        // A comment, as the table has them.
        s.Spec.Pool.Generation++
        s.Name += "-2"
        s.Spec.Devices[0].AllowMultipleAllocations = ptr.To(false)
        return s
    }()""")
    assert tool.plain(tool.deref(value)) == {
        "metadata": {"name": "slice-1-2"},
        "spec": {"pool": {"name": "pool-1", "generation": 2, "resourceSliceCount": 1},
                 "devices": [{"name": "device-1", "allowMultipleAllocations": False}]}}


def test_struct_zero_fields_are_left_out_but_map_entries_and_pointers_are_written() -> None:
    """encoding/json: omitempty drops a struct's zero fields, never a map's entries; an attribute with no value is
    a case of its own upstream ("unsupported attribute value")."""
    value = _evaluate("""resourceapi.Device{
        Name: "device-1",
        Attributes: map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{
            "a": {},
            "b": {IntValue: ptr.To(int64(0))},
        },
        BindingConditions: []string{},
        BindsToNode: ptr.To(false),
    }""")
    assert tool.plain(value) == {"name": "device-1", "attributes": {"a": {}, "b": {"int": 0}}, "bindsToNode": False}


def test_arithmetic_strings_and_sprintf() -> None:
    assert _evaluate("resourceapi.AllocationResultsMaxSize/2 + 1") == 17
    assert _evaluate('fmt.Sprintf(`device.driver == "%s" && %v`, "driver-a" + "/x", true)') == \
        'device.driver == "driver-a/x" && true'


@pytest.mark.parametrize(("go", "message"), [
    ("func() int {\n\tif x {\n\t\treturn 1\n\t}\n\treturn 2\n}()", "a 'if' statement, which this tool does not"),
    ("func() int {\n\tfor range 3 {\n\t}\n\treturn 2\n}()", "a 'for' statement"),
    ('resourceapi.Device{Name: "d", Colour: "red"}', "unknown field Colour in resourceapi.Device"),
    ("resourceapi.DeviceTaintEffectSometimes", "unknown qualified identifier resourceapi.DeviceTaintEffectSometimes"),
    ("deviceFromTheFuture(1)", "unknown identifier deviceFromTheFuture"),
    ('fmt.Sprintf("%q", "x")', "verb this tool does not know"),
    ('resource.MustParse("1e3")', "a form this tool does not check"),
    ("gomega.MatchError(gomega.HaveOccurred())", "unknown qualified identifier gomega.HaveOccurred"),
])
def test_go_it_does_not_know_stops_it(go: str, message: str) -> None:
    with pytest.raises(tool.TranscribeError, match=message):
        _evaluate(go)


def test_a_helper_whose_go_source_changed_stops_it() -> None:
    """The Python ports are pinned to the Go they were written from: an edited helper is not silently reused."""
    go_file = tool.GoFile("allocator_testing.go", "package x\n\nfunc claim(name string) wrapResourceClaim {\n"
                                                  "\treturn wrapResourceClaim{}\n}\n")
    with pytest.raises(tool.TranscribeError, match=r"allocator_testing.go:3: helper claim \(sha256 [0-9a-f]{16}\) is "
                                                   r"not one this tool has a port of"):
        tool.helper_ports(go_file)


def test_a_runner_it_does_not_know_stops_it() -> None:
    go_file = tool.GoFile("allocator_testing.go", "func TestAllocator(t *testing.T) {\n\ttestcases := map[string]"
                                                  "struct{}{\n\t}\n\tfor range testcases {\n\t}\n}\n")
    with pytest.raises(tool.TranscribeError, match="the code that runs TestAllocator's table"):
        tool.nil_node_is_node1([go_file], ["TestAllocator"])


def _claim(name: str) -> Any:
    return _evaluate(f'&resourceapi.ResourceClaim{{ObjectMeta: metav1.ObjectMeta{{Name: "{name}"}}}}')


def test_expectations_map_to_the_schema() -> None:
    error = tool.transcribe_case("e", tool.Struct(None, {
        "claimsToAllocate": [_claim("claim-0")],
        "expectError": tool.ErrorMatcher("invalid resource pools were encountered")}), "uid", None)
    assert error["expect"] == {"error": "invalid resource pools were encountered"}
    no_fit = tool.transcribe_case("n", tool.Struct(None, {"claimsToAllocate": [_claim("claim-0")],
                                                          "expectResults": []}), "uid", None)
    assert no_fit["expect"] == {"allocatable": False} and no_fit["node"] is None
    node = _evaluate('&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1", Labels: map[string]string{"a": "b"}}}')
    empty = tool.transcribe_case("empty", tool.Struct(None, {}), "uid", node)
    assert empty == {"name": "empty", "node": {"name": "node-1", "labels": {"a": "b"}}, "expect": {"results": []}}


def test_a_case_field_it_does_not_know_stops_it() -> None:
    with pytest.raises(tool.TranscribeError, match=r"case c: fields this tool does not know: \['expectWarnings'\]"):
        tool.transcribe_case("c", tool.Struct(None, {"expectWarnings": []}), "uid", None)


def test_a_bad_mirror_is_an_error_not_a_traceback(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert tool.main(["--mirror", str(tmp_path), "--tag", "v0.35.6", "--out", str(tmp_path / "out.yaml")]) == 2
    assert "error: git failed: git -C" in capsys.readouterr().err
    assert not (tmp_path / "out.yaml").exists()
