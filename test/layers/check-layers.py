#!/usr/bin/env python3
"""check-layers.py: the allowed folder order of the library sources (#11).

Usage: check-layers.py [--allow-file F] [--print-allow] [-v] SRCDIR BUILDDIR

SRCDIR is the top of the source tree (the folder that holds src/), BUILDDIR
the top of a build tree where the library has been built (make all).

The graph. Its nodes are modules: a .c file and the header of the same base
name in the same folder are one module (src/runtime/rma.h + rma.c is
runtime/rma); a header alone or a .c alone is a module too. A module's
folder is the first folder under src/ (src/sdma/cuda/cu.c is the module
sdma/cuda/cu of the folder sdma). Its edges are
 - include edges: every #include "..." / <...> of a .c or .h file under src/
   (comments stripped, #if ignored: a conditional include counts), resolved
   as the build does (the including file's folder first for "...", then
   -I include, -I src/runtime, -I src, -I BUILDDIR/config: AM_CPPFLAGS in
   Makefile.am); only files under src/ make edges;
 - call and data edges: `nm` on every object of libdmashmem
   (BUILDDIR/src/**/.libs/libdmashmem_la-*.o, or the .o next to the .lo when
   the build has no .libs) and of shmem_launcher (BUILDDIR/src/**/
   shmem_launcher-*.o, or the plain *.o of src/ when it has no per-target
   flags);
   a symbol undefined in object A and defined (global) in object B is an edge
   A -> B, labelled "call" when B defines code there and "data" otherwise.

Rule 1, the folder order: RULES below says which folder may depend on which,
and, where it names headers, only through those headers: an include of
another file of that folder, or a call/data edge to a symbol that those
headers do not mention, breaks it. Edges inside one folder are always
allowed.

Rule 2, no cycle across folders: the strongly connected components of the
module graph (Tarjan's algorithm, iterative) must not hold modules of more
than one folder. Each such component is printed with one concrete cycle
through it, the edge behind every step, and every edge across folders
inside it (the candidates to cut).

Exit status: 0 when clean; 1 with one line per violation otherwise (2 when
the build has no library objects). ALLOW below holds today's known
violations that are being fixed, each with a reason: a rule-1 entry is the
violation's text, a rule-2 entry "cycle edge: A -> B" takes the module edge
A -> B (the back edge that is to go) out of the cycle check. A listed
violation passes; an entry that no longer occurs (a rule-2 edge that is gone
or closes no cycle across folders any more) fails the check as "stale", so
the list only shrinks. An entry may carry a condition, a macro of
BUILDDIR/config/dsm_config.h ("DSM_BUILD_CUDA", or "!MACRO"): it is checked
for staleness only in builds where it holds (code compiled in some
configurations only), so run the check in each configuration (make check in
the --without-cuda build, make check-quick in the default one).
--allow-file F replaces ALLOW with F's lines ("KEY  # reason" or
"KEY  # reason  # when: CONDITION"; blank lines and lines starting with #
ignored; the self-test uses it).
--print-allow prints the rule-1 violations not yet allowed as ALLOW entries
to paste (a reason is still to be written); -v lists the allowed ones too.
"""

import os
import re
import subprocess
import sys

# ------------------------------------------------------------------ rules
# folder -> {folder it may use: None (anything of it) or the list of its
# public headers, relative to src/, that are the only way in}.
ANY = None
RULES = {
    "common": {},
    "boot": {"common": ANY},
    "sdma": {"common": ANY},
    "net": {"common": ANY},
    "launcher": {"common": ANY, "boot": ANY},
    "runtime": {
        "common": ANY,
        "boot": ["boot/boot.h"],
        "sdma": ["sdma/sdma.h"],
        "net": ["net/net.h"],
        "coll": ["coll/coll.h"],
    },
    "coll": {
        "common": ANY,
        "runtime": ANY,
        "sdma": ["sdma/sdma.h"],
        "net": ["net/net.h"],
    },
    # The device API's host side: above coll and runtime, and no folder may
    # use it (coll reaches its part of a persistent request only through
    # the operations it registers, coll/persistent_int.h).
    "devapi": {
        "common": ANY,
        "runtime": ANY,
        "sdma": ["sdma/sdma.h"],
        "coll": ["coll/coll.h", "coll/persistent_int.h"],
    },
}

