#!/usr/bin/env python3
"""Turns a parameter dump (param_dump.h) into the `parity import` options a kernel needs.

  params_to_args.py PARITY DUMP KERNEL.ptx -- BASE_OPTIONS...

Runs `parity import KERNEL.ptx BASE_OPTIONS...` and, while it stops for a field of the
parameter space nobody gave (import.missing-param, import.missing-tensormap), adds that one
field's value from DUMP (`--param OFFSET=VALUE` at the width of the load that reads it, or
`--tensormap param_N+OFFSET=...`) and tries again. Prints the options added, one per line, so
that the manifest gives exactly the fields the kernel's control path reads (an option nothing
reads is an error). Any other failure is printed and the exit status is 1.
"""
import re
import subprocess
import sys


def main():
    parity, dump, ptx = sys.argv[1:4]
    base = sys.argv[5:] if sys.argv[4] == "--" else sys.argv[4:]
    words, maps = {}, {}
    for line in open(dump):
        f = line.split()
        if f and f[0] == "word":
            words[int(f[1])] = int(f[2])
        elif f and f[0] == "tensormap":
            maps[int(f[1])] = f[2]
    raw = bytearray()
    for off in sorted(words):
        raw += words[off].to_bytes(4, "little")

    def value(offset, width):
        return int.from_bytes(raw[offset:offset + width], "little")

    added = []
    for _ in range(200):
        r = subprocess.run([parity, "import", ptx] + base + added + ["-o", "/dev/null"],
                           capture_output=True, text=True)
        if r.returncode == 0:
            print("\n".join(added))
            return 0
        m = re.search(r"\((\d+) bytes at parameter-space byte (\d+)\)", r.stderr)
        if "import.missing-param" in r.stderr and m:
            width, offset = int(m.group(1)), int(m.group(2))
            added.append("--param")
            added.append("%d=%d" % (offset, value(offset, width)))
            continue
        m = re.search(r"--tensormap (\S+)\+(\d+)=DTYPE", r.stderr)
        if "import.missing-tensormap" in r.stderr and m:
            offset = int(m.group(2))
            index = re.search(r"_param_(\d+)$", m.group(1))
            if offset not in maps or index is None:
                sys.stderr.write("no tensor map at byte %d in %s\n%s" % (offset, dump, r.stderr))
                return 1
            added.append("--tensormap")
            added.append("param_%s+%d=%s" % (index.group(1), offset, maps[offset]))
            continue
        sys.stderr.write(r.stderr)
        print("\n".join(added))
        return 1
    return 1


if __name__ == "__main__":
    sys.exit(main())
