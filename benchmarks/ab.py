"""Two builds of the core on the same bytes, in alternating worker processes (issue 40: "never
slower than the current main", paired ratio ≥ 0.97).

    PYTHONPATH=. python benchmarks/ab.py --baseline-python ../main/.venv/bin/python [--protocol avro]
        [--rows 10000] [--rounds 7] [--budget 0.2] [--corpora realistic5,orders10,wide100,stream3]

This interpreter builds every corpus of ``goals.py`` once (so both sides read the very same
messages, whatever their checkouts' encoders), writes them to a temporary file, and starts two
workers: this interpreter (``--python`` to choose another) and the baseline's, each importing
the ``ticdc_fast`` its environment installs (printed; ``PYTHONPATH`` is cleared for them) and
pinned to the same CPU.  In each round each worker decodes each corpus and mode for
``--budget`` seconds and reports its best call (a ``gc.collect()`` before each), the order of
the two workers alternating from round to round.  Ratio = baseline time ÷ this build's time
(> 1: this build is faster), per round (median, lowest–highest) and of the best times.
Profile-guided builds on both sides (``TICDC_FAST_PGO=1``) for the release comparison.
"""
from __future__ import annotations

import argparse
import os
import pickle
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PROTOCOLS = ("open", "simple-json", "simple-avro", "avro")
REALISTIC = ("realistic5", "orders10", "wide100", "stream3")


def _inputs(protocols, corpora, rows):
    """[(protocol, corpus, keys, values, generic options, typed options)], built by goals.Case."""
    sys.path.insert(0, HERE)
    import goals

    class Recording(goals.Case):
        def _decoder(self, opts):
            self.__dict__.setdefault("opts", []).append(opts)
            return super()._decoder(opts)

    out = []
    for p in protocols:
        for name in corpora:
            case = Recording(p, name, rows)
            out.append((p, name, case.keys_list, case.values_list, case.opts[0], case.opts[1]))
    return out


class Worker:
    def __init__(self, python, path):
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        self.proc = subprocess.Popen([os.path.abspath(python), os.path.abspath(__file__), "--_worker", path], env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd="/")
        self.where = self.proc.stdout.readline().strip()

    def time(self, i, mode, budget):
        self.proc.stdin.write(f"{i} {mode} {budget}\n")
        self.proc.stdin.flush()
        return float(self.proc.stdout.readline())

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


def _worker(path):
    import gc
    import time
    import pyarrow as pa
    import ticdc_fast
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    with open(path, "rb") as fh:
        cases = pickle.load(fh)
    decs = []
    for p, _, keys, values, g_opts, t_opts in cases:
        ka = None if keys is None else pa.array(keys, pa.binary())
        va = pa.array(values, pa.binary())

        def make(opts, p=p):
            if p == "open":
                return ticdc_fast.OpenDecoder(implementation="cython", **opts)
            if p == "avro":
                return ticdc_fast.AvroDecoder(implementation="cython", **opts)
            return ticdc_fast.SimpleDecoder(p.split("-")[1], implementation="cython", **opts)
        decs.append({"generic": (make(g_opts), ka, va), "typed": (make(t_opts), ka, va)})
    print(ticdc_fast.__file__, flush=True)
    for line in sys.stdin:
        i, mode, budget = line.split()
        dec, ka, va = decs[int(i)][mode]
        dec.decode(ka, va)
        best, end, calls = float("inf"), time.perf_counter() + float(budget), 0
        while calls < 2 or time.perf_counter() < end:
            gc.collect()
            t0 = time.perf_counter()
            dec.decode(ka, va)
            best = min(best, time.perf_counter() - t0)
            calls += 1
        print(best, flush=True)


def run(protocols, corpora, rows, rounds, budget, baseline_python, python=sys.executable):
    """Paired ratios baseline ÷ this build per (protocol, corpus, mode); prints a table."""
    cases = _inputs(protocols, corpora, rows)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "cases.pickle")
        with open(path, "wb") as fh:
            pickle.dump(cases, fh)
        ours, base = Worker(python, path), Worker(baseline_python, path)
        print(f"\n# A/B: this build {ours.where} ({python}) vs baseline {base.where} ({baseline_python})")
        times = {}
        for r in range(rounds):
            for i, (p, name, *_) in enumerate(cases):
                for mode in ("generic", "typed"):
                    pair = (ours, base) if r % 2 == 0 else (base, ours)
                    t = {w: w.time(i, mode, budget) for w in pair}
                    times.setdefault((p, name, mode), []).append((t[base], t[ours]))
        ours.close()
        base.close()
    print("\n| protocol | corpus | mode | baseline ÷ this, median (low–high) | best of | required | verdict |")
    print("|---|---|---|---|---|---|---|")
    res = []
    for (p, name, mode), ts in times.items():
        per = sorted(b / o for b, o in ts)
        med = statistics.median(per)
        best = min(b for b, _ in ts) / min(o for _, o in ts)
        res.append({"protocol": p, "corpus": name, "mode": mode, "median": med, "low": per[0],
                    "high": per[-1], "best_of": best, "verdict": "PASS" if med >= 0.97 else "MISS"})
        print(f"| {p} | {name} | {mode} | {med:.3f}× ({per[0]:.3f}–{per[-1]:.3f}) | {best:.3f}× | ≥ 0.97× | "
              f"{res[-1]['verdict']} |", flush=True)
    return res


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--baseline-python")
    ap.add_argument("--python", default=sys.executable, help="the interpreter of the build under test")
    ap.add_argument("--protocol", default="all", choices=PROTOCOLS + ("all",))
    ap.add_argument("--rows", type=int, default=10_000)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--budget", type=float, default=0.2)
    ap.add_argument("--corpora", default=",".join(REALISTIC))
    ap.add_argument("--_worker", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args._worker:
        _worker(args._worker)
        return
    if not args.baseline_python:
        ap.error("--baseline-python is required")
    protocols = PROTOCOLS if args.protocol == "all" else (args.protocol,)
    run(protocols, args.corpora.split(","), args.rows, args.rounds, args.budget, args.baseline_python, args.python)


if __name__ == "__main__":
    main()
