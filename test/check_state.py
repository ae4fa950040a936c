#!/usr/bin/env python3
"""Fails on mutable state that outlives a call in the plugin and framework layers.

A plugin or framework file keeps what it needs in the instance its init
made or in the profile's handle (include/schedext/handle.h), never in a
variable every profile shares. This check reads every .c and .h under the
folders of LAYERS and reports each variable that is

  - declared at file scope and not const (static or not), or
  - declared `static` inside a function and not const,

thread-local ones included (_Thread_local, thread_local, __thread). A
variable counts as const when the object itself is: `const T x`,
`T *const p`, `const char *const names[]`; `const char *names[]` (an
array of pointers to const) and `const T *p` (a pointer that may be
re-aimed) do not. Declarations only (extern), typedefs, tag definitions
and function prototypes are not variables.

A status made with SX_STATUS_STATIC (status.h) counts as const: it is
marked shared, and sx_status_free and the runtime never write or free it;
the hook signatures only make it non-const in C.

What truly has to be process-wide is listed in ALLOWED with the reason.
The lexer is deliberately simple (comments, strings, character literals,
preprocessor lines with continuations, brace/paren nesting); it is not a
C parser, and the code it reads is ours.
"""
import os
import re
import sys

LAYERS = ("plugins", os.path.join("src", "framework"), os.path.join("src", "dra"),
          os.path.join("src", "queue"))

# (file, variable) -> why it must be process-wide. "*" covers a whole file.
ALLOWED = {
    # The metrics registry: one set of histograms and counters per process,
    # as upstream's legacyregistry (k8s.io/component-base/metrics).
    ("src/framework/framework_metrics.c", "*"): "metrics registry",
    # Filter/Score evaluation counts kept per thread and published once per
    # chunk into that registry (framework_int.h).
    ("src/framework/framework.c", "sx__tl_evals"): "per-thread metric counts",
    ("src/framework/framework.c", "sx__tl_evals_used"): "per-thread metric counts",
    ("src/framework/framework.c", "tl_depth"): "per-thread metric counts",
    # The status returned when a status cannot be allocated: it must exist
    # without allocating; never written (status.c).
    ("src/framework/status.c", "oom_reason"): "out-of-memory status",
    ("src/framework/status.c", "oom"): "out-of-memory status",
    # Test hook of the allocation-failure sweep (sx_status_fail_next_allocs).
    ("src/framework/status.c", "fail_next"): "fail-next-allocation test hook",
    # curl_global_init is process-wide by libcurl's own contract.
    ("src/framework/extender_client.c", "curl_once"): "libcurl global init",
    # NodeResourcesFit's shared rejection statuses, SX_STATUS_STATIC each
    # (through FIT_ROW), as the statuses above.
    ("plugins/node_resources_fit.c", "fit_rejected"): "static statuses",
}

NOT_VARIABLES = {"typedef", "extern", "_Static_assert", "static_assert"}


def strip(src):
    """Source without comments, literals and preprocessor lines; newlines kept."""
    out, i, n = [], 0, len(src)
    at_line_start = True
    while i < n:
        c = src[i]
        if at_line_start and c == "#":
            while i < n and src[i] != "\n":  # a directive, with its continuations
                if src[i] == "\\" and i + 1 < n and src[i + 1] == "\n":
                    out.append("\n")
                    i += 2
                    continue
                i += 1
            continue
        if src.startswith("/*", i):
            j = src.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * src.count("\n", i, j) or " ")
            i = j
            continue
        if src.startswith("//", i):
            while i < n and src[i] != "\n":
                i += 1
            continue
        if c in "\"'":
            j = i + 1
            while j < n and src[j] != c:
                j += 2 if src[j] == "\\" else 1
            out.append(c + c)  # an empty literal keeps the token
            i = j + 1
            continue
        if c == "\n":
            at_line_start = True
        elif not c.isspace():
            at_line_start = False
        out.append(c)
        i += 1
    return "".join(out)


def split_top(text, sep=","):
    """Splits text at sep outside (), [] and {}."""
    parts, depth, cur = [], 0, []
    for c in text:
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        if c == sep and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(c)
    parts.append("".join(cur))
    return parts


IDENT = re.compile(r"[A-Za-z_]\w*")
QUALIFIERS = {"const", "volatile", "restrict", "_Atomic", "static", "register", "inline",
              "_Noreturn", "_Thread_local", "thread_local", "__thread", "unsigned", "signed",
              "struct", "union", "enum", "__attribute__", "_Alignas"}


def declarator_name(decl):
    """(name, object is const, is a function) of one declarator, e.g. `*const p[3]`."""
    decl = decl.split("=", 1)[0].strip()
    # A function pointer names itself inside the first parenthesis: (*const fp)(...)
    m = re.match(r"^([^()]*)\(\s*(\*[^()]*)\)\s*\(", decl)
    if m:
        inner = m.group(2)
        name = IDENT.findall(inner.replace("const", " "))
        stars = inner.rsplit("*", 1)[1]
        return (name[-1] if name else None), "const" in stars.split(), False
    m = re.match(r"^(.*?)([A-Za-z_]\w*)\s*\(", decl)
    if m and "[" not in m.group(1):
        return m.group(2), True, True  # a function prototype
    head = decl.split("[", 1)[0]
    names = [t for t in IDENT.findall(head) if t not in QUALIFIERS]
    name = names[-1] if names else None
    if "*" in head:
        after = head.rsplit("*", 1)[1]
        return name, "const" in after.split(), False
    return name, None, False  # const-ness is the base type's


