#!/usr/bin/env python3
"""README.md's documented commands print what the README says (issue 25):
every ```console block line `$ build/schedext ...` or `$ build/kubectl-schedext
...` is run from the repository root (with the earlier `$ VAR=...` assignments
of the file, and `\\` continuation lines joined) and its output compared
with the lines after it. In the expected text a line `...` stands for the
rest of the output, and `...` inside a line for any text. The curl examples
are run against a server by test_server.py (test_readme_examples)."""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sxtest import BIN, ROOT, Checker  # noqa: E402

T = Checker("test_readme")
ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def console_blocks(text):
    """Each ```console block as a list of (command, expected lines)."""
    blocks = []
    for block in re.findall(r"```console\n(.*?)```", text, re.S):
        cmds, lines = [], block.splitlines()
        i = 0
        while i < len(lines):
            line = lines[i]
            if line.startswith("$ "):
                cmd = line[2:]
                while cmd.endswith("\\") and i + 1 < len(lines):
                    i += 1
                    cmd = cmd[:-1] + " " + lines[i].strip()
                cmds.append([cmd, []])
            elif cmds:
                cmds[-1][1].append(line)
            i += 1
        blocks.append(cmds)
    return blocks


def matches(got, want):
    """got: the output lines; want: the README's, with `...` wildcards."""
    for i, w in enumerate(want):
        if w == "...":
            return True
        if i >= len(got):
            return False
        pat = "^" + ".*".join(re.escape(p) for p in w.split("...")) + "$"
        if not re.match(pat, got[i].rstrip()):
            return False
    return len(got) == len(want)


def main():
    if not os.path.exists(BIN):
        print("SKIP: %s not built" % BIN)
        return 0
    with open(os.path.join(ROOT, "README.md")) as f:
        blocks = console_blocks(f.read())
    ran, env = 0, []  # assignments hold for the rest of the file, as in one shell
    for cmds in blocks:
        for cmd, want in cmds:
            if ASSIGN.match(cmd):
                env.append(cmd)
                continue
            if not cmd.startswith(("build/schedext ", "build/kubectl-schedext ")):
                continue
            script = "; ".join(env + [cmd])
            r = subprocess.run(["bash", "-c", script], cwd=ROOT, capture_output=True, timeout=120)
            got = r.stdout.decode().rstrip("\n").split("\n")
            want = [w.rstrip() for w in want]
            while want and not want[-1]:
                want.pop()
            T.eq(r.returncode, 0, "README: %s: exit code" % cmd)
            T.check(matches(got, want), "README: %s: output" % cmd,
                    "\n--- README\n%s\n--- program\n%s" % ("\n".join(want), "\n".join(got)))
            ran += 1
    T.check(ran >= 5, "README commands found and run", ran)
    print("ran %d README commands" % ran)
    T.done()


if __name__ == "__main__":
    main()
