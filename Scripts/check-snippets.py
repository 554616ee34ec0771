#!/usr/bin/env python3
"""Checks that the documentation shows each snippet exactly as CI compiles and runs it, and that
every other Swift sample says what it is.

    python3 Scripts/check-snippets.py

For every `Snippets/*.swift`, the lines between `// snippet.show` and `// snippet.end` must appear,
byte for byte, as a whole ```swift code block in README.md or in a DocC article
(`Sources/*/*.docc/**/*.md`), so a sample cannot drift from the code that builds. A code block may
start with the snippet's `import` lines, which the snippet keeps above `snippet.show`.

Every other ```swift block in those files is one of:
- an excerpt of a file CI builds: its first line is `// From <path>` and the rest appears, byte for
  byte, in that file;
- a fragment, which a newcomer cannot copy as it is: its first line starts with `// Fragment` and
  says why (an excerpt, app code for UIKit, names the app defines).
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


def documents():
    paths = [os.path.join(ROOT, "README.md")]
    paths += glob.glob(os.path.join(ROOT, "Sources", "*", "*.docc", "**", "*.md"), recursive=True)
    return sorted(paths)


def raw_blocks():
    """(path, line, text) of every ```swift block."""
    for path in documents():
        text = open(path, encoding="utf-8").read()
        for match in re.finditer(r"^```swift\n(.*?)^```$", text, re.S | re.M):
            yield path, text[: match.start()].count("\n") + 1, match.group(1).strip("\n")


def without_imports(block):
    lines = block.split("\n")
    while lines and (lines[0].startswith("import ") or not lines[0]):
        lines.pop(0)
    return "\n".join(lines)


def unmarked_blocks(snippet_code):
    """Blocks that are no snippet, no checked excerpt and no marked fragment, and excerpts that
    differ from their file."""
    problems = []
    for path, line, block in raw_blocks():
        where = f"{os.path.relpath(path, ROOT)}:{line}"
        first = block.split("\n", 1)[0]
        if without_imports(block) in snippet_code or first.startswith("// Fragment"):
            continue
        if first.startswith("// From "):
            source = os.path.join(ROOT, first[len("// From ") :].strip())
            rest = block.split("\n", 1)[1] if "\n" in block else ""
            if not os.path.isfile(source):
                problems.append(f"{where}: the excerpt's file {first[len('// From '):]} does not exist")
            elif rest not in open(source, encoding="utf-8").read():
                problems.append(f"{where}: the excerpt differs from {first[len('// From '):]}")
            continue
        problems.append(
            f"{where}: a swift code block that is no snippet: make it one (Snippets/), or start it with "
            "`// From <file CI builds>` or `// Fragment: <why it does not compile as written>`"
        )
    return problems


def main():
    blocks = {without_imports(block) for _, _, block in raw_blocks()}
    missing = []
    snippets = sorted(glob.glob(os.path.join(ROOT, "Snippets", "*.swift")))
    for path in snippets:
        code = shown(path)
        if code is None:
            missing.append(f"{os.path.relpath(path, ROOT)}: no // snippet.show … // snippet.end section")
        elif code not in blocks:
            missing.append(f"{os.path.relpath(path, ROOT)}: its shown code is in no README or article code block")
    snippet_code = {shown(path) for path in snippets} - {None}
    missing += unmarked_blocks(snippet_code)
    if missing:
        print("error: documentation and snippets differ:", file=sys.stderr)
        for line in missing:
            print("  " + line, file=sys.stderr)
        return 1
    print(
        f"{len(snippets)} snippets shown in the documentation exactly as CI builds them; "
        "every other Swift sample is a checked excerpt or a marked fragment"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
