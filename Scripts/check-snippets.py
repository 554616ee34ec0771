#!/usr/bin/env python3
"""Checks that the documentation shows each snippet exactly as CI compiles and runs it.

    python3 Scripts/check-snippets.py

For every `Snippets/*.swift`, the lines between `// snippet.show` and `// snippet.end` must appear,
byte for byte, as a whole ```swift code block in README.md or in a DocC article
(`Sources/*/*.docc/**/*.md`), so a sample cannot drift from the code that builds. A code block may
start with the snippet's `import` lines, which the snippet keeps above `snippet.show`.
"""
import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def shown(path):
    text = open(path, encoding="utf-8").read()
    match = re.search(r"^// snippet\.show\n(.*?)^// snippet\.end$", text, re.S | re.M)
    return match.group(1).strip("\n") if match else None


def code_blocks():
    paths = [os.path.join(ROOT, "README.md")]
    paths += glob.glob(os.path.join(ROOT, "Sources", "*", "*.docc", "**", "*.md"), recursive=True)
    for path in paths:
        text = open(path, encoding="utf-8").read()
        for block in re.findall(r"^```swift\n(.*?)^```$", text, re.S | re.M):
            lines = block.strip("\n").split("\n")
            while lines and (lines[0].startswith("import ") or not lines[0]):
                lines.pop(0)
            yield "\n".join(lines)


def main():
    blocks = set(code_blocks())
    missing = []
    snippets = sorted(glob.glob(os.path.join(ROOT, "Snippets", "*.swift")))
    for path in snippets:
        code = shown(path)
        if code is None:
            missing.append(f"{os.path.relpath(path, ROOT)}: no // snippet.show … // snippet.end section")
        elif code not in blocks:
            missing.append(f"{os.path.relpath(path, ROOT)}: its shown code is in no README or article code block")
    if missing:
        print("error: documentation and snippets differ:", file=sys.stderr)
        for line in missing:
            print("  " + line, file=sys.stderr)
        return 1
    print(f"{len(snippets)} snippets shown in the documentation exactly as CI builds them")
    return 0


if __name__ == "__main__":
    sys.exit(main())
