#!/usr/bin/env python3
"""Fails when a plugin's hook function is not named <hook>_<plugin>.

Each plugins/<plugin>.c ends with one descriptor
`const struct sx_plugin sx_plugin_<plugin> = { .name = ..., .<hook> = fn, ... }`
(STYLE.md: methods `<hook>_<class>`, as Linux's sched classes). Every slot
but .name must hold `<hook>_<plugin>`; .events may also be the shared table
`sx_events_<plugin>` (defined in another file, hence the sx_ prefix).
"""
import glob
import re
import sys

DESC = re.compile(r"const struct sx_plugin sx_plugin_(\w+)\s*=\s*\{(.*?)\n\};", re.S)
SLOT = re.compile(r"\.(\w+)\s*=\s*([A-Za-z_]\w*)\s*,")


def main():
    errors, n = [], 0
    for f in sorted(glob.glob("plugins/*.c")):
        for m in DESC.finditer(open(f, encoding="utf-8").read()):
            plugin, body = m.group(1), m.group(2) + ","
            n += 1
            for hook, fn in SLOT.findall(body):
                want = f"{hook}_{plugin}"
                if hook == "name" or fn == want or (hook == "events" and fn == "sx_" + want):
                    continue
                errors.append(f"{f}: .{hook} = {fn}, want {want}")
    for e in errors:
        print("check_plugins: " + e, file=sys.stderr)
    if errors or n == 0:
        sys.exit(1)
    print(f"check_plugins: {n} plugins, every hook named <hook>_<plugin>")


if __name__ == "__main__":
    main()
