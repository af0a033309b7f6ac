"""`gpu-dra completion bash|zsh|fish`: a shell completion script, generated from the verbs' own parsers so it
completes exactly the verbs, options, choices and actions (team new|show) `gpu-dra --help` lists, stack and team
names from the project's stacks/Pulumi.<stack>.yaml and stacks/teams/, and file names elsewhere."""

from __future__ import annotations

import argparse
import shlex
from dataclasses import dataclass

from gpu_dra.cli.process import EXIT_OK
from gpu_dra.core.facts.gates import VERSIONS

EXAMPLES = """examples:
  source <(gpu-dra completion bash)                                  # this shell; add it to ~/.bashrc to keep it
  gpu-dra completion zsh > "${fpath[1]}/_gpu-dra"                    # zsh, then start a new shell
  gpu-dra completion fish > ~/.config/fish/completions/gpu-dra.fish

exit codes: 0 the script was printed, 2 an unknown shell
"""

SHELLS = ("bash", "zsh", "fish")
# The options whose value is a stack name, completed from the stack files of the project: --project-dir's, else the
# nearest folder above the working directory holding a Pulumi.yaml, as gpu-dra finds it (cli/project.py).
STACK_OPTIONS = ("--stack",)
STACKS_COMMAND = ("ls \"$(_gpu_dra_root)\"/stacks/Pulumi.*.yaml 2>/dev/null "
                  "| sed -e 's|.*/Pulumi\\.||' -e 's|\\.yaml$||'")
TEAMS_COMMAND = "ls \"$(_gpu_dra_root)\"/stacks/teams/*.yaml 2>/dev/null | sed -e 's|.*/||' -e 's|\\.yaml$||'"
# The options whose value is a Kubernetes minor, completed with those whose gate table gpu-dra has.
VERSION_OPTIONS = ("--kubernetes-version",)


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("shell", choices=SHELLS)


@dataclass(frozen=True)
class _Option:
    flags: tuple[str, ...]
    takes_value: bool
    choices: tuple[str, ...]
    help: str


@dataclass(frozen=True)
class _Verb:
    options: list[_Option]
    actions: tuple[str, ...]  # the choices of its first argument (team new|show, completion bash|zsh|fish)


def _verbs() -> dict[str, _Verb]:
    """Each verb's options and first argument's choices, from its parser as `gpu-dra VERB --help` builds it (the
    verbs' modules imported)."""
    from gpu_dra.cli.main import build_parser, with_arguments

    subparsers = build_parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    assert isinstance(subparsers, dict)
    verbs = {}
    for name, parser in subparsers.items():
        options, positionals = [], []
        for action in with_arguments(name, parser)._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            if not action.option_strings:
                positionals.append(action)
                continue
            options.append(_Option(tuple(action.option_strings), action.nargs != 0,
                                   tuple(str(c) for c in action.choices or ()), (action.help or "").split(";")[0]))
        first = positionals[0].choices if positionals and positionals[0].choices else ()
        verbs[name] = _Verb(options, tuple(str(c) for c in first))
    return verbs


def run(args: argparse.Namespace) -> int:
    verbs = _verbs()
    print({"bash": _bash, "zsh": _zsh, "fish": _fish}[args.shell](verbs), end="")
    return EXIT_OK


