"""`make bench` / `python -m bench [NAME ...]`: run every bench/bench_*.py (or the named ones).

Each benchmark module has `main() -> None` and prints its figures and ratios.
Benchmarks are never run as tests: speed is measured here, not asserted there.
"""

from __future__ import annotations

import importlib
import sys
import time
from pathlib import Path


def main(argv: list[str]) -> int:
    names = argv or sorted(p.stem for p in Path(__file__).parent.glob("bench_*.py"))
    failed = []
    for name in names:
        module_name = name if name.startswith("bench_") else f"bench_{name}"
        print(f"\n=== {module_name} ===", flush=True)
        started = time.perf_counter()
        try:
            importlib.import_module(f"bench.{module_name}").main()
        except Exception as exc:  # report and go on: one broken bench hides no other
            failed.append(module_name)
            print(f"{module_name} FAILED: {type(exc).__name__}: {exc}", flush=True)
        print(f"({module_name} took {time.perf_counter() - started:.0f}s)", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
