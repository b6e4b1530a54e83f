"""floe benchmarks: each bench_*.py prints ratios against a baseline run side by side."""

import os

# floe's JVM knobs: a bench passes them on to every floe process it starts, and to its
# baselines that run on floe's session, so a run can compare them
# (FLOE_JVM_GC=g1 python -m bench pipeline; docs/decisions/0070-parallel-collector.md).
JVM_KNOBS = ("FLOE_JVM_GC", "FLOE_JVM_JIT")


def jvm_knobs() -> dict[str, str]:
    """The caller's FLOE_JVM_* settings, to pass on to a bench's floe processes."""
    return {k: v for k, v in os.environ.items() if k in JVM_KNOBS}
