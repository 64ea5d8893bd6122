"""What the error policy costs, as ratios taken in one run: ``on_error="dead_letter"`` and
``"skip"`` against ``"fail"`` on the same batches (10,000 row changes of the ``mixed10`` corpus,
generic and typed, Cython core), clean and with one truncated message per 1,000.

The decoders are timed in alternation, round after round, and each keeps its fastest round, so
that the load of the machine changes all of them alike.

    python benchmarks/policy_cost.py [--rounds 15]
"""
from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.asv_corpora import PROTOCOLS, ROWS, Batch, build  # noqa: E402
from benchmarks.asv_error_policy import poisoned  # noqa: E402

CASES = (("fail", "clean"), ("dead_letter", "clean"), ("skip", "clean"),
         ("skip", "1-in-1000"), ("dead_letter", "1-in-1000"))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--protocol", choices=PROTOCOLS, action="append")
    args = ap.parse_args(argv)
    logging.getLogger("ticdc_fast").setLevel(logging.ERROR)   # one warning per poison message
    print(f"{'protocol':12s} {'mode':8s} {'fail MB/s':>10s}  " + "  ".join(f"{p}/{i}" for p, i in CASES[1:]))
    for protocol in args.protocol or PROTOCOLS:
        corpus = build(protocol, "mixed10")
        for mode in ("generic", "typed"):
            batches = {}
            for policy, inp in CASES:
                b = Batch(protocol, corpus, mode, ROWS, on_error=policy)
                if inp != "clean":
                    poisoned(b)
                batches[(policy, inp)] = b
            best = dict.fromkeys(batches, float("inf"))
            for _ in range(args.rounds):
                for case, b in batches.items():
                    t0 = time.perf_counter()
                    b.decode()
                    best[case] = min(best[case], time.perf_counter() - t0)
            base = batches[("fail", "clean")].nbytes / best[("fail", "clean")] / 1e6
            ratios = [f"{best[('fail', 'clean')] / best[c]:>{len(c[0]) + len(c[1]) + 1}.2f}x"[:-1] + "x"
                      for c in CASES[1:]]
            print(f"{protocol:12s} {mode:8s} {base:10.1f}  " + "  ".join(ratios))
    return 0


if __name__ == "__main__":
    sys.exit(main())
