"""gpu-dra's Pulumi program: validate the stack's config, then declare its resources.

Run by `pulumi up`/`pulumi preview`, and by `gpu-dra preview` under Pulumi's mock runtime; it is the same program.
"""

import sys
from pathlib import Path

import pulumi

from components.engine_config import project_config, pulumi_cli_too_old
from components.platform import build
from gpu_dra.cli.text import message_text, printable
from gpu_dra.core.config.deploy_time import placeholders
from gpu_dra.core.config.loader import load_stack_from_engine
from gpu_dra.core.findings import ConfigError


def refuse(error: ConfigError) -> None:
    """A user's mistake: one line per problem, exit 2, nothing registered, no traceback; values from team files reach
    the terminal of whoever runs `pulumi up` cut and escaped, as gpu-dra prints them."""
    print(printable(message_text(str(error))), file=sys.stderr)
    sys.exit(2)


# gpu-dra's runs under mocks are previews whatever the mocks' flag says, with no engine to ask for its version.
offline = bool(globals().get("OFFLINE_PREVIEW"))
if not offline and (too_old := pulumi_cli_too_old()):
    print(too_old, file=sys.stderr)
    sys.exit(2)

# `gpu-dra preview` and `check` validated the stack already and hand it over; under `pulumi up` it is done here.
stack = globals().get("VALIDATED_STACK")
if stack is None:
    try:
        stack = load_stack_from_engine(Path(__file__).resolve().parent, pulumi.get_stack(), project_config())
    except ConfigError as error:
        refuse(error)
# The deploy itself, not its preview.
if not offline and not pulumi.runtime.is_dry_run() and (found := placeholders(stack)):
    refuse(ConfigError(found))

build(stack)
