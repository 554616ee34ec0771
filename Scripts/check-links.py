#!/usr/bin/env python3
"""Checks that every relative link in README.md and in the DocC articles resolves to a file.

    python3 Scripts/check-links.py

Looks at Markdown links `[text](target)` outside code blocks and code spans, in README.md and
every `Sources/*/*.docc/**/*.md`. Web links (`scheme:`), in-page anchors (`#…`) and DocC links
(`<doc:…>`, double-backtick symbols) are not files and are skipped; a `#fragment` after a path is
ignored. Exit status 1 lists each broken link as `file:line: target`.
"""
import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LINK = re.compile(r"\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
CODE_SPAN = re.compile(r"`+[^`]*`+")


def documents():
    yield os.path.join(ROOT, "README.md")
    yield from sorted(glob.glob(os.path.join(ROOT, "Sources", "*", "*.docc", "**", "*.md"), recursive=True))


def links(path):
    """(line number, target) of each Markdown link outside fenced code blocks and code spans."""
    fence = None
    with open(path, encoding="utf-8") as text:
        for number, line in enumerate(text, 1):
            stripped = line.lstrip()
            marker = re.match(r"(`{3,}|~{3,})", stripped)
            if marker:
                if fence is None:
                    fence = marker.group(1)[0] * len(marker.group(1))
                elif stripped.startswith(fence):
                    fence = None
                continue
            if fence is not None:
                continue
            for match in LINK.finditer(CODE_SPAN.sub("", line)):
                yield number, match.group(1)


def main():
    broken, checked = [], 0
    for path in documents():
        for number, target in links(path):
            if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", target) or target.startswith("#"):
                continue
            checked += 1
            relative = target.split("#", 1)[0]
            resolved = os.path.normpath(os.path.join(os.path.dirname(path), relative))
            if not resolved.startswith(ROOT + os.sep) or not os.path.exists(resolved):
                broken.append(f"{os.path.relpath(path, ROOT)}:{number}: {target}")
    if broken:
        print("error: relative links that resolve to no file in the repository:", file=sys.stderr)
        for line in broken:
            print("  " + line, file=sys.stderr)
        return 1
    print(f"{checked} relative links checked in README.md and the DocC articles: all resolve")
    return 0


if __name__ == "__main__":
    sys.exit(main())
