#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""check_netlink_policy.py [--root REPO]: the kernel's hand-written attribute
policies and operation table (kmod/*.c: every `struct nla_policy` table,
the `genl_ops`/`genl_small_ops` table and the `genl_family`) accept what
docs/magnet.yaml, the netlink spec, says requests carry: no more, no less.

What it checks, with file:line of the C side on every failure:
- every operation of the spec with a do or dump has an entry in the ops
  table (by command number) with .doit/.dumpit as the spec has do/dump, the
  spec's admin-perm as GENL_ADMIN_PERM, and no GENL_DONT_VALIDATE_* (which
  would make the kernel accept unknown attributes); no C entry is missing
  from the spec;
- each operation's policy (its own .policy/.maxattr, else the family's):
  maxattr and the table's size are the attribute set's highest number;
- every attribute the spec's requests list (do and dump) is in that
  policy, with the NLA type ynl-gen-c would give it (u8 -> NLA_U8, ...,
  string -> NLA_NUL_STRING, or NLA_STRING with unterminated-ok, binary ->
  NLA_BINARY, flag -> NLA_FLAG, nest -> NLA_NESTED) and the bounds of the
  spec's `checks:` (min, max, flags-mask, min-len, max-len, exact-len; a
  name resolved through the spec's definitions or the uapi headers) equal
  to the policy's (`.len`, NLA_POLICY_MIN/MAX/RANGE/MASK/EXACT_LEN/MIN_LEN/
  MAX_LEN, the designated .min/.max): compared as the set of values each
  accepts, so NLA_POLICY_MASK(t, 0x3f) equals max 63;
- a nest names a nested policy (NLA_POLICY_NESTED or _NLA_POLICY_NESTED)
  whose maxattr is the nested set's, and that policy is compared with the
  whole nested attribute set (the spec's operations list top-level
  attributes only), recursively;
- the other way: an attribute a policy accepts that no request of the
  spec has (top level: of the operations using that policy; the family's
  policy is shared by all of them, so per-operation lists are compared as
  their union) or that the nested set does not have;
- bounds fit the s16 .min/.max of struct nla_policy (larger need
  NLA_POLICY_FULL_RANGE); nla_parse_nested() calls pass the policy's
  maxattr and are not the liberal _deprecated form; every nla_policy
  table in kmod/ is reached from the ops table, so none goes unchecked.

C constants are resolved from include/uapi/magnet.h, magnet_genl.h, kmod/*.h
and the policy's own file (#defines and enums).  Prints TAP; exits 1 on any
mismatch.  Needs no kernel source.
"""
import argparse
import ast
import glob
import os
import re
import sys

import yaml

from ynl_spec_check import Tap, cname, numbered

# Attributes of nested sets the kernel refuses in requests on purpose.  A
# genetlink-c operation lists only top-level attributes, so a nest's set
# is both request and reply and the spec cannot say that an attribute of it
# is reply-only; the kernel's strict policy leaves these out ("Unsupported
# attribute", EINVAL), so a request cannot pretend to set a counter.
# (tests/tools/fuzz_magnet.py's nest() likewise sends only the request ones.)
REPLY_ONLY = {
    # FILTER_GET's per-filter counters (docs/FILTERS.md)
    "filter": ["matched", "delivered", "dropped"],
    # SYNTH_GET's start, counters and the VALUES reply's v-* per-key values
    # (docs/SYNTH.md); the key-* selectors and values are request attributes
    "synth": ["start", "matched", "keys", "overflow", "short", "nmi",
              "reordered", "late", "records", "records-lost",
              "v-period-start", "v-count", "v-min", "v-max", "v-sum-lo",
              "v-sum-hi", "v-sumsq-lo", "v-sumsq-hi", "v-mean",
              "v-variance", "v-flags", "v-total-count", "v-total-sum-lo",
              "v-total-sum-hi", "missed"],
    # CORR_GET's ID (assigned by the kernel) and counters (docs/CORRELATE.md)
    "corr": ["id", "events", "completed", "expired", "partial", "overflow",
             "stray", "lost", "late", "pending", "records", "in-written",
             "in-read"],
}

INT_RANGE = {}
for _b in (8, 16, 32, 64):
    INT_RANGE["u%d" % _b] = (0, (1 << _b) - 1)
    INT_RANGE["s%d" % _b] = (-(1 << (_b - 1)), (1 << (_b - 1)) - 1)
INT_RANGE["uint"] = INT_RANGE["u64"]
INT_RANGE["sint"] = INT_RANGE["s64"]
NLA_INT = {"NLA_" + t.upper(): r for t, r in INT_RANGE.items()}
NLA_INT["NLA_BE16"] = INT_RANGE["u16"]
NLA_INT["NLA_BE32"] = INT_RANGE["u32"]
S16 = (-32768, 32767)

ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
ap.add_argument("--root", help="the source tree (default: . or REPO)")
ap.add_argument("repo", nargs="?", default=".")
args = ap.parse_args()
root = args.root or args.repo

tap = Tap()
check = tap.check


def note(what):
    print("# " + what)


def rel(path):
    return os.path.relpath(path, root)


# ---- C text -----------------------------------------------------------------

def strip_comments(text):
    """Comments out, string literals and line numbers kept."""
    def repl(m):
        s = m.group(0)
        if s.startswith("/"):
            return "\n" * s.count("\n") + " "
        return s
    return re.sub(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'',
                  repl, text, flags=re.S)


class CFile:
    def __init__(self, path):
        self.path = path
        self.name = rel(path)
        self.text = strip_comments(open(path).read())

    def line(self, pos):
        return self.text.count("\n", 0, pos) + 1

    def where(self, pos):
        return "%s:%d" % (self.name, self.line(pos))

    def block(self, start):
        """(end, body) of the brace block opening at @start"""
        depth = 0
        for i in range(start, len(self.text)):
            c = self.text[i]
            if c in "{([":
                depth += 1
            elif c in "})]":
                depth -= 1
                if depth == 0:
                    return i, self.text[start + 1:i]
        raise ValueError("%s: unbalanced block" % self.where(start))


def split_top(body, base=0):
    """Top-level comma-separated items of @body: (offset of the item's first
    non-blank character + @base, text)"""
    out, depth, start = [], 0, 0
    for i, c in enumerate(body + ","):
        if c in "{([":
            depth += 1
        elif c in "})]":
            depth -= 1
        elif c == "," and depth == 0:
            item = body[start:i]
            if item.strip():
                lead = len(item) - len(item.lstrip())
                out.append((base + start + lead, item.strip()))
            start = i + 1
    return out


def defines_and_enums(text):
    """{NAME: expression text} from #defines (object-like) and enums"""
    out = {}
    text = re.sub(r"\\\n", " ", text)
    for m in re.finditer(r"^[ \t]*#[ \t]*define[ \t]+(\w+)(?!\()[ \t]*(.*)$",
                         text, re.M):
        if m.group(2).strip():
            out.setdefault(m.group(1), m.group(2).strip())
    for m in re.finditer(r"\benum\b\s*\w*\s*\{(.*?)\}", text, re.S):
        prev = None
        for item in m.group(1).split(","):
            item = re.sub(r"^\s*#.*$", "", item, flags=re.M).strip()
            if not item:
                continue
            name, _, val = (p.strip() for p in item.partition("="))
            if not re.fullmatch(r"\w+", name):
                continue
            if val:
                expr = val
            elif prev is None:
                expr = "0"
            else:
                expr = "(%s) + 1" % prev
            out.setdefault(name, expr)
            prev = name
    return out


class Scope:
    """Constant expressions of C, evaluated: a file's own names first"""

    def __init__(self, *tables):
        self.tables = tables

    def lookup(self, name):
        for t in self.tables:
            if name in t:
                return t[name]
        return None

    def eval(self, expr, seen=()):
        e = expr.strip()
        e = re.sub(r"\bBIT\s*\(", "(1 << ", e)
        e = re.sub(r"\(\s*(?:const\s+)?(?:unsigned\s+|signed\s+)?"
                   r"(?:__)?(?:u8|u16|u32|u64|s8|s16|s32|s64|int|long|"
                   r"char|short|size_t)\s*\)", "", e)
        e = re.sub(r"\b(0[xX][0-9a-fA-F]+|\d+)[uUlL]+\b", r"\1", e)
        e = re.sub(r"\b0([0-7]+)\b", r"0o\1", e)
        e = e.replace("/", "//")

        def ident(m):
            name = m.group(0)
            if name in seen:
                raise ValueError("%s is defined by itself" % name)
            val = self.lookup(name)
            if val is None:
                raise ValueError("unknown constant %s" % name)
            return "(%d)" % self.eval(val, seen + (name,))
        e = re.sub(r"\b(?!0[xXoO])[A-Za-z_]\w*\b", ident, e)
        return _safe_eval(ast.parse(e, mode="eval").body)


def _safe_eval(node):
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    if isinstance(node, ast.UnaryOp):
        v = _safe_eval(node.operand)
        return {ast.USub: lambda: -v, ast.UAdd: lambda: v,
                ast.Invert: lambda: ~v}[type(node.op)]()
    if isinstance(node, ast.BinOp):
        a, b = _safe_eval(node.left), _safe_eval(node.right)
        ops = {ast.Add: lambda: a + b, ast.Sub: lambda: a - b,
               ast.Mult: lambda: a * b, ast.FloorDiv: lambda: a // b,
               ast.Mod: lambda: a % b, ast.LShift: lambda: a << b,
               ast.RShift: lambda: a >> b, ast.BitOr: lambda: a | b,
               ast.BitAnd: lambda: a & b, ast.BitXor: lambda: a ^ b}
        return ops[type(node.op)]()
    raise ValueError("not a constant expression")


# ---- the spec -----------------------------------------------------------------

spec = yaml.safe_load(open(os.path.join(root, "docs/magnet.yaml")))
uapi = {}
for h in ("include/uapi/magnet.h", "include/uapi/magnet_genl.h"):
    uapi.update(defines_and_enums(strip_comments(
        open(os.path.join(root, h)).read())))
kmod_h = {}
for h in sorted(glob.glob(os.path.join(root, "kmod/*.h"))):
    for k, v in defines_and_enums(strip_comments(open(h).read())).items():
        kmod_h.setdefault(k, v)
global_scope = Scope(uapi, kmod_h)

definitions = {d["name"]: d for d in spec.get("definitions") or []}


def spec_const(v, where):
    """A spec bound: a number, a definition or a uapi constant"""
    if isinstance(v, int):
        return v
    m = re.fullmatch(r"([us])(8|16|32|64)-(min|max)", str(v))
    if m:
        return INT_RANGE[m.group(1) + m.group(2)][m.group(3) == "max"]
    d = definitions.get(v)
    if d is not None and d.get("type") == "const" and "value" in d:
        return d["value"]
    for c in def_cnames(d) if d else [cname(v), cname(spec["name"] + "-" + v)]:
        if global_scope.lookup(c) is not None:
            return global_scope.eval(c)
    raise ValueError("%s: cannot resolve %r" % (where, v))


def def_cnames(d):
    """the C names a definition may have in the uapi headers"""
    prefix = d.get("name-prefix", spec["name"] + "-")
    return [cname(prefix + d["name"]), cname(d["name"])]


# a constant the spec gives a value is the header's (the bounds use it)
for d in definitions.values():
    if d.get("type") != "const" or "value" not in d:
        continue
    c = next((c for c in def_cnames(d) if global_scope.lookup(c) is not None),
             None)
    cv = global_scope.eval(c) if c else None
    check(c is None or cv == d["value"], "definition %s = %s: the uapi "
          "headers' %s = %s" % (d["name"], d["value"], c or "(none)", cv))


sets = {}       # name -> {"attrs": {name: attr}, "num": {num: attr}, ...}
for s in spec["attribute-sets"]:
    prefix = s.get("name-prefix", spec["name"] + "-a-" + s["name"] + "-")
    attrs, bynum = {}, {}
    for a, num in numbered(s["attributes"]):
        a = dict(a, num=num, set=s["name"], cname=cname(prefix + a["name"]))
        attrs[a["name"]] = a
        bynum[num] = a
    sets[s["name"]] = {"attrs": attrs, "num": bynum,
                       "max": max(bynum) if bynum else 0}


def spec_type(a):
    """(the NLA type ynl-gen-c gives @a, its accepted values)"""
    t, chk = a["type"], a.get("checks") or {}
    where = "%s.%s" % (a["set"], a["name"])
    if t in INT_RANGE:
        lo, hi = INT_RANGE[t]
        nla = "NLA_" + t.upper()
        if a.get("byte-order") == "big-endian" and t in ("u16", "u32"):
            nla = "NLA_BE" + t[1:]
        mask = None
        if "min" in chk:
            lo = spec_const(chk["min"], where)
        if "max" in chk:
            hi = spec_const(chk["max"], where)
        if "flags-mask" in chk:
            d = definitions[chk["flags-mask"]]
            mask = 0
            for i, e in enumerate(d.get("entries", [])):
                mask |= 1 << (e["value"] if isinstance(e, dict) and
                              "value" in e else i)
        return nla, int_form(t, lo, hi, mask)
    if t == "string":
        if "exact-len" in chk:
            x = spec_const(chk["exact-len"], where)
            return "NLA_BINARY", ("len", x, x)
        nla = "NLA_STRING" if chk.get("unterminated-ok") else "NLA_NUL_STRING"
        mx = spec_const(chk["max-len"], where) if "max-len" in chk else None
        return nla, ("len", 0, mx)
    if t == "binary":
        if "exact-len" in chk:
            x = spec_const(chk["exact-len"], where)
            return "NLA_BINARY", ("len", x, x)
        mn = spec_const(chk["min-len"], where) if "min-len" in chk else 0
        mx = spec_const(chk["max-len"], where) if "max-len" in chk else None
        return "NLA_BINARY", ("len", mn, mx)
    if t == "flag":
        return "NLA_FLAG", None
    if t == "nest":
        return "NLA_NESTED", None
    return "(spec type %s)" % t, None


def int_form(t, lo, hi, mask):
    """the values accepted, comparable: a mask 2^k-1 is the range 0..2^k-1"""
    tlo, thi = INT_RANGE[t]
    if mask is not None and mask & (mask + 1) == 0 and tlo == 0:
        hi, mask = min(hi, mask), None
    return ("int", max(lo, tlo), min(hi, thi), mask)


def describe(form):
    if form is None:
        return "no bounds"
    if form[0] == "int":
        s = "%d..%d" % (form[1], form[2])
        return s + (" mask 0x%x" % form[3] if form[3] is not None else "")
    return "length %s..%s" % (form[1], "any" if form[2] is None else form[2])


# ---- the kernel's tables ------------------------------------------------------

cfiles = [CFile(p) for p in sorted(glob.glob(os.path.join(root, "kmod/*.c")))]
scopes = {}
for f in cfiles:
    scopes[f.name] = Scope(defines_and_enums(f.text), uapi, kmod_h)

policies = {}   # name -> {"file", "pos", "size", "entries": [..]}
for f in cfiles:
    for m in re.finditer(r"struct\s+nla_policy\s+(\w+)\s*\[([^\]]*)\]\s*=\s*\{",
                         f.text):
        end, body = f.block(m.end() - 1)
        entries = []
        for pos, item in split_top(body, m.end()):
            em = re.fullmatch(r"\[([^\]]+)\]\s*=\s*(.*)", item, re.S)
            entries.append({"pos": pos, "key": em.group(1).strip() if em
                            else None, "value": em.group(2).strip() if em
                            else item})
        if m.group(1) in policies:
            check(False, "%s: a second nla_policy named %s" %
                  (f.where(m.start()), m.group(1)))
        policies[m.group(1)] = {"file": f, "pos": m.start(),
                                "size": m.group(2), "entries": entries}


def fields(text):
    """{field: value text} of a designated initializer's body"""
    out = {}
    for _, item in split_top(text):
        fm = re.fullmatch(r"\.(\w+)\s*=\s*(.*)", item, re.S)
        if fm:
            out[fm.group(1)] = fm.group(2).strip()
        else:
            out.setdefault("?", item)
    return out


def policy_maxattr(pname):
    p = policies[pname]
    return scopes[p["file"].name].eval(p["size"]) - 1


def parse_entry(e, scope):
    """{type, lo, hi, mask, len, nested: (policy, maxattr), bounds (the
    s16 .min/.max given)} of a policy entry's value"""
    v = e["value"]
    out = {"type": None, "lo": None, "hi": None, "mask": None, "len": None,
           "nested": None, "bounds": []}
    m = re.fullmatch(r"(_?NLA_POLICY_\w+)\s*\((.*)\)", v, re.S)
    if v.startswith("{"):
        f = fields(v[1:-1])
        if "?" in f:
            raise ValueError("cannot read %r" % v)
        out["type"] = f.get("type")
        vt = f.get("validation_type", "")
        if "len" in f:
            out["len"] = scope.eval(f["len"])
        if "nested_policy" in f:
            out["nested"] = (f["nested_policy"], out["len"])
        if vt in ("NLA_VALIDATE_RANGE", "NLA_VALIDATE_MIN"):
            out["lo"] = scope.eval(f["min"])
        if vt in ("NLA_VALIDATE_RANGE", "NLA_VALIDATE_MAX"):
            out["hi"] = scope.eval(f["max"])
        if vt == "NLA_VALIDATE_MASK":
            out["mask"] = scope.eval(f["mask"])
        elif vt and vt not in ("NLA_VALIDATE_RANGE", "NLA_VALIDATE_MIN",
                               "NLA_VALIDATE_MAX", "NLA_VALIDATE_NONE"):
            raise ValueError("validation %s not understood" % vt)
        out["bounds"] = [x for x in (out["lo"], out["hi"]) if x is not None]
    elif m:
        name, a = m.group(1), [t for _, t in split_top(m.group(2))]
        if name in ("NLA_POLICY_MAX", "NLA_POLICY_MIN", "NLA_POLICY_RANGE",
                    "NLA_POLICY_MASK"):
            out["type"] = a[0]
            vals = [scope.eval(x) for x in a[1:]]
            if name == "NLA_POLICY_MAX":
                out["hi"] = vals[0]
            elif name == "NLA_POLICY_MIN":
                out["lo"] = vals[0]
            elif name == "NLA_POLICY_RANGE":
                out["lo"], out["hi"] = vals
            else:
                out["mask"] = vals[0]
            if name != "NLA_POLICY_MASK":
                out["bounds"] = vals
        elif name == "NLA_POLICY_EXACT_LEN":
            x = scope.eval(a[0])
            out.update(type="NLA_BINARY", lo=x, hi=x, bounds=[x, x])
        elif name == "NLA_POLICY_MIN_LEN":
            x = scope.eval(a[0])
            out.update(type="NLA_BINARY", lo=x, bounds=[x])
        elif name == "NLA_POLICY_MAX_LEN":
            x = scope.eval(a[0])
            out.update(type="NLA_BINARY", hi=x, bounds=[x])
        elif name == "NLA_POLICY_NESTED":
            out.update(type="NLA_NESTED", nested=(a[0], None))
        elif name == "_NLA_POLICY_NESTED":
            out.update(type="NLA_NESTED", nested=(a[1], scope.eval(a[0])))
        elif name in ("NLA_POLICY_NESTED_ARRAY", "_NLA_POLICY_NESTED_ARRAY"):
            out.update(type="NLA_NESTED_ARRAY",
                       nested=(a[-1], scope.eval(a[0]) if len(a) == 2
                               else None))
        else:
            raise ValueError("%s not understood by this check" % name)
    else:
        raise ValueError("cannot read %r" % v)
    if out["nested"] and out["nested"][1] is None:
        pn = out["nested"][0]
        out["nested"] = (pn, policy_maxattr(pn) if pn in policies else None)
    return out


def kernel_form(k):
    t = k["type"]
    if t in NLA_INT:
        tname = t[4:].lower() if not t.startswith("NLA_BE") else \
            "u" + t[6:]
        lo, hi = NLA_INT[t]
        if k["lo"] is not None:
            lo = k["lo"]
        if k["hi"] is not None:
            hi = k["hi"]
        return int_form(tname, lo, hi, k["mask"])
    if t in ("NLA_NUL_STRING", "NLA_STRING"):
        return ("len", 0, k["len"] or None)
    if t == "NLA_BINARY":
        if k["lo"] is not None or k["hi"] is not None:
            return ("len", k["lo"] or 0, k["hi"])
        return ("len", 0, k["len"] or None)
    return None


# the family, its ops
family = None
for f in cfiles:
    for m in re.finditer(r"struct\s+genl_family\s+(\w+)[^=;{(]*=\s*\{", f.text):
        end, body = f.block(m.end() - 1)
        if family is not None:
            check(False, "%s: a second genl_family %s (this check knows one)"
                  % (f.where(m.start()), m.group(1)))
        family = {"file": f, "pos": m.start(), "name": m.group(1),
                  "f": fields(body)}
if not check(family is not None, "kmod/ defines a struct genl_family"):
    print("1..%d" % tap.n)
    sys.exit(1)
ff, fscope = family["file"], scopes[family["file"].name]
kops = {}       # cmd number -> op
for kind in ("ops", "small_ops"):
    arr = family["f"].get(kind)
    if not arr:
        continue
    m = re.search(r"struct\s+genl_(?:small_)?ops\s+%s\s*\[[^\]]*\]\s*=\s*\{"
                  % re.escape(arr), ff.text)
    if not check(m is not None, "%s: .%s = %s is in %s" %
                 (ff.where(family["pos"]), kind, arr, ff.name)):
        continue
    end, body = ff.block(m.end() - 1)
    for pos, item in split_top(body, m.end()):
        of = fields(item.strip()[1:-1])
        num = fscope.eval(of["cmd"])
        of.update(pos=pos, kind=kind)
        if num in kops:
            check(False, "%s: command %s twice in the ops table" %
                  (ff.where(pos), of["cmd"]))
        kops[num] = of

# ---- operations -----------------------------------------------------------------

set_of_policy = {}      # policy name -> (set name, where it was reached)
requests = {}           # (policy, set) -> {attr name: [op names]}
maxattrs = {}           # (policy, set) -> [(maxattr, where)]
oplist = spec["operations"]["list"]
cmd_prefix = spec["operations"].get("name-prefix", spec["name"] + "-cmd-")
seen_cmds = set()
for op, num in numbered(oplist):
    if "do" not in op and "dump" not in op:
        continue        # notifications
    seen_cmds.add(num)
    k = kops.get(num)
    c = cname(cmd_prefix + op["name"])
    if k is None:
        check(False, "op %s (%s = %d): not in the kernel's ops table (%s)" %
              (op["name"], c, num, ff.where(family["pos"])))
        continue
    w = ff.where(k["pos"])
    bad = []
    for part, fn in (("do", "doit"), ("dump", "dumpit")):
        if (part in op) != (fn in k):
            bad.append("spec %s %s, kernel .%s %s" %
                       ("has" if part in op else "has no", part, fn,
                        k.get(fn, "absent")))
    flags = k.get("flags", "0")
    for sf, cf in (("admin-perm", "GENL_ADMIN_PERM"),
                   ("uns-admin-perm", "GENL_UNS_ADMIN_PERM")):
        if (sf in (op.get("flags") or [])) != bool(re.search(r"\b%s\b" % cf,
                                                             flags)):
            bad.append("spec flags %s, kernel .flags = %s" %
                       (op.get("flags") or [], flags))
    if re.search(r"GENL_DONT_VALIDATE", k.get("validate", "")):
        bad.append("kernel .validate = %s: not strict, accepts attributes "
                   "the policy does not have" % k["validate"])
    pol = k.get("policy", family["f"].get("policy"))
    mxe = k.get("maxattr", family["f"].get("maxattr"))
    pw = w if "policy" in k else ff.where(family["pos"])
    if pol not in policies:
        bad.append("no policy the check knows (%s at %s)" % (pol, pw))
    check(not bad, "%s: op %s (%s): do/dump, flags, strict validation, "
          "policy %s%s" % (w, op["name"], k["cmd"], pol,
                           ": " + "; ".join(bad) if bad else ""))
    if pol not in policies:
        continue
    aset = op.get("attribute-set", spec["operations"].get("attribute-set"))
    key = (pol, aset)
    set_of_policy.setdefault(pol, (aset, pw))
    m = (fscope.eval(mxe) if mxe else None, pw, mxe)
    if m not in maxattrs.setdefault(key, []):
        maxattrs[key].append(m)
    req = requests.setdefault(key, {})
    for part in ("do", "dump"):
        for a in ((op.get(part) or {}).get("request") or {}).get(
                "attributes") or []:
            if op["name"] not in req.setdefault(a, []):
                req[a].append(op["name"])
extra = ["%s: %s (%d)" % (ff.where(k["pos"]), k["cmd"], num)
         for num, k in sorted(kops.items()) if num not in seen_cmds]
check(not extra, "every command of the kernel's ops table is a spec operation"
      " with do or dump%s" % (": not " + ", ".join(extra) if extra else ""))

# ---- policies against sets --------------------------------------------------------


def flat(text):
    return re.sub(r"\s+", " ", text)


def compare_attr(a, e, pol, ctx):
    """spec attribute @a against policy entry @e of @pol (already parsed)"""
    f = policies[pol]["file"]
    w = f.where(e["pos"])
    k = e["parsed"]
    try:
        want, form = spec_type(a)
    except (ValueError, KeyError) as x:
        check(False, "%s: %s.%s: spec checks: %s" % (w, a["set"], a["name"], x))
        return
    bad = []
    if k["type"] != want:
        bad.append("type: spec %s -> %s, kernel %s" % (a["type"], want,
                                                       k["type"]))
    if k["type"] != "NLA_BINARY":
        for b in k["bounds"]:
            if not S16[0] <= b <= S16[1]:
                bad.append("bound %d does not fit struct nla_policy's s16 "
                           ".min/.max (NLA_POLICY_FULL_RANGE)" % b)
    kform = kernel_form(k)
    nest = None
    if a["type"] == "nest":
        ref = a.get("nested-attributes")
        if k["nested"] is None or k["nested"][0] not in policies:
            bad.append("no nested policy the check knows (%s)" %
                       (k["nested"][0] if k["nested"] else "none"))
        else:
            nest = k["nested"][0]
            if k["nested"][1] != sets[ref]["max"]:
                bad.append("nested maxattr: spec set %s max %d, kernel %s" %
                           (ref, sets[ref]["max"], k["nested"][1]))
        shown = "nest of %s -> %s" % (ref, nest)
    else:
        if k["type"] == want and kform != form:
            bad.append("bounds: spec checks %s -> %s, kernel %s -> %s" %
                       (a.get("checks") or {}, describe(form),
                        flat(e["value"]), describe(kform)))
        shown = "%s %s" % (want, describe(form))
    check(not bad, "%s: %s.%s (%s)%s: %s" %
          (w, a["set"], a["name"], e["key"], ctx,
           "; ".join(bad) if bad else shown))
    if not bad and k["mask"] is not None and not (a.get("checks") or {}).get(
            "flags-mask"):
        note("%s: kernel NLA_POLICY_MASK 0x%x accepts exactly the spec's "
             "%s" % (w, k["mask"], describe(form)))
    if nest:
        visit(nest, a["nested-attributes"], w)


visited = set()


def visit(pol, set_name, via, request=None):
    """compare policy @pol with attribute set @set_name: @request, the
    attribute names requests may carry (top level), else the whole set"""
    if (pol, set_name) in visited:
        return
    visited.add((pol, set_name))
    p = policies[pol]
    f, scope = p["file"], scopes[p["file"].name]
    s = sets[set_name]
    prev = set_of_policy.setdefault(pol, (set_name, via))
    size_max = scope.eval(p["size"]) - 1
    bad = []
    if prev[0] != set_name:
        bad.append("also used for set %s at %s" % (prev[0], prev[1]))
    if size_max != s["max"]:
        bad.append("size %s is %d + 1, set %s's max is %d" %
                   (p["size"], size_max, set_name, s["max"]))
    check(not bad, "%s: policy %s[%s] for set %s%s" %
          (f.where(p["pos"]), pol, p["size"], set_name,
           ": " + "; ".join(bad) if bad else ""))
    byn = {}
    for e in p["entries"]:
        w = f.where(e["pos"])
        if e["key"] is None:
            check(False, "%s: %s entry is not [ATTR] = ...: %s" %
                  (w, pol, flat(e["value"])))
            continue
        try:
            e["num"] = scope.eval(e["key"])
            e["parsed"] = parse_entry(e, scope)
        except (ValueError, KeyError, IndexError, SyntaxError,
                TypeError) as x:
            check(False, "%s: %s [%s]: %s" % (w, pol, e["key"], x))
            continue
        if e["parsed"]["type"] in (None, "NLA_UNSPEC", "NLA_REJECT"):
            continue            # refused, like an absent entry
        if e["num"] in byn:
            check(False, "%s: %s [%s] given twice" % (w, pol, e["key"]))
        byn[e["num"]] = e
    reply_only = set(REPLY_ONLY.get(set_name, [])) if request is None \
        else set()
    if request is None:
        expect = [a for a in s["attrs"].values()
                  if a["type"] not in ("pad", "unused")
                  and a["name"] not in reply_only]
    else:
        expect = [s["attrs"][x] for x in sorted(request, key=lambda x:
                                                s["attrs"][x]["num"])]
    for a in expect:
        e = byn.get(a["num"])
        ctx = (" [%s]" % ", ".join(request[a["name"]])
               if request else "")
        if e is None:
            check(False, "%s: %s.%s (%s)%s: not in policy %s, the kernel "
                  "refuses it" % (f.where(p["pos"]), set_name, a["name"],
                                  a["cname"], ctx, pol))
        else:
            compare_attr(a, e, pol, ctx)
    names = {a["num"] for a in expect}
    for num, e in sorted(byn.items()):
        if num in names:
            continue
        a = s["num"].get(num)
        w = f.where(e["pos"])
        if a is None:
            check(False, "%s: %s [%s] = %d: the kernel accepts an attribute "
                  "set %s does not have" % (w, pol, e["key"], num, set_name))
        elif a["name"] in reply_only:
            check(False, "%s: %s.%s (%s): the kernel accepts it, but "
                  "REPLY_ONLY says it is refused: drop it from REPLY_ONLY"
                  % (w, set_name, a["name"], e["key"]))
        else:
            check(False, "%s: %s.%s (%s): the kernel accepts it, no request "
                  "of the spec has it" % (w, set_name, a["name"], e["key"]))


for (pol, aset), req in sorted(requests.items()):
    for mx, w, mxe in maxattrs[(pol, aset)]:
        check(mx == sets[aset]["max"], "%s: maxattr %s = %s, spec set %s max "
              "%d" % (w, mxe, mx, aset, sets[aset]["max"]))
    unknown = [a for a in req if a not in sets[aset]["attrs"]]
    if not check(not unknown, "spec requests name attributes of set %s (%s)"
                 % (aset, ", ".join(unknown) or "all known")):
        continue
    visit(pol, aset, ff.where(family["pos"]), req)

for sname, names in REPLY_ONLY.items():
    bad = [x for x in names if x not in sets.get(sname, {"attrs": {}})["attrs"]]
    check(not bad, "REPLY_ONLY %s: %d reply-only attributes, refused in "
          "requests, all in the spec%s" % (sname, len(names), ": not " +
                                           ", ".join(bad) if bad else ""))

for pol, p in sorted(policies.items()):
    check(pol in set_of_policy, "%s: policy %s is reached from the ops table "
          "(checked)" % (p["file"].where(p["pos"]), pol))

for f in cfiles:
    for m in re.finditer(r"\bnla_parse_nested(_deprecated)?\s*\(", f.text):
        end, body = f.block(m.end() - 1)
        a = [t for _, t in split_top(body)]
        w = f.where(m.start())
        pol = a[3] if len(a) > 3 else None
        if pol not in set_of_policy:
            check(False, "%s: nla_parse_nested with policy %s, which no "
                  "operation reaches" % (w, pol))
            continue
        mx = scopes[f.name].eval(a[1])
        sname = set_of_policy[pol][0]
        bad = []
        if m.group(1):
            bad.append("the liberal _deprecated form")
        if mx != sets[sname]["max"]:
            bad.append("maxattr %d, set %s max %d" % (mx, sname,
                                                      sets[sname]["max"]))
        check(not bad, "%s: nla_parse_nested%s(%s, %s)%s" %
              (w, m.group(1) or "", a[1], pol,
               ": " + "; ".join(bad) if bad else ""))

print("1..%d" % tap.n)
sys.exit(1 if tap.failed else 0)
