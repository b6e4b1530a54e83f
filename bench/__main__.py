"""`make bench` / `python -m bench [NAME ...] [--OPTION ...]`: run every bench/bench_*.py
(or the named ones).

Each benchmark module has `main() -> None` and prints its figures and ratios; options after
the names (`python -m bench pipeline --scales 1,10`) go to the named module's
`main(argv)`, which must then take them.
Benchmarks are never run as tests: speed is measured here, not asserted there.
"""

from __future__ import annotations

import importlib
import sys
import time
from pathlib import Path


def main(argv: list[str]) -> int:
    first_option = next((i for i, a in enumerate(argv) if a.startswith("-")), len(argv))
    argv, options = argv[:first_option], argv[first_option:]
    names = argv or sorted(p.stem for p in Path(__file__).parent.glob("bench_*.py"))
    if options and len(names) != 1:
        print("options go to one named benchmark: python -m bench NAME --OPTION ...")
        return 2
    failed = []
    for name in names:
        module_name = name if name.startswith("bench_") else f"bench_{name}"
        print(f"\n=== {module_name} ===", flush=True)
        started = time.perf_counter()
        try:
            module = importlib.import_module(f"bench.{module_name}")
            module.main(options) if options else module.main()
        except Exception as exc:  # report and go on: one broken bench hides no other
            failed.append(module_name)
            print(f"{module_name} FAILED: {type(exc).__name__}: {exc}", flush=True)
        print(f"({module_name} took {time.perf_counter() - started:.0f}s)", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
