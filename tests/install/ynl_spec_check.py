# SPDX-License-Identifier: GPL-2.0
"""What check_netlink_spec.py and check_netlink_policy.py share: TAP lines
and the spec's naming and numbering rules."""


class Tap:
    """Numbered "ok N - ..." / "not ok N - ..." lines; @n run, @failed."""

    def __init__(self):
        self.n = 0
        self.failed = 0

    def check(self, ok, what):
        self.n += 1
        print("%s %d - %s" % ("ok" if ok else "not ok", self.n, what))
        if not ok:
            self.failed += 1
        return ok


def cname(s):
    """a spec name as its C constant's: upper case, '-' -> '_'"""
    return s.upper().replace("-", "_")


def numbered(entries):
    """(entry, value) in spec order, by the YAML numbering rule: from 1,
    or from an entry's "value", each next one plus one"""
    out, nxt = [], 1
    for e in entries:
        if "value" in e:
            nxt = e["value"]
        out.append((e, nxt))
        nxt += 1
    return out
