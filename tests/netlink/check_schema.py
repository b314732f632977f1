#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""check_schema.py REPO: docs/magnet.yaml validates against the kernel's
genetlink schema of its protocol (genetlink-c: tests/netlink/genetlink-c.yaml,
vendored from Linux 6.12's Documentation/netlink/, the schema the kernel's
ynl tools check such specs with), and every operation has a doc.  TAP on stdout; exit 1 on
a failure, 77 (ctest's skip) without python3-jsonschema."""
import os
import sys

try:
    import jsonschema
    import yaml
except ImportError as e:
    print("1..0 # SKIP %s (python3-jsonschema, python3-yaml)" % e)
    sys.exit(77)

repo = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
spec = yaml.safe_load(open(os.path.join(repo, "docs", "magnet.yaml")))
proto = spec.get("protocol", "genetlink")
schema = yaml.safe_load(open(os.path.join(repo, "tests", "netlink", proto + ".yaml")))
fails = 0
errs = sorted(jsonschema.Draft7Validator(schema).iter_errors(spec), key=lambda e: list(e.path))
if errs:
    fails += 1
    print("not ok 1 - docs/magnet.yaml validates against the %s schema" % proto)
    for e in errs:
        print("# %s: %s" % ("/".join(str(p) for p in e.path), e.message[:200]))
else:
    print("ok 1 - docs/magnet.yaml validates against the %s schema" % proto)
ops = spec.get("operations", {}).get("list", [])
nodoc = [op["name"] for op in ops if not op.get("doc")]
if nodoc:
    fails += 1
    print("not ok 2 - every operation has a doc # %s" % " ".join(nodoc))
else:
    print("ok 2 - every operation has a doc (%d)" % len(ops))
print("1..2")
sys.exit(1 if fails else 0)
