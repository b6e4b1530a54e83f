"""floe benchmarks: each bench_*.py prints ratios against a baseline run side by side."""