def classify(stmt):
    """The variables a declaration statement defines: [(name, is_const)]."""
    stmt = " ".join(stmt.split())
    if not stmt:
        return []
    words = IDENT.findall(stmt.split("=", 1)[0])
    if not words or words[0] in NOT_VARIABLES or NOT_VARIABLES & set(words[:2]):
        return []
    # Brace bodies of tags are kept as {}: `struct s { ... } v` -> `struct s {} v`.
    body, prev = stmt, None
    while body != prev:  # innermost first, then their parents
        prev, body = body, re.sub(r"\{[^{}]*\}", "\0", body)
    body = body.replace("\0", "{}")
    if re.fullmatch(r"(static\s+)?(struct|union|enum)\s*\w*\s*(\{\})?", body.strip()):
        return []  # a tag declared or defined, without a variable
    decls = split_top(body)
    first = decls[0]
    # Base specifiers: up to the first declarator's name or its '*'/'('.
    m = re.match(r"^((?:(?:struct|union|enum)\s+\w*\s*(?:\{\})?\s*|[A-Za-z_]\w*\s+"
                 r"|\w+\s*\([^()]*\)\s*)+?)"
                 r"(?=[*(]|[A-Za-z_]\w*\s*(?:[\[=,;]|$))", first)
    base = m.group(1) if m else ""
    base_const = "const" in IDENT.findall(base)
    out = []
    for i, d in enumerate(decls):
        d = d[len(base):] if i == 0 else d
        name, const, is_fn = declarator_name(d)
        if is_fn or not name:
            continue
        if "SX_STATUS_STATIC" in stmt:
            const = True
        out.append((name, base_const if const is None else const))
    return out


def matching(text, i):
    """Index just past the brace group opening at text[i]."""
    depth = 0
    for j in range(i, len(text)):
        if text[j] == "{":
            depth += 1
        elif text[j] == "}":
            depth -= 1
            if depth == 0:
                return j + 1
    return len(text)


def statement_end(text, i):
    """Index of the ';' ending the statement starting at i (outside nesting)."""
    depth = 0
    for j in range(i, len(text)):
        c = text[j]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == ";" and depth == 0:
            return j
    return len(text)


def static_locals(text, lo, hi):
    """(offset, statement) of each `static` declaration in the body text[lo:hi]."""
    out = []
    for m in re.finditer(r"\bstatic\b", text[lo:hi]):
        at = lo + m.start()
        before = text[lo:at].rstrip()
        if before and before[-1] not in "{};":
            continue  # not at a statement's start
        end = statement_end(text, at)
        out.append((at, text[at:end]))
    return out


def scan(text):
    """(offset, statement, in a function) of every declaration to judge."""
    found, i, n = [], 0, len(text)
    start, stmt, paren = None, [], 0
    while i < n:
        c = text[i]
        if c == "(":
            paren += 1
        elif c == ")":
            paren -= 1
        if c == "{" and paren == 0:
            head = "".join(stmt).strip()
            end = matching(text, i)
            if head.endswith(")") and "=" not in head:
                found += [(at, st, True) for at, st in static_locals(text, i + 1, end - 1)]
                stmt, start = [], None
            else:
                stmt.append(text[i:end])  # a tag body or an initializer
            i = end
            continue
        if c == ";" and paren == 0:
            found.append((start if start is not None else i, "".join(stmt), False))
            stmt, start = [], None
        else:
            if start is None and not c.isspace():
                start = i
            stmt.append(c)
        i += 1
    return found


def check_file(path, used=None):
    with open(path, encoding="utf-8", errors="replace") as fh:
        text = strip(fh.read())
    problems = []
    for at, stmt, local in scan(text):
        line = text.count("\n", 0, at) + 1
        for name, const in classify(stmt):
            if const:
                continue
            key = (path, "*") if (path, "*") in ALLOWED else (path, name)
            if key in ALLOWED:
                if used is not None:
                    used.add(key)
                continue
            where = "static local" if local else "file-scope variable"
            problems.append(f"{path}:{line}: mutable {where} '{name}': keep it in the plugin "
                            "instance or the handle (handle.h), or allow it in test/check_state.py")
    return problems


def main():
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    os.chdir(root)
    files = []
    for top in LAYERS:
        for d, _, names in os.walk(top):
            files += [os.path.join(d, n) for n in names if n.endswith((".c", ".h"))]
    problems, used = [], set()
    for f in sorted(files):
        problems += check_file(f, used)
    for key in sorted(set(ALLOWED) - used):  # the list stays what is needed
        problems.append(f"test/check_state.py: ALLOWED names {key[0]} {key[1]}, which holds "
                        "no such mutable variable")
    for p in problems:
        print("check_state: " + p, file=sys.stderr)
    if problems:
        sys.exit(1)
    print(f"check_state: {len(files)} files, no mutable file-scope or static local state "
          f"beyond {len(ALLOWED)} allowed")


if __name__ == "__main__":
    main()
