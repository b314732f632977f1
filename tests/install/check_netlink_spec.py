#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""check_netlink_spec.py REPO: docs/magnet.yaml, the netlink spec in the
kernel's YAML format, says what include/uapi/magnet.h says (with
magnet_genl.h, which scripts/ynl-regen.sh generates from the spec with the
kernel's ynl-gen-c: this check needs no kernel source, and catches a spec
edited without regenerating).

For every attribute set and for the operations, each entry's number (the
YAML rule: the first is 1 unless given, then one more than the previous,
"value:" overrides) equals the C enumerator's, every enumerator of the C
enum is in the spec, nested-attributes and the attributes an operation
lists exist, and every nest attribute names its set.  Prints TAP; exits 1
on any mismatch.
"""
import re
import sys

import yaml

from ynl_spec_check import Tap, cname, numbered

repo = sys.argv[1] if len(sys.argv) > 1 else "."
spec = yaml.safe_load(open(repo + "/docs/magnet.yaml"))
hdr = open(repo + "/include/uapi/magnet.h").read() + \
    open(repo + "/include/uapi/magnet_genl.h").read()
hdr = re.sub(r"/\*.*?\*/", "", hdr, flags=re.S)

# the C enums: name -> {ENUMERATOR: value}
enums = {}
for m in re.finditer(r"enum\s+(\w+)\s*\{(.*?)\};", hdr, re.S):
    vals, nxt = {}, 0
    for item in m.group(2).split(","):
        item = item.strip()
        if not item:
            continue
        name, _, val = (p.strip() for p in item.partition("="))
        if val:
            nxt = int(val, 0) if re.fullmatch(r"-?(0x)?[0-9a-fA-F]+", val) \
                else vals[val]
        vals[name] = nxt
        nxt += 1
    enums[m.group(1)] = vals

tap = Tap()
check = tap.check


def named(entries):
    """(name, value) in spec order, by the YAML numbering rule"""
    return [(e["name"], v) for e, v in numbered(entries)]


def compare(what, spec_vals, c_vals, prefix):
    c = {k: v for k, v in c_vals.items()
         if not k.startswith("__") and not k.endswith("_UNSPEC")}
    seen = set()
    for name, val in spec_vals:
        if name == "unspec":
            continue
        key = prefix + cname(name)
        seen.add(key)
        check(c.get(key) == val, "%s %s = %d (C %s = %s)" %
              (what, name, val, key, c.get(key, "missing")))
    missing = sorted(set(c) - seen)
    check(not missing, "%s: every C enumerator is in the spec%s" %
          (what, " (missing: " + ", ".join(missing) + ")" if missing else ""))


sets = {s["name"]: s for s in spec["attribute-sets"]}
# attribute set -> (C enum, enumerator prefix)
c_of_set = {"magnet": ("magnet_attr", "MAGNET_A_")}
for name in sets:
    if name != "magnet":
        c_of_set[name] = ("magnet_%s_attr" % name.replace("-", "_"),
                          "MAGNET_%s_A_" % cname(name))

for name, s in sets.items():
    cenum, prefix = c_of_set[name]
    check(cenum in enums, "attribute set %s has a C enum %s" % (name, cenum))
    if cenum not in enums:
        continue
    compare("attribute set " + name, named(s["attributes"]),
            enums[cenum], prefix)
    for a in s["attributes"]:
        if a.get("type") == "nest":
            ref = a.get("nested-attributes")
            check(ref in sets, "%s.%s names its nested set (%s)" %
                  (name, a["name"], ref))

ops = spec["operations"]["list"]
compare("operation", named(ops), enums["magnet_cmd"], "MAGNET_CMD_")
for op in ops:
    aset = sets.get(op.get("attribute-set", "magnet"))
    names = {a["name"] for a in aset["attributes"]}
    for kind in ("do", "dump"):
        for part in ("request", "reply"):
            lst = op.get(kind, {}).get(part, {}).get("attributes", [])
            unknown = [a for a in lst if a not in names]
            if lst:
                check(not unknown, "%s %s %s attributes exist%s" %
                      (op["name"], kind, part,
                       " (unknown: " + ", ".join(unknown) + ")"
                       if unknown else ""))

print("1..%d" % tap.n)
sys.exit(1 if tap.failed else 0)
