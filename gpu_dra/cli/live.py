"""The live cluster a verb reads with `--cluster`: what cannot be read is bad input. Light to import: the kubernetes
client (1 s) is loaded only when the cluster is read (cli/cluster_read)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from gpu_dra.cli.cluster import DEVICE_READS, ClusterError, ClusterState, Read
from gpu_dra.cli.process import UsageError


def read_live_cluster(args: argparse.Namespace, reads: Sequence[Read] | None = None) -> ClusterState:
    """The cluster's objects for `--cluster`; what cannot be read is bad input."""
    from gpu_dra.cli.cluster_read import read_cluster  # the kubernetes client (1 s to import) only with --cluster

    try:
        return read_cluster(args.kubeconfig, args.context, args.request_timeout, reads or DEVICE_READS,
                            getattr(args, "namespace", None), **({"memory": args.read_memory}
                                                                 if getattr(args, "read_memory", None) else {}))
    except ClusterError as error:
        raise UsageError(str(error)) from None
