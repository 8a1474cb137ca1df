"""Run N random programs of the differential test outside the suite and summarise what fails.

    PYTHONPATH=emulator:compiler python tests/compiler/differential/fuzz_offline.py 2000

Unlike the suite (derandomized), each run draws new programs. Prints one line per distinct failure (the first line of its message) with a count and the smallest
program that shows it, then the totals. Exit status 1 if anything failed.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))  # tests/compiler: conftest helpers

import program_plans as P
import test_differential as T
from hypothesis import HealthCheck, given, settings


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("n", type=int)
    args = ap.parse_args(argv)
    workdir = tempfile.mkdtemp(prefix="pypto_diff_")
    failures: dict[str, list] = {}
    counts = {"ran": 0, "failed": 0}
    kinds: dict[str, int] = {}

    @settings(max_examples=args.n, deadline=None, database=None, derandomize=False,
              suppress_health_check=list(HealthCheck))
    @given(plan=P.plans())
    def one(plan: P.Plan) -> None:
        counts["ran"] += 1
        kinds[f"{plan.kind}/{plan.dtype}"] = kinds.get(f"{plan.kind}/{plan.dtype}", 0) + 1
        try:
            T.compile_and_check(plan, workdir)
        except Exception as e:  # noqa: BLE001  (every failure is recorded, none stops the run)
            counts["failed"] += 1
            head = (type(e).__name__ + ": " + (str(e).splitlines() or [""])[0])[:160]
            key = head.split(" at ")[0]
            failures.setdefault(key, []).append((len(P.source(plan)), plan, traceback.format_exc(limit=2)))

    start = time.time()
    one()
    took = time.time() - start
    for key, items in sorted(failures.items(), key=lambda kv: -len(kv[1])):
        items.sort(key=lambda x: x[0])
        print(f"{len(items):5d}  {key}")
        print("       smallest:\n" + "\n".join("         " + ln for ln in P.source(items[0][1]).splitlines()[5:]))
        print(f"         {items[0][1]}")
    print(f"ran {counts['ran']} programs in {took:.0f} s, {counts['failed']} failed; by kind: {dict(sorted(kinds.items()))}")
    return 1 if counts["failed"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