def _bash(verbs: dict[str, _Verb]) -> str:
    cases = []
    for name, verb in verbs.items():
        flags = " ".join(flag for option in verb.options for flag in option.flags)
        values = "".join(f"\n        {'|'.join(option.flags)}) COMPREPLY=($(compgen -W {shlex.quote(' '.join(option.choices))} -- \"$cur\")); return;;"  # noqa: E501
                         for option in verb.options if option.choices)
        actions = (f"\n      [[ $words -eq 0 && \"$cur\" != -* ]] && {{ COMPREPLY=($(compgen -W "
                   f"{shlex.quote(' '.join(verb.actions))} -- \"$cur\")); return; }}" if verb.actions else "")
        cases.append(f"    {name})\n      opts={shlex.quote(flags)}{actions}\n      case \"$prev\" in{values}\n"
                     "      esac;;")
    stack_case = "|".join(STACK_OPTIONS)
    return f"""# gpu-dra completion for bash (gpu-dra completion bash)
_gpu_dra_root() {{
  local d="${{_gpu_dra_dir:-$PWD}}"
  [[ "$d" == /* ]] || d="$PWD/$d"
  while [[ "$d" != / && ! -f "$d/Pulumi.yaml" ]]; do d="$(dirname "$d")"; done
  echo "$d"
}}
_gpu_dra() {{
  local cur="${{COMP_WORDS[COMP_CWORD]}}" prev="${{COMP_WORDS[COMP_CWORD-1]}}" verb="" opts="" i words=0
  local _gpu_dra_dir=""
  for ((i = 1; i < COMP_CWORD; i++)); do
    case "${{COMP_WORDS[i]}}" in
      --project-dir) _gpu_dra_dir="${{COMP_WORDS[i+1]}}"; ((i++));;
      -*) ;;
      *) if [[ -z "$verb" ]]; then verb="${{COMP_WORDS[i]}}"; else ((words++)); fi;;
    esac
  done
  if [[ -z "$verb" ]]; then
    COMPREPLY=($(compgen -W {shlex.quote(' '.join(verbs))} -- "$cur")); return
  fi
  case "$prev" in
    {stack_case}) COMPREPLY=($(compgen -W "$({STACKS_COMMAND})" -- "$cur")); return;;
    {"|".join(VERSION_OPTIONS)}) COMPREPLY=($(compgen -W {shlex.quote(" ".join(VERSIONS))} -- "$cur")); return;;
  esac
  if [[ "$verb" == team && "$prev" == show ]]; then
    COMPREPLY=($(compgen -W "$({TEAMS_COMMAND})" -- "$cur")); return
  fi
  case "$verb" in
{chr(10).join(cases)}
  esac
  if [[ "$cur" == -* ]]; then COMPREPLY=($(compgen -W "$opts" -- "$cur")); else COMPREPLY=($(compgen -f -- "$cur")); fi
}}
complete -o filenames -F _gpu_dra gpu-dra
"""


def _zsh(verbs: dict[str, _Verb]) -> str:
    """zsh runs the bash script through its bashcompinit (zsh's own emulation of bash's `complete`)."""
    return ("#compdef gpu-dra\n# gpu-dra completion for zsh (gpu-dra completion zsh), through zsh's bashcompinit\n"
            "autoload -U +X bashcompinit && bashcompinit\n" + _bash(verbs).split("\n", 1)[1])


def _fish(verbs: dict[str, _Verb]) -> str:
    lines = ["# gpu-dra completion for fish (gpu-dra completion fish)", "complete -c gpu-dra -f",
             "function _gpu_dra_root",
             "    set -l d (pwd)",
             "    while test \"$d\" != /; and not test -f \"$d/Pulumi.yaml\"",
             "        set d (dirname \"$d\")",
             "    end",
             "    echo $d",
             "end"]
    for name in verbs:
        lines.append(f"complete -c gpu-dra -n __fish_use_subcommand -a {name}")
    for name, verb in verbs.items():
        if verb.actions:
            lines.append(f"complete -c gpu-dra -n '__fish_seen_subcommand_from {name}; and not __fish_seen_subcommand_"
                         f"from {' '.join(verb.actions)}' -x -a {shlex.quote(' '.join(verb.actions))}")
        for option in verb.options:
            parts = [f"complete -c gpu-dra -n '__fish_seen_subcommand_from {name}'"]
            for flag in option.flags:
                parts.append(f"-l {flag[2:]}" if flag.startswith("--") else f"-s {flag[1:]}")
            if option.choices:
                parts.append(f"-x -a {shlex.quote(' '.join(option.choices))}")
            elif set(option.flags) & set(STACK_OPTIONS):
                parts.append(f"-x -a {shlex.quote(f'({STACKS_COMMAND})')}")
            elif set(option.flags) & set(VERSION_OPTIONS):
                parts.append(f"-x -a {shlex.quote(' '.join(VERSIONS))}")
            elif option.takes_value:
                parts.append("-r -F")
            if option.help:
                parts.append(f"-d {shlex.quote(option.help[:80])}")
            lines.append(" ".join(parts))
        if name == "team":
            lines.append("complete -c gpu-dra -n '__fish_seen_subcommand_from team; and __fish_seen_subcommand_from "
                         f"show' -x -a {shlex.quote(f'({TEAMS_COMMAND})')}")
        lines.append(f"complete -c gpu-dra -n '__fish_seen_subcommand_from {name}' -F")
    return "\n".join(lines) + "\n"
