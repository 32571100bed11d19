"""Layout construction (nidos.Layout vs pybids' BIDSLayout), reloading a layout from its
``database_path`` index, and indexing (nidos.index vs bids2table), on synthetic datasets
(and on existing ones given with --root), each measured in a fresh process (wall and
CPU time of the timed statement only: imports and, for the reload, writing the index
happen before the clock starts).

    python crates/nidos-python/bench/bench.py --data /tmp/nidos-pybench [--subjects 200 1000]
        [--root DATASET ...] [--rounds 3]
        [--only nidos-layout nidos-layout-db pybids-layout nidos-index bids2table]

Datasets are made with ../shared/bench/make_dataset.py (BIDS brand, so pybids accepts
them) under --data, never inside the repository. Prints one line per measurement and a
JSON summary (medians) at the end. CPU time is user + system of the process, its threads
and any child processes, over the timed statement.
"""

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
MAKE = HERE.parents[2].parent / "shared" / "bench" / "make_dataset.py"

# tool -> (setup, timed statement); both see root, out (a file) and db (a folder).
CODE = {
    "nidos-layout": ("import nidos", "l = nidos.Layout({root!r}); n = len(l.get())"),
    "nidos-layout-db": (
        "import nidos, pyarrow.ipc; nidos.Layout({root!r}, database_path={db!r}, reset_database=True)",
        "l = nidos.Layout({root!r}, database_path={db!r}); n = len(l.get()); assert l._from_index",
    ),
    "pybids-layout": (
        "import warnings; warnings.simplefilter('ignore'); import bids",
        "l = bids.BIDSLayout({root!r}, validate=True); n = len(l.get())",
    ),
    "nidos-index": ("import nidos", "nidos.index({root!r}, {out!r}); n = 0"),
    "bids2table": (
        "from bids2table import index_dataset; import pyarrow.parquet as pq",
        "t = index_dataset({root!r}); pq.write_table(t, {out!r}); n = t.num_rows",
    ),
}


def run(tool, root, out, db):
    setup, timed = (c.format(root=str(root), out=str(out), db=str(db)) for c in CODE[tool])
    code = (
        "import resource, time, json\n" + setup + "\n"
        "def cpu():\n"
        "    r = resource.getrusage(resource.RUSAGE_SELF); c = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
        "    return r.ru_utime + r.ru_stime + c.ru_utime + c.ru_stime\n"
        "c0 = cpu(); t0 = time.perf_counter()\n" + timed + "\n"
        "print(json.dumps({'wall': time.perf_counter() - t0, 'cpu': cpu() - c0, 'n': n}))"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(p.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=os.path.join(tempfile.gettempdir(), "nidos-pybench"))
    ap.add_argument("--subjects", type=int, nargs="*", default=[200, 1000])
    ap.add_argument("--root", nargs="*", default=[], help="existing datasets to measure too")
    ap.add_argument("--only", nargs="+", default=list(CODE))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--pybids-rounds", type=int, default=1)
    args = ap.parse_args()
    data = pathlib.Path(args.data)
    data.mkdir(parents=True, exist_ok=True)
    results = {}
    roots = []
    for n in args.subjects:
        root = data / f"bids-s{n}"
        if not root.is_dir():
            subprocess.run([sys.executable, str(MAKE), str(root), "--subjects", str(n),
                            "--brand", "BIDS"], check=True, capture_output=True)
        roots.append((f"s{n}", root))
    roots += [(pathlib.Path(r).name, pathlib.Path(r)) for r in args.root]
    for n, root in roots:
        files = sum(len(f) for _, _, f in os.walk(root))
        for tool in args.only:
            rounds = args.pybids_rounds if tool == "pybids-layout" else args.rounds
            got = []
            for _ in range(rounds):
                r = run(tool, root, data / f"out-{tool}-{n}.parquet", data / f"db-{tool}-{n}")
                got.append(r)
                print(f"{files} files  {tool:14} wall {r['wall']:8.2f} s  cpu {r['cpu']:8.2f} s", flush=True)
            results[f"{tool}/{n}/{files}"] = {
                "wall": statistics.median(g["wall"] for g in got),
                "cpu": statistics.median(g["cpu"] for g in got),
                "rounds": rounds,
            }
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
