#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Join the "probes" multicast group of the "magnet" generic netlink family.

Prints "join=OK" or "join=ERRNO_NAME" (e.g. EPERM: the group needs
CAP_NET_ADMIN, docs/THREATS.md) and exits 0 if joined, 1 if refused.
"""

import errno
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from genl_req import (SOL_NETLINK, attrs_of, magnet_family)  # noqa: E402

CTRL_ATTR_MCAST_GROUPS = 7
CTRL_ATTR_MCAST_GRP_NAME, CTRL_ATTR_MCAST_GRP_ID = 1, 2
NETLINK_ADD_MEMBERSHIP = 1


def main():
    sk, (err, msg, rep) = magnet_family()
    if err or not rep:
        print("join=NOFAMILY")
        return 1
    grps = attrs_of(attrs_of(rep[0][4:])[CTRL_ATTR_MCAST_GROUPS])
    gid = None
    for g in grps.values():
        a = attrs_of(g)
        if a[CTRL_ATTR_MCAST_GRP_NAME].split(b"\0")[0] == b"probes":
            gid = int.from_bytes(a[CTRL_ATTR_MCAST_GRP_ID][:4], sys.byteorder)
    if gid is None:
        print("join=NOGROUP")
        return 1
    try:
        sk.setsockopt(SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, gid)
    except OSError as e:
        print("join=%s" % errno.errorcode.get(e.errno, str(e.errno)))
        return 1
    print("join=OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
