"""`gpu-dra completion`: the bash script completes the verbs, each verb's options and choices, stack names from the
project and Kubernetes versions, run in a real bash as the shell would call it. zsh runs the same script through its
bashcompinit; fish gets its own `complete` lines (neither shell is on this machine: their scripts are checked for
what they must say, not run)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from .conftest import ROOT
from .test_cli import gpu_dra


def _complete(script: str, words: list[str], cwd: Path = ROOT) -> list[str]:
    """COMPREPLY for the command line `words` (the last one being completed), as bash's programmable completion
    calls the function: in the project's folder unless `cwd` says otherwise."""
    line = " ".join(f"'{w}'" for w in words)
    program = (f"{script}\nCOMP_WORDS=({line}); COMP_CWORD={len(words) - 1}; _gpu_dra; "
               'printf "%s\\n" "${COMPREPLY[@]}"')
    result = subprocess.run(["bash", "-c", program], cwd=cwd, capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    return sorted(line for line in result.stdout.splitlines() if line)


@pytest.fixture(scope="module")
def bash_script() -> str:
    result = gpu_dra("completion", "bash")
    assert result.returncode == 0
    return result.stdout


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash")
@pytest.mark.parametrize("words, expected", [
    (["gpu-dra", "li"], ["lint"]),
    (["gpu-dra", "check", "--stack", ""], ["automode", "dev", "prod", "staging"]),
    (["gpu-dra", "render", "-o", ""], ["json", "yaml"]),
    (["gpu-dra", "--project-dir", ".", "check", "--st"], ["--stack"]),
    (["gpu-dra", "lint", "--kubernetes-version", "1.3"], ["1.33", "1.34", "1.35", "1.36", "1.37"]),
    (["gpu-dra", "explain", "--format", ""], ["json", "text"]),
    (["gpu-dra", "team", ""], ["new", "show"]),
    (["gpu-dra", "completion", ""], ["bash", "fish", "zsh"]),
    (["gpu-dra", "schema", ""], ["stack", "team"]),
    (["gpu-dra", "team", "show", "tr"], ["training"]),
])
def test_bash_completes(bash_script: str, words: list[str], expected: list[str]) -> None:
    assert _complete(bash_script, words) == expected


def test_bash_completes_file_names_for_arguments(bash_script: str) -> None:
    """(readline adds the slash of a folder: the script is registered with -o filenames)"""
    assert _complete(bash_script, ["gpu-dra", "migrate", "examples/mi"]) == ["examples/migrate"]


def test_zsh_and_fish_scripts() -> None:
    zsh = gpu_dra("completion", "zsh").stdout
    assert zsh.startswith("#compdef gpu-dra\n") and "bashcompinit" in zsh and "complete -o filenames -F _gpu_dra" in zsh
    fish = gpu_dra("completion", "fish").stdout.splitlines()
    start, end = fish.index("function _gpu_dra_root"), fish.index("end")  # finds the project as gpu-dra does
    assert all(line.startswith(("#", "complete -c gpu-dra")) for line in fish[:start] + fish[end + 1:])
    assert "complete -c gpu-dra -n '__fish_seen_subcommand_from team; and not __fish_seen_subcommand_from new show' " \
           "-x -a 'new show'" in fish
    assert "complete -c gpu-dra -n '__fish_seen_subcommand_from render' -s o -l output -x -a 'yaml json' " \
           "-d 'to stdout instead: one multi-document YAML stream, or a JSON List (kubectl'\"'\"'s -o)'" in fish
    assert gpu_dra("completion", "tcsh").returncode == 2


def test_the_help_example_installs_for_bash(tmp_path: Path) -> None:
    """`source <(gpu-dra completion bash)` defines the completion in the shell."""
    script = tmp_path / "c.bash"
    script.write_text(gpu_dra("completion", "bash").stdout)
    result = subprocess.run(["bash", "-c", f"source {script}; complete -p gpu-dra"], capture_output=True, text=True)
    assert result.stdout.strip() == "complete -o filenames -F _gpu_dra gpu-dra"


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash")
def test_bash_finds_the_stacks_from_a_subfolder_and_from_project_dir(bash_script: str, tmp_path: Path) -> None:
    """As gpu-dra finds its project: the nearest Pulumi.yaml above the working folder, or --project-dir's."""
    stacks = ["automode", "dev", "prod", "staging"]
    assert _complete(bash_script, ["gpu-dra", "check", "--stack", ""], cwd=ROOT / "docs") == stacks
    assert _complete(bash_script, ["gpu-dra", "--project-dir", str(ROOT), "check", "--stack", ""],
                     cwd=tmp_path) == stacks
