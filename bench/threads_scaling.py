#!/usr/bin/env python3
"""How `parity explore --threads T` scales (issue 26 item 4): wall time, CPU time, states and
peak memory of one explore command per (input, T, repetition).

Usage: threads_scaling.py --bin PARITY --out DIR [--threads 1,2,4,8,16] [--reps 3]
                          [--budget SECONDS] [--case NAME=ARGS ...]

Each case is `parity explore ARGS --threads T --format json`, run from the repository root.
The repetitions are the outer loop (every case and thread count once, then again), so that a
run cut by --budget still has whole repetitions. Each command runs as a child whose resource
usage (os.wait4: user and system CPU, peak resident memory) is read when it exits, under a
timeout. Writes DIR/threads_scaling.csv (one row per run), DIR/threads_scaling.md (the median
per case and T: wall, speed-up, efficiency, CPU, states) and DIR/machine.txt.
"""
import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

# Default inputs: searches of about 5-10 s at one thread on one core. The bounded ones stop at a
# state count (about the same work for every T; the every-path search does not run); the ring
# of 3 CTAs verifies: its run is the search, then the every-path rule search (three times as
# many pairs as states).
DEFAULT_CASES = [
    ("ring8_500K", "pipelines/st_async_ring/ring.pipe --max-states 500000"),
    ("dense_gemm_nonws_1M", "bench/schedules/dense_gemm_nonws.pipe --max-states 1000000"),
    ("ring3_verified", "pipelines/st_async_ring/ring.pipe -D CTAS=3"),
]


def run_one(binary, args, threads, timeout):
    """One command; its own resource usage from wait4 (user, system CPU, peak RSS)."""
    cmd = [binary, "explore"] + args.split() + ["--threads", str(threads), "--format", "json"]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.monotonic()
        p = subprocess.Popen(cmd, stdout=out, stderr=err)
        timed_out = False
        while True:
            pid, status, ru = os.wait4(p.pid, os.WNOHANG)
            if pid != 0:
                break
            if time.monotonic() - t0 > timeout and not timed_out:
                os.kill(p.pid, signal.SIGKILL)
                timed_out = True
            time.sleep(0.005)
        wall = time.monotonic() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        text, etext = out.read(), err.read()
    row = {"rc": p.returncode, "wall_s": wall, "timed_out": timed_out,
           "user_s": ru.ru_utime, "sys_s": ru.ru_stime, "max_rss_mib": ru.ru_maxrss / 1024.0}
    try:
        j = json.loads(text.decode())
        st = j.get("stats", {})
        row.update(verdict=j.get("verdict"), states=st.get("states"),
                   transitions=st.get("transitions"), search_s=st.get("seconds"),
                   history_states=st.get("history_states"), bound=j.get("bound", ""))
    except (ValueError, AttributeError):
        row.update(verdict="timeout" if timed_out else "?", states=None, transitions=None,
                   search_s=None, history_states=None,
                   bound=etext.decode(errors="replace")[-200:])
    return row


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--threads", default="1,2,4,8,16")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--budget", type=float, default=330, help="seconds for the whole batch")
    ap.add_argument("--timeout", type=float, default=60, help="seconds per command")
    ap.add_argument("--case", action="append", default=[], help="NAME=ARGS")
    a = ap.parse_args()
    cases = [tuple(c.split("=", 1)) for c in a.case] or DEFAULT_CASES
    threads = [int(t) for t in a.threads.split(",")]
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "machine.txt"), "w") as m:
        m.write("cpus: %d (os.cpu_count), affinity %d\n" %
                (os.cpu_count(), len(os.sched_getaffinity(0))))
        try:
            with open("/proc/cpuinfo") as f:
                names = [l.split(":", 1)[1].strip() for l in f if l.startswith("model name")]
            m.write("model: %s\n" % (names[0] if names else "?"))
        except OSError:
            pass
        m.write("loadavg at start: %s\n" % " ".join(str(x) for x in os.getloadavg()))
        m.write("binary: %s\n" % a.bin)
    csv_path = os.path.join(a.out, "threads_scaling.csv")
    rows = []
    start = time.monotonic()
    with open(csv_path, "w") as csv:
        csv.write("case,threads,rep,rc,verdict,wall_s,user_s,sys_s,max_rss_mib,states,"
                  "transitions,search_s,history_states,load1,bound\n")
        for rep in range(1, a.reps + 1):
            for name, args in cases:
                for t in threads:
                    if time.monotonic() - start > a.budget:
                        print("budget of %.0f s spent: stopping" % a.budget, flush=True)
                        break
                    row = run_one(a.bin, args, t, a.timeout)
                    row.update(case=name, threads=t, rep=rep, load1=os.getloadavg()[0])
                    rows.append(row)
                    csv.write("%s,%d,%d,%s,%s,%.3f,%.3f,%.3f,%.1f,%s,%s,%s,%s,%.2f,\"%s\"\n" % (
                        name, t, rep, row["rc"], row["verdict"], row["wall_s"], row["user_s"],
                        row["sys_s"], row["max_rss_mib"], row["states"], row["transitions"],
                        row["search_s"], row["history_states"], row["load1"],
                        str(row["bound"]).replace('"', "'")))
                    csv.flush()
                    print("%-22s T=%-2d rep %d: %s %.2f s wall, %.2f s user, %s states" % (
                        name, t, rep, row["verdict"], row["wall_s"], row["user_s"],
                        row["states"]), flush=True)
    with open(os.path.join(a.out, "threads_scaling.md"), "w") as md:
        md.write("| case | T | runs | wall (median) | speed-up | efficiency | CPU user+sys "
                 "(median) | max RSS (median) | states (median) | verdict |\n"
                 "|---|---|---|---|---|---|---|---|---|---|\n")
        for name, _ in cases:
            base = None
            for t in threads:
                rs = [r for r in rows if r["case"] == name and r["threads"] == t]
                if not rs:
                    continue
                wall = statistics.median(r["wall_s"] for r in rs)
                cpu = statistics.median(r["user_s"] + r["sys_s"] for r in rs)
                states = statistics.median(r["states"] or 0 for r in rs)
                rss = statistics.median(r["max_rss_mib"] for r in rs)
                if t == threads[0]:
                    base = wall * t
                sp = base / wall if base else float("nan")
                md.write("| %s | %d | %d | %.2f s | %.2f | %.0f %% | %.2f s | %.0f MiB | %d | %s |\n" % (
                    name, t, len(rs), wall, sp, 100 * sp / t, cpu, rss, states,
                    "/".join(sorted(set(str(r["verdict"]) for r in rs)))))
    with open(os.path.join(a.out, "machine.txt"), "a") as m:
        m.write("loadavg at end: %s\n" % " ".join(str(x) for x in os.getloadavg()))
        m.write("batch: %.1f s\n" % (time.monotonic() - start))
    print(open(os.path.join(a.out, "threads_scaling.md")).read())
    return 0


if __name__ == "__main__":
    sys.exit(main())
