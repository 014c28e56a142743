#!/usr/bin/env python3
"""The targets table of bench/RESULTS.md: `parity explore` on every schedule of pipelines/ and
sim/examples/ at its file's default parameters.

Per schedule: verdict, states, wall time and CPU time of the process, time to the first counterexample (as
the search reports it: `first_counterexample.seconds` of the JSON document; a build without it
prints nothing before the end, so its whole run is the time to the first counterexample), the
counterexample's length (first -> reported), and the process's peak resident memory (wait4).

  bench/targets.py [--parity BIN] [--before OLD_BIN] [--time-limit S] [--threads T] [FILE...]

Run from the repository root after `bazel build //tools/cli:parity`. With --before, each
schedule runs on both binaries and the table shows both. Rows that miss a target are marked:
not VERIFIED/found in 10 s of CPU time, memory of 1 GB or more, a first counterexample after 1 s.
"""

import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile
import time


def run(binary, path, time_limit, threads, extra):
    cmd = [binary, "explore", path, "--format", "json", "--time-limit", str(time_limit)]
    if threads > 1:
        cmd += ["--threads", str(threads)]
    cmd += extra
    rss_file = tempfile.NamedTemporaryFile(delete=False)
    rss_file.close()
    if os.path.exists("/usr/bin/time"):  # GNU time: the child's own peak resident set, KiB
        cmd = ["/usr/bin/time", "-f", "%M %U %S", "-o", rss_file.name] + cmd
    t0 = time.monotonic()
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = proc.stdout, proc.stderr
    wall = time.monotonic() - t0
    rss_mb = cpu = float("nan")
    try:
        with open(rss_file.name) as f:
            fields = f.read().split()
        rss_mb = float(fields[-3]) / 1024.0
        cpu = float(fields[-2]) + float(fields[-1])
    except (ValueError, IndexError):
        pass
    os.unlink(rss_file.name)
    row = {"wall": wall, "cpu": cpu, "rss_mb": rss_mb, "exit": proc.returncode, "verdict": "?",
           "states": None, "first_s": None, "first_len": None, "len": None}
    try:
        doc = json.loads(out)
    except ValueError:
        row["verdict"] = "error (exit %d): %s" % (proc.returncode, err.decode()[-200:].strip())
        return row
    row["verdict"] = doc.get("verdict", "?")
    row["states"] = doc.get("stats", {}).get("states")
    cex = doc.get("counterexample")
    if cex:
        row["len"] = len(cex.get("steps", []))
        first = doc.get("first_counterexample")
        if first:
            row["first_s"] = first.get("seconds")
            row["first_len"] = first.get("length")
        else:  # nothing is printed before the end
            row["first_s"] = wall
            row["first_len"] = row["len"]
    return row


def misses(r):
    out = []
    # Time: CPU seconds of the process (this machine is shared: wall clock varies with the load).
    if r["verdict"] in ("incomplete", "?") or r["verdict"].startswith("error") or r["cpu"] > 10:
        out.append("10 s")
    if r["rss_mb"] >= 1024:
        out.append("1 GB")
    if r["first_s"] is not None and r["first_s"] > 1:
        out.append("first cex 1 s")
    return ", ".join(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--parity", default="bazel-bin/tools/cli/parity")
    ap.add_argument("--before", default=None)
    ap.add_argument("--time-limit", type=float, default=60)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("files", nargs="*")
    a = ap.parse_args()
    files = a.files or sorted(glob.glob("pipelines/**/*.pipe", recursive=True) +
                              glob.glob("sim/examples/**/*.pipe", recursive=True))
    cols = ["verdict", "states", "wall (CPU)", "first counterexample (steps first -> reported)",
            "max RSS"]
    header = ["schedule"]
    if a.before:
        header += ["before: " + c for c in cols]
    header += [c for c in cols] + ["misses"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for f in files:
        cells = [f]
        if a.before:
            b = run(a.before, f, a.time_limit, a.threads, [])
            cells += cells_of(b)
        r = run(a.parity, f, a.time_limit, a.threads, [])
        cells += cells_of(r) + [misses(r)]
        print("| " + " | ".join(cells) + " |", flush=True)


def cells_of(r):
    states = "-" if r["states"] is None else str(r["states"])
    first = "-"
    if r["first_s"] is not None:
        first = "%.3f s" % r["first_s"]
        if r["first_len"] is not None and r["len"] is not None:
            first += " (%d -> %d)" % (r["first_len"], r["len"])
    return [r["verdict"], states, "%.2f s (%.2f s)" % (r["wall"], r["cpu"]), first,
            "%.0f MB" % r["rss_mb"]]


if __name__ == "__main__":
    sys.exit(main())
