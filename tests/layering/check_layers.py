#!/usr/bin/env python3
"""Fails when a file includes upward or reaches into another part's private
headers, by the layers in layers.txt. Usage: check_layers.py REPO_ROOT"""
import os
import re
import sys

root = sys.argv[1]
here = os.path.dirname(os.path.abspath(__file__))

uses, public = {}, {}
for lineno, line in enumerate(open(os.path.join(here, "layers.txt")), 1):
    line = line.split("#", 1)[0].strip()
    if not line:
        continue
    name, _, rest = line.partition(":")
    deps, _, headers = rest.partition("|")
    uses[name.strip()] = deps.split()
    if headers.split():  # "none": every header of the part is private
        public[name.strip()] = set(headers.split()) - {"none"}
order = list(uses)
for part, deps in uses.items():
    for dep in deps:
        if dep not in uses or order.index(dep) >= order.index(part):
            sys.exit(f"layers.txt: {part} uses {dep}, which is not a lower part")


def reach(part):
    """Every part `part` may include: itself and everything below it."""
    seen, todo = {part}, [part]
    while todo:
        for dep in uses[todo.pop()]:
            if dep not in seen:
                seen.add(dep)
                todo.append(dep)
    return seen


def part_of_header(path):
    """(part, header name within the part) of a repository path, or None."""
    p = path.split("/")
    if p[0] == "src" and len(p) > 2:
        return p[1], p[-1]
    if p[0] == "include" and p[1] == "ps":
        return "ps", p[-1]
    return None


def includer_part(path):
    """The part whose rules a file follows; None: it may include anything."""
    p = path.split("/")
    if p[0] == "src":
        return p[1]
    if p[0] == "include":
        return "ps"
    return None  # tests, bench and tools sit above every part


def resolve(path, inc):
    for base in (os.path.dirname(path), "src", "include", "tests"):
        candidate = os.path.normpath(os.path.join(base, inc))
        if os.path.exists(os.path.join(root, candidate)):
            return candidate
    return None


errors = []
for top in ("src", "include", "tests", "bench", "tools"):
    for dirpath, dirs, files in os.walk(os.path.join(root, top)):
        dirs.sort()
        for f in sorted(files):
            if not f.endswith((".h", ".cpp")):
                continue
            path = os.path.relpath(os.path.join(dirpath, f), root)
            mine = includer_part(path)
            for n, line in enumerate(open(os.path.join(root, path), errors="replace"), 1):
                m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
                if not m:
                    continue
                target = resolve(path, m.group(1))
                if target is None:
                    continue  # a system or generated header
                if path.startswith("include/") and target.startswith("src/"):
                    errors.append(f"{path}:{n}: the public API includes {target}")
                owner = part_of_header(target)
                if mine is None or owner is None or owner[0] == mine:
                    continue
                if owner[0] not in reach(mine):
                    errors.append(f"{path}:{n}: {mine} includes {target}, of the higher "
                                  f"or unrelated part {owner[0]}")
                elif owner[0] in public and owner[1] not in public[owner[0]] \
                        and not target.startswith("include/"):
                    errors.append(f"{path}:{n}: {target} is private to {owner[0]}")

for e in errors:
    print(e)
print(f"check_layers: {len(errors)} bad include(s)")
sys.exit(1 if errors else 0)