# ------------------------------------------------------------------ allow
# Known violations being fixed now: (key, reason[, condition]).
#  - rule 1: the key is what the report prints after "layers: " and before
#    " not allowed";
#  - rule 2: "cycle edge: A -> B" (A, B modules) takes the edge A -> B out of
#    the cycle check: the back edge that is to go. It is stale once the edge
#    is gone or no longer on a cycle across folders.
# condition: "MACRO" or "!MACRO" of BUILDDIR/config/dsm_config.h; the entry
# is stale-checked only in builds where it holds (where the code behind the
# violation is compiled), and allowed in every build.
CYCLE_EDGE = "cycle edge: "
ALLOW = [
    ]

# ------------------------------------------------------------------ sources

INCLUDE_RE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*([<"])([^>"]+)[>"]', re.M)
COMMENT_RE = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"'
                        r"|'(?:\\.|[^'\\\n])*'", re.S)
IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def strip_comments(text):
    """C comments out (newlines kept so line numbers stay); strings kept."""
    def repl(m):
        s = m.group(0)
        if s.startswith(('"', "'")):
            return s
        return "\n" * s.count("\n") if s.startswith("/*") else ""
    return COMMENT_RE.sub(repl, text)


def read(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def module_of(rel):
    """src-relative file -> module name (no extension)."""
    return os.path.splitext(rel)[0]


def folder_of(rel):
    return rel.split("/", 1)[0] if "/" in rel else "."


class Graph:
    def __init__(self):
        self.modules = set()
        # (from module, to module) -> list of evidence
        # evidence: (kind, from file, to file, detail)
        self.edges = {}

    def add(self, a, b, ev):
        self.modules.add(a)
        self.modules.add(b)
        if a == b:
            return
        evs = self.edges.setdefault((a, b), [])
        if ev not in evs:
            evs.append(ev)

    def succ(self):
        s = {m: [] for m in self.modules}
        for (a, b) in self.edges:
            s[a].append(b)
        for m in s:
            s[m].sort()
        return s


def source_files(src):
    out = []
    for root, dirs, files in os.walk(src):
        dirs.sort()
        for f in sorted(files):
            if f.endswith((".c", ".h")):
                out.append(os.path.relpath(os.path.join(root, f), src))
    return out


def include_edges(top, build, graph):
    src = os.path.join(top, "src")
    ipath = [os.path.join(top, "include"), os.path.join(src, "runtime"), src,
             os.path.join(build, "config")]
    srcreal = os.path.realpath(src)
    for rel in source_files(src):
        graph.modules.add(module_of(rel))
        path = os.path.join(src, rel)
        text = strip_comments(read(path))
        for m in INCLUDE_RE.finditer(text):
            quote, name = m.group(1), m.group(2)
            dirs = ([os.path.dirname(path)] if quote == '"' else []) + ipath
            for d in dirs:
                cand = os.path.join(d, name)
                if os.path.isfile(cand):
                    real = os.path.realpath(cand)
                    if real.startswith(srcreal + os.sep):
                        to = os.path.relpath(real, srcreal)
                        graph.add(module_of(rel), module_of(to),
                                  ("include", rel, to, None))
                    break


# ------------------------------------------------------------------ objects

def find_objects(top, build):
    """[(object path, src-relative source file)]."""
    bsrc = os.path.join(build, "src")
    src = os.path.join(top, "src")
    found = {}
    for root, dirs, files in os.walk(bsrc):
        dirs.sort()
        in_libs = os.path.basename(root) == ".libs"
        folder = os.path.relpath(os.path.dirname(root) if in_libs else root, bsrc)
        for f in sorted(files):
            if not f.endswith(".o"):
                continue
            base = f[:-2]
            if base.startswith("libdmashmem_la-"):
                base, prog = base[len("libdmashmem_la-"):], "lib"
            elif base.startswith("shmem_launcher-"):
                base, prog = base[len("shmem_launcher-"):], "launcher"
            elif "-" not in base and not in_libs:
                prog = "launcher"   # no per-target flags: plain names
            else:
                continue            # another target's (a test's) object
            key = (prog, folder, base)
            rel = os.path.normpath(os.path.join(folder, base + ".c"))
            if not os.path.isfile(os.path.join(src, rel)):
                continue
            # The PIC object of .libs wins over a static one next to the .lo.
            if key in found and not in_libs:
                continue
            found[key] = (os.path.join(root, f), rel, prog)
    return sorted(found.values(), key=lambda x: x[1])


def nm_symbols(obj, nm):
    """(defined {name: 'call'|'data'}, undefined set)."""
    out = subprocess.run([nm, "-P", obj], check=True, stdout=subprocess.PIPE,
                         universal_newlines=True).stdout
    defined, undef = {}, set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        name, t = parts[0], parts[1]
        if t in ("U", "w", "v"):
            undef.add(name)
        elif t in ("T", "W", "i"):
            defined[name] = "call"
        elif t in ("D", "B", "R", "C", "V", "G", "S", "u"):
            defined[name] = "data"
    return defined, undef


def symbol_edges(top, build, graph, nm):
    objs = find_objects(top, build)
    if not objs:
        sys.stderr.write("layers: no library objects under %s/src (is the "
                         "library built?)\n" % build)
        sys.exit(2)
    table = []
    definer = {"lib": {}, "launcher": {}}
    for obj, rel, prog in objs:
        d, u = nm_symbols(obj, nm)
        table.append((rel, prog, u))
        for name, kind in d.items():
            definer[prog].setdefault(name, (rel, kind))
    # A symbol resolves in its own program first (the launcher links a few
    # library sources itself), then in the other.
    for rel, prog, undef in table:
        other = "launcher" if prog == "lib" else "lib"
        for name in sorted(undef):
            hit = definer[prog].get(name) or definer[other].get(name)
            if hit:
                to, kind = hit
                graph.add(module_of(rel), module_of(to), (kind, rel, to, name))
    return len(objs)


# ------------------------------------------------------------------ rule 1

_header_idents = {}


def header_mentions(top, header, name):
    if header not in _header_idents:
        path = os.path.join(top, "src", header)
        text = strip_comments(read(path)) if os.path.isfile(path) else ""
        _header_idents[header] = set(IDENT_RE.findall(text))
    return name in _header_idents[header]


def rule1(top, graph):
    """[(key, message)]"""
    out = []
    for (a, b), evs in sorted(graph.edges.items()):
        fa, fb = folder_of(a), folder_of(b)
        if fa == fb:
            continue
        for kind, ffrom, fto, detail in evs:
            label = kind if detail is None else "%s %s" % (kind, detail)
            key = "%s -> %s (%s)" % (ffrom, fto, label)
            if fa not in RULES:
                out.append((key, "folder %s is not in the table of "
                            "check-layers.py" % fa))
                continue
            allowed = RULES[fa]
            if fb not in allowed:
                out.append((key, "%s may not use %s" % (fa, fb)))
                continue
            headers = allowed[fb]
            if headers is ANY:
                continue
            if kind == "include":
                ok = fto in headers
            else:
                ok = any(header_mentions(top, h, detail) for h in headers)
            if not ok:
                out.append((key, "%s may use %s only through %s"
                            % (fa, fb, ", ".join(headers))))
    return out


# ------------------------------------------------------------------ rule 2

def tarjan(nodes, succ):
    """Strongly connected components, iteratively."""
    index, low, on, stack, comps = {}, {}, set(), [], []
    counter = 0
    for root in sorted(nodes):
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            v, i = work.pop()
            if i == 0:
                index[v] = low[v] = counter
                counter += 1
                stack.append(v)
                on.add(v)
            recurse = False
            ws = succ[v]
            while i < len(ws):
                w = ws[i]
                i += 1
                if w not in index:
                    work.append((v, i))
                    work.append((w, 0))
                    recurse = True
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            if recurse:
                continue
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                comps.append(sorted(comp))
            if work:
                u = work[-1][0]
                low[u] = min(low[u], low[v])
    return comps


def shortest_path(succ, start, goal, inside):
    prev = {start: None}
    queue = [start]
    for v in queue:
        if v == goal:
            break
        for w in succ[v]:
            if w in inside and w not in prev:
                prev[w] = v
                queue.append(w)
    path = [goal]
    while prev[path[-1]] is not None:
        path.append(prev[path[-1]])
    return path[::-1]


def describe(graph, a, b):
    kind, ffrom, fto, detail = graph.edges[(a, b)][0]
    more = len(graph.edges[(a, b)]) - 1
    s = "%s -> %s (%s%s)" % (ffrom, fto, kind,
                             "" if detail is None else " " + detail)
    return s + (" and %d more" % more if more else "")


def cross_folder_sccs(graph, succ):
    return [c for c in tarjan(graph.modules, succ)
            if len({folder_of(m) for m in c}) > 1]


def rule2(graph, cut):
    """Cycles across folders once the allowed back edges `cut` (module
    pairs) are taken out: [(key, message)]."""
    succ = {m: [w for w in ws if (m, w) not in cut]
            for m, ws in graph.succ().items()}
    out = []
    for comp in cross_folder_sccs(graph, succ):
        inside = set(comp)
        # One cycle through an edge that crosses folders: the shortest one.
        best = None
        for a in comp:
            for b in succ[a]:
                if b in inside and folder_of(a) != folder_of(b):
                    p = [a] + shortest_path(succ, b, a, inside)
                    if best is None or len(p) < len(best):
                        best = p
        lines = [" -> ".join(best)]
        for x, y in zip(best, best[1:]):
            lines.append("    " + describe(graph, x, y))
        lines.append("    every edge across folders inside it (cut enough of "
                     "them to break it; while that is being done, an ALLOW "
                     "entry \"cycle edge: A -> B\" takes the edge A -> B out "
                     "of this check):")
        for (x, y) in sorted(graph.edges):
            if x in inside and y in inside and folder_of(x) != folder_of(y) \
                    and (x, y) not in cut:
                lines.append("      %s -> %s: %s" % (x, y, ", ".join(
                    k if d is None else d
                    for k, _, _, d in graph.edges[(x, y)])))
        out.append(("cycle: " + ", ".join(comp), "\n".join(lines)))
    return out


def cycle_edges_in_use(graph, keys):
    """The "cycle edge: A -> B" keys whose edge exists and lies on a cycle
    across folders of the whole graph."""
    comp_of = {}
    for i, comp in enumerate(cross_folder_sccs(graph, graph.succ())):
        for m in comp:
            comp_of[m] = i
    used = {}
    for key in keys:
        a, _, b = key[len(CYCLE_EDGE):].partition(" -> ")
        if (a, b) in graph.edges and a in comp_of and \
                comp_of.get(b) == comp_of[a]:
            used[key] = (a, b)
    return used


# ------------------------------------------------------------------ main

def load_allow_file(path):
    entries = []
    for line in read(path).splitlines():
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        key, _, reason = s.partition("  # ")
        reason, _, when = reason.partition("  # when: ")
        entries.append((key.strip(), reason.strip(), when.strip() or None))
    return entries


def config_defines(build):
    """Macros #defined in BUILDDIR/config/dsm_config.h."""
    path = os.path.join(build, "config", "dsm_config.h")
    if not os.path.isfile(path):
        return set()
    return set(re.findall(r"^#define[ \t]+(\w+)", read(path), re.M))


def expected_here(when, defines):
    """An ALLOW entry's condition: None (always), "MACRO" or "!MACRO"."""
    if when is None:
        return True
    if when.startswith("!"):
        return when[1:] not in defines
    return when in defines


def main(argv):
    verbose = False
    print_allow = False
    allow = ALLOW
    args = []
    it = iter(argv)
    for a in it:
        if a == "-v":
            verbose = True
        elif a == "--print-allow":
            print_allow = True
        elif a == "--allow-file":
            allow = load_allow_file(next(it))
        elif a.startswith("--allow-file="):
            allow = load_allow_file(a.split("=", 1)[1])
        elif a in ("-h", "--help"):
            print(__doc__)
            return 0
        else:
            args.append(a)
    if len(args) != 2:
        sys.stderr.write("usage: check-layers.py [--allow-file F] [-v] "
                         "SRCDIR BUILDDIR\n")
        return 2
    top, build = args
    nm = os.environ.get("NM", "nm")
    defines = config_defines(build)

    graph = Graph()
    include_edges(top, build, graph)
    nobj = symbol_edges(top, build, graph, nm)

    allowed = {}
    for entry in allow:
        allowed[entry[0]] = entry
    cut = cycle_edges_in_use(graph, [k for k in allowed
                                     if k.startswith(CYCLE_EDGE)])
    seen = set(cut)
    if verbose:
        for key in sorted(cut):
            print("layers: allowed (%s): %s" % (allowed[key][1], key))

    found = [("rule 1", k, m) for k, m in rule1(top, graph)]
    found += [("rule 2", k, m) for k, m in rule2(graph, set(cut.values()))]
    bad = 0
    for rule, key, msg in found:
        if key in allowed:
            seen.add(key)
            if verbose:
                print("layers: allowed (%s): %s" % (allowed[key][1], key))
            continue
        bad += 1
        if rule == "rule 1":
            if print_allow:
                print("    (%r, \"TODO: why, and the fix\")," % key)
                continue
            print("layers: %s not allowed: %s" % (key, msg))
            continue
        print("layers: cycle across folders: %s" % msg)
    for entry in allow:
        key = entry[0]
        when = entry[2] if len(entry) > 2 else None
        if key not in seen and expected_here(when, defines):
            bad += 1
            print("layers: stale ALLOW entry (no longer occurs, remove it): "
                  "%s" % key)
    nedges = sum(len(v) for v in graph.edges.values())
    print("layers: %d modules, %d edges (%d objects), %d known violations "
          "allowed, %d errors" % (len(graph.modules), nedges, nobj, len(seen),
                                  bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
