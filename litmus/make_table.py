#!/usr/bin/env python3
"""Regenerates the table of litmus/README.md (between the `table begin/end` markers) from
`parity litmus --all --outcomes` (run from the repository root):

  bazel build //tools/cli:parity && python3 litmus/make_table.py bazel-bin/tools/cli/parity
"""
import re
import subprocess
import sys

README = "litmus/README.md"
BEGIN = "<!-- table begin (litmus/make_table.py) -->"
END = "<!-- table end -->"


def main():
  parity = sys.argv[1] if len(sys.argv) > 1 else "bazel-bin/tools/cli/parity"
  run = subprocess.run([parity, "litmus", "--all", "--outcomes"], capture_output=True, text=True)
  if run.returncode not in (0, 1):
    sys.exit("parity litmus failed (%d): %s" % (run.returncode, run.stderr))
  rows = []
  row = None
  for line in run.stdout.splitlines():
    if line.startswith("test ") or re.match(r"^\d+ tests:", line) or line.startswith("not run"):
      continue
    if not line.startswith("    "):
      f = line.split()
      verdict = "not run on H100" if line.endswith("not run on H100") else f[-1]
      row = {"name": f[0], "verdict": verdict, "sim": [], "h100": [], "unexpected": []}
      rows.append(row)
      continue
    body = line.strip()
    if body.startswith("sim  "):
      row["sim"].append(body[5:])
    elif body.startswith("h100 "):
      n, outcome = body[5:].strip().split(None, 1)
      row["h100"].append((int(n), outcome))
    elif body.startswith("observed, not allowed: "):
      row["unexpected"].append(body[len("observed, not allowed: "):])

  def cell(items):
    return "<br>".join("`%s`" % i for i in items) if items else "-"

  out = ["| test | outcomes the model allows | H100: runs &times; outcome | verdict |",
         "|---|---|---|---|"]
  for r in rows:
    h100 = "<br>".join("%d &times; `%s`" % (n, o) for n, o in r["h100"]) if r["h100"] else "-"
    out.append("| [%s](%s.pipe) | %s | %s | %s |" % (r["name"], r["name"], cell(r["sim"]), h100,
                                                     r["verdict"]))
  out.append("| [TMA placement sweep](../traces/tma_sweep/README.md): 1046 cases, each an entry "
             "| every byte written and the tx credit, per case (`sim/model/tma.h`) "
             "| 1038 loads completed, 8 refused (illegal instruction) "
             "| agree: all 1046 (`//tests/gpu:tma_sweep_replay_test`) |")
  summary = [l for l in run.stdout.splitlines() if re.match(r"^\d+ tests:", l)]
  out.append("")
  out.append("`parity litmus --all`: " + (summary[0] if summary else "?") +
             " (plus the 1046 sweep entries, compared by their own test).")
  text = open(README).read()
  a = text.index(BEGIN) + len(BEGIN)
  b = text.index(END)
  open(README, "w").write(text[:a] + "\n" + "\n".join(out) + "\n" + text[b:])


if __name__ == "__main__":
  main()
