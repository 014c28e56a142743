#!/usr/bin/env python3
"""Mutation fuzzing of the `parity` command as a user would drive it.

Mutates the bundled schedules (byte and token edits, spliced lines, extreme numbers) and traces
(byte flips, truncation, spliced records) and runs them through check, explain, run, explore
(bounded), replay and trace export. Every run must end with exit 0, 1, 2 or 4 within its time
limit: exit 3, a signal or a timeout is a finding, saved under OUT/findings/.

Usage: fuzz/cli_mutate.py PARITY_BINARY [--seconds S] [--seed N] [--out DIR]
"""
import argparse
import glob
import os
import random
import subprocess
import sys
import time

TOKENS = [b"0", b"1", b"-1", b"4294967296", b"9223372036854775807", b"(1<<62)", b"0x7fffffff",
          b"count 0", b"threads 0", b"2x2", b"16x1", b"clusters 65536", b"bytes -8",
          b"for i in 0 .. 100000000 {", b"}", b"{", b"\r", b"\n", b"\xff\xfe", b"#", b"let x = ",
          b"wait ", b"arrive ", b"expect_tx ", b"complete_tx ", b"tma.load ", b"cp.async ",
          b"bar.sync 0, 64", b"cluster.sync", b"fence.proxy.async", b"exit", b"parity 1",
          b"1+" * 50 + b"1", b"(" * 30, b")" * 30, b"min(", b"max(", b"?", b":"]


def mutate_text(data, rng):
    data = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(6)
        pos = rng.randrange(len(data) + 1)
        if op == 0 and data:  # replace a number-ish run
            end = min(len(data), pos + rng.randint(1, 6))
            data[pos:end] = rng.choice(TOKENS)
        elif op == 1:
            data[pos:pos] = rng.choice(TOKENS) + b" "
        elif op == 2 and data:
            del data[pos:pos + rng.randint(1, 20)]
        elif op == 3:  # duplicate a line
            lines = bytes(data).split(b"\n")
            i = rng.randrange(len(lines))
            lines.insert(rng.randrange(len(lines) + 1), lines[i])
            data = bytearray(b"\n".join(lines))
        elif op == 4 and data:
            data[rng.randrange(len(data))] = rng.randrange(256)
        else:  # a digit changed
            digits = [i for i, c in enumerate(data) if 48 <= c <= 57]
            if digits:
                data[rng.choice(digits)] = rng.choice(b"0123456789")
    return bytes(data)


def mutate_binary(data, rng):
    data = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        op = rng.randrange(4)
        if not data:
            break
        pos = rng.randrange(len(data))
        if op == 0:
            data[pos] = rng.randrange(256)
        elif op == 1:
            data[pos:pos + 4] = rng.choice([b"\xff\xff\xff\xff", b"\x00\x00\x00\x00",
                                            b"\xff\xff\xff\x7f", b"\x01\x00\x00\x00"])
        elif op == 2:
            del data[pos:]
        else:
            data[pos:pos] = data[rng.randrange(len(data)):][:32]
    return bytes(data)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("parity")
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default=".fuzz/cli")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    pipes = sorted(glob.glob(os.path.join(root, "sim/examples/**/*.pipe"), recursive=True) +
                   glob.glob(os.path.join(root, "pipelines/**/*.pipe"), recursive=True) +
                   glob.glob(os.path.join(root, "litmus/*.pipe")))
    traces = sorted(glob.glob(os.path.join(root, "traces/h100/*.trace")))
    os.makedirs(os.path.join(a.out, "findings"), exist_ok=True)
    work = os.path.join(a.out, "work")
    os.makedirs(work, exist_ok=True)
    counts, findings, runs = {}, 0, 0
    end = time.time() + a.seconds
    while time.time() < end:
        src = rng.choice(pipes)
        text = mutate_text(open(src, "rb").read(), rng)
        pipe = os.path.join(work, "m.pipe")
        open(pipe, "wb").write(text)
        jobs = [["check", pipe], ["check", "--format", "json", pipe], ["explain", pipe],
                ["run", "--trace", os.path.join(work, "m.trace"), pipe],
                ["explore", "--max-states", "3000", "--time-limit", "2", pipe]]
        tsrc = rng.choice(traces)
        tr = os.path.join(work, "t.trace")
        open(tr, "wb").write(mutate_binary(open(tsrc, "rb").read(), rng))
        sched = os.path.join(root, "sim/examples", os.path.basename(tsrc).replace(".trace", ".pipe"))
        if os.path.exists(sched):
            jobs.append(["replay", sched, tr])
        jobs.append(["trace", "export", "--perfetto", os.path.join(work, "t.json"), tr])
        jobs.append(["compare", tr, tsrc])
        for args in jobs:
            runs += 1
            try:
                p = subprocess.run([a.parity] + args, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.PIPE, timeout=30)
                rc = p.returncode
            except subprocess.TimeoutExpired:
                rc = "timeout"
            counts[rc] = counts.get(rc, 0) + 1
            if rc not in (0, 1, 2, 4):
                findings += 1
                base = os.path.join(a.out, "findings", "%d_%s" % (runs, args[0]))
                open(base + ".pipe", "wb").write(text)
                open(base + ".trace", "wb").write(open(tr, "rb").read())
                open(base + ".txt", "w").write("%r exit %s\n" % (args, rc))
    print("runs %d, exit codes %s, findings %d" % (runs, sorted(counts.items(), key=str), findings))
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
