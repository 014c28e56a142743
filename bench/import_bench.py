#!/usr/bin/env python3
"""The import table of bench/RESULTS.md: `parity import` on every kernel of the production corpus
(tests/import/production/kernels.tsv) with the arguments the manifest records.

Per kernel: the PTX file's size, the exit status, wall time and CPU time (user + system) of the
process, and its peak resident memory (GNU time's %M). Issue 35 item 6 asks for at most 2 s and
200 MB per 2 MB of PTX; a row over 2 s of CPU or 200 MB for each started 2 MB of its file is
marked (CPU time, not wall: this machine is shared, and wall time varies with the load).

  bench/import_bench.py [--parity BIN] [--before OLD_BIN] [--only NAME]...

Run from the repository root after `bazel build //tools/cli:parity`. With --before, each kernel is
also imported by OLD_BIN, both runs' figures are shown, and the two schedules are compared byte
for byte (a faster importer must write the same schedule): any difference fails the run (exit 1).
"""

import argparse
import lzma
import os
import shlex
import shutil
import subprocess
import sys
import tempfile

MANIFEST = "tests/import/production/kernels.tsv"
MB = 1024 * 1024


def run(binary, ptx, args, out_path):
    stats = tempfile.NamedTemporaryFile(delete=False)
    stats.close()
    cmd = ["/usr/bin/time", "-f", "%e %U %S %M", "-o", stats.name, binary, "import", ptx]
    cmd += shlex.split(args) + ["-o", out_path]
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    with open(stats.name) as f:
        fields = f.read().split()
    os.unlink(stats.name)
    wall, user, sys_s, rss_kb = (float(x) for x in fields[-4:])
    return {"exit": proc.returncode, "wall": wall, "cpu": user + sys_s, "rss_mb": rss_kb / 1024}


def misses(r, ptx_bytes):
    units = max(1, -(-ptx_bytes // (2 * MB)))  # started 2 MB blocks of the file
    out = []
    if r["cpu"] > 2.0 * units:
        out.append("%g s" % (2.0 * units))
    if r["rss_mb"] > 200.0 * units:
        out.append("%g MB" % (200.0 * units))
    return ", ".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--parity", default="bazel-bin/tools/cli/parity")
    ap.add_argument("--before", help="an older parity binary to compare against")
    ap.add_argument("--only", action="append", help="only this kernel (repeatable)")
    a = ap.parse_args()
    rows = []
    with open(MANIFEST) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            name, _, ptx, args = line.rstrip("\n").split("\t")
            if a.only and name not in a.only:
                continue
            rows.append((name, ptx, args))
    tmp = tempfile.mkdtemp(prefix="import_bench.")
    plain = {}
    differ = 0
    header = "| kernel | PTX | exit | CPU s | wall s | max RSS MB |"
    if a.before:
        header += " before: CPU s | RSS MB | schedule |"
    print(header + " misses |")
    print("|" + " --- |" * (header.count("|") - 1 + 1))
    for name, ptx, args in rows:
        if ptx not in plain:
            plain[ptx] = os.path.join(tmp, os.path.basename(ptx)[: -len(".xz")])
            with lzma.open(ptx) as src, open(plain[ptx], "wb") as dst:
                dst.write(src.read())
        size = os.path.getsize(plain[ptx])
        new_out = os.path.join(tmp, name + ".new.pipe")
        r = run(a.parity, plain[ptx], args, new_out)
        line = "| %s | %.2f MB | %d | %.2f | %.1f | %.0f |" % (
            name, size / MB, r["exit"], r["cpu"], r["wall"], r["rss_mb"])
        if a.before:
            old_out = os.path.join(tmp, name + ".old.pipe")
            b = run(a.before, plain[ptx], args, old_out)
            same = (os.path.exists(new_out) == os.path.exists(old_out) and
                    (not os.path.exists(new_out) or
                     open(new_out, "rb").read() == open(old_out, "rb").read()) and
                    r["exit"] == b["exit"])
            differ += 0 if same else 1
            line += " %.2f | %.0f | %s |" % (b["cpu"], b["rss_mb"],
                                               "identical" if same else "DIFFERS")
        print(line + " %s |" % misses(r, size), flush=True)
    shutil.rmtree(tmp)
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
