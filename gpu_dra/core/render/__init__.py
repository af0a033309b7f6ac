"""What a validated stack becomes: Kubernetes objects, selectors, node labels and taints, chart values, the network
plan. Plain data; components/ turns it into Pulumi resources."""
