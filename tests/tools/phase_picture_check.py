"""Checks for tests/tools/phase_picture_test.sh.

dom FILE EXPECT: FILE is Chromium's --dump-dom of a phase picture; its #render-check element
holds what the browser drew (the page's script fills it from the layout, and hovers each wait
to see what it highlights). EXPECT is one of deadlock, completed, h100-hang, named.
Every page: the timeline fills the page's width without a sideways scroll; every phase shows its
counts as text; no phase label is cut by an init tick; every wait that returned names the phase
it observed, with a drawn link to that phase's box, hovering it highlights the box and the lane,
and hovering the box highlights the wait; every blocked wait is linked to its barrier's open phase and named on that lane; the red
lane is the object the headline names.
png FILE: the screenshot decodes (PNG, 8-bit RGB/RGBA, any filter) and is not blank.
"""
import html
import json
import re
import struct
import sys
import zlib


def fail(msg):
    print("  " + msg)
    return 1


def check_dom(path, expect):
    text = open(path, encoding="utf-8").read()
    m = re.search(r'<pre id="render-check"[^>]*>(.*?)</pre>', text, re.S)
    if not m or not m.group(1).strip():
        return fail("no render-check: the page's script did not run")
    r = json.loads(html.unescape(m.group(1)))
    bad = 0
    names = set(n.split(" ", 1)[1] for n in r["barrier_lanes"] + r["agent_lanes"])
    # Real names throughout, no numbered fallbacks.
    for n in names:
        if re.match(r"^(barrier\d+|agent \d+)", n):
            bad += fail("numbered lane " + n)
    if expect != "named" and not any(n.startswith("full[") for n in names):
        bad += fail("no full[] lane: %s" % sorted(names))
    if not any(n.startswith("producer[") for n in names):
        bad += fail("no producer[] lane: %s" % sorted(names))
    if r["phases"] < len(r["barrier_lanes"]):
        bad += fail("fewer phase segments (%d) than barrier lanes" % r["phases"])
    if r["titles"] < r["phases"]:
        bad += fail("elements without a narration tooltip")
    if expect != "named" and r["multicast_arrows"] < 2:
        bad += fail("no multicast fan-out: %d arrows" % r["multicast_arrows"])
    # The page's width, without a sideways scroll (body margins and the frame aside).
    if r["side_scroll"] or r["svg_client_width"] < r["page_width"] - 40:
        bad += fail("timeline %d px wide in a %d px page, sideways scroll %s"
                    % (r["svg_client_width"], r["page_width"], r["side_scroll"]))
    # Counts in view: one "got/expected" text per phase segment.
    if len(r["counts"]) != r["phases"] or not all(re.match(r"^\d+/\d+", c) for c in r["counts"]):
        bad += fail("%d phases, counts %s" % (r["phases"], r["counts"][:8]))
    if r["labels_cut_by_init"]:
        bad += fail("%d phase labels cut by an init tick" % r["labels_cut_by_init"])
    # Every wait that returned: the phase it observed, its link drawn, the hover highlight.
    for w in r["returned"]:
        want = "fresh" if w["observed"] == "-1" else w["observed"]
        if w["phase"] != want or not w["link"] or not w["text"] or not w["hover"]:
            bad += fail("returned wait not tied to its phase: %s" % w)
    if expect == "completed" and not any(w["observed"] != "" for w in r["returned"]):
        bad += fail("no wait that returned is tied to a phase")
    # Every blocked wait: linked to the open phase it waits for, named on that lane.
    for w in r["blocked"]:
        if (not w["phase_open"] or not w["link"] or not w["hover"] or not w["lane"]
                or w["agent"] not in w["waiter_mark"]):
            bad += fail("blocked wait not linked to its lane and phase: %s" % w)
    # These pages' blocked waits are all mbarrier waits or bar.syncs.
    if expect != "completed" and len(r["blocked"]) != r["waits_blocked"]:
        bad += fail("%d blocked waits, %d on a barrier" % (r["waits_blocked"], len(r["blocked"])))
    # The red lane names the object of the headline.
    for label in r["culprit_labels"]:
        if label not in r["outcome"]:
            bad += fail("red lane %r not in the headline %r" % (label, r["outcome"]))
    if expect == "named":
        if "0 named barrier q_empty" not in r["barrier_lanes"]:
            bad += fail("no lane for named barrier q_empty: %s" % r["barrier_lanes"])
        if not any(w["lane"] == "named barrier q_empty" and w["agent"] == "consumer[0]"
                   for w in r["blocked"]):
            bad += fail("consumer[0]'s bar.sync not linked to q_empty: %s" % r["blocked"])
        if not r["culprit_lanes"]:
            bad += fail("no red lane")
    elif expect in ("deadlock", "h100-hang"):
        if r["waits_blocked"] < 1:
            bad += fail("no blocked wait drawn")
        if r["culprit_lanes"] != ["0 full[0]"]:
            bad += fail("culprit lanes %s, expected ['0 full[0]']" % r["culprit_lanes"])
        if r["culprit_stroke"] != "rgb(220, 38, 38)":
            bad += fail("culprit not highlighted: stroke %s" % r["culprit_stroke"])
    else:
        if r["waits_blocked"] or r["culprit_lanes"]:
            bad += fail("a completed run drawn with blocked waits or a culprit")
        if r["completions"] < 2 or r["parities"] != ["0", "1"]:
            bad += fail("completions %d, parities %s" % (r["completions"], r["parities"]))
        if r["remote_arrows"] < 1:
            bad += fail("no remote-arrive arrow")
        if r["waits_released"] < 1 or r["waits_at_once"] < 1:
            bad += fail("waits: %d released, %d at once" % (r["waits_released"], r["waits_at_once"]))
    if expect == "h100-hang" and r["waits_blocked"] != 12:
        bad += fail("h100 hang: %d blocked waits, expected 12" % r["waits_blocked"])
    print("  %s: %d barrier lanes, %d agent lanes, %d phases, %d+%d arrows, %d blocked, culprit %s"
          % (path.rsplit("/", 1)[-1], len(r["barrier_lanes"]), len(r["agent_lanes"]), r["phases"],
             r["multicast_arrows"], r["remote_arrows"], r["waits_blocked"], r["culprit_lanes"]))
    return bad


def png_pixels(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            width, height, depth, ctype = struct.unpack(">IIBB", body[:10])
            if depth != 8 or ctype not in (2, 6):
                raise ValueError("unexpected PNG format %d/%d" % (depth, ctype))
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, prev, i = [], bytearray(stride), 0
    for _ in range(height):
        f, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if f == 1:
                line[x] = (line[x] + a) & 255
            elif f == 2:
                line[x] = (line[x] + b) & 255
            elif f == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, bpp, rows


def check_png(path):
    w, h, bpp, rows = png_pixels(path)
    colours, ink = set(), 0
    for row in rows[::4]:
        for x in range(0, w * bpp, bpp * 4):
            px = row[x:x + 3]
            colours.add(px)
            ink += px != b"\xff\xff\xff"
    samples = len(rows[::4]) * len(range(0, w * bpp, bpp * 4))
    print("  screenshot %dx%d: %d colours, %.0f%% not white" % (w, h, len(colours), 100.0 * ink / samples))
    bad = 0
    if len(colours) < 12:
        bad += fail("only %d colours: blank?" % len(colours))
    if ink < samples * 0.05:
        bad += fail("almost all white")
    return bad


if __name__ == "__main__":
    if sys.argv[1] == "dom":
        sys.exit(1 if check_dom(sys.argv[2], sys.argv[3]) else 0)
    sys.exit(1 if check_png(sys.argv[2]) else 0)
