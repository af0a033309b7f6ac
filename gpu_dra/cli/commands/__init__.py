"""One module per verb: `register(verbs)` adds its parser, `run(args)` does the work and returns the exit code."""
