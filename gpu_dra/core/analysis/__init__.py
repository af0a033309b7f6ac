"""What a cluster has and does: inventory (ResourceSlices, or a stack's fleet synthesized), the allocator, explain,
scheduler logs."""
