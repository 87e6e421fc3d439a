#!/usr/bin/env python3
"""Figures of the source's shape (issue 15's closing table).

Prints: production functions over 80 lines, lines in src/commands/,
imports between command files, unit tests in commands/ and cli/.
Test code (`#[cfg(test)]` modules and files named tests.rs) is not
production code. Run from the repository root: python3 bench/shape.py
"""
import os
import re
import sys

FN = re.compile(r'^\s*(pub(\([^)]*\))?\s+)?(const\s+)?(async\s+)?(unsafe\s+)?fn\s+(\w+)')


def rust_files(root):
    for d, _, files in os.walk(root):
        for f in sorted(files):
            if f.endswith('.rs'):
                yield os.path.join(d, f)


def strip_strings(line):
    line = re.sub(r'"(\\.|[^"\\])*"', '""', line)
    line = re.sub(r"'(\\.|[^'\\])'", "''", line)
    return line.split('//')[0]


def production_lines(path):
    """Lines of the file outside #[cfg(test)] items."""
    lines = open(path, encoding='utf-8').read().split('\n')
    if os.path.basename(path) == 'tests.rs':
        return []
    out, i = [], 0
    while i < len(lines):
        if lines[i].strip() == '#[cfg(test)]':
            # skip the next item by brace depth
            j, depth, opened = i + 1, 0, False
            while j < len(lines):
                s = strip_strings(lines[j])
                depth += s.count('{') - s.count('}')
                if '{' in s:
                    opened = True
                if opened and depth <= 0:
                    break
                if not opened and s.rstrip().endswith(';'):
                    break
                j += 1
            i = j + 1
            continue
        out.append((i + 1, lines[i]))
        i += 1
    return out


def long_functions(path, limit):
    lines = production_lines(path)
    found = []
    k = 0
    while k < len(lines):
        no, text = lines[k]
        m = FN.match(text)
        if m and not strip_strings(text).rstrip().endswith(';'):
            depth, opened, j = 0, False, k
            while j < len(lines):
                s = strip_strings(lines[j][1])
                depth += s.count('{') - s.count('}')
                if '{' in s:
                    opened = True
                if opened and depth <= 0:
                    break
                j += 1
            length = j - k + 1
            if length > limit:
                found.append((path, m.group(6), length))
            k += 1
            continue
        k += 1
    return found


def main():
    limit = 80
    longs = []
    for p in rust_files('src'):
        longs.extend(long_functions(p, limit))
    print(f'production functions over {limit} lines: {len(longs)}')
    for p, name, n in sorted(longs, key=lambda x: -x[2]):
        print(f'  {n:4} {p}::{name}')
    total = sum(len(open(p).read().split(chr(10))) - 1 for p in rust_files('src/commands'))
    print(f'lines in src/commands/: {total}')
    cmds = {os.path.basename(p)[:-3] for p in rust_files('src/commands')} - {'mod'}
    cross = []
    for p in rust_files('src/commands'):
        me = os.path.basename(p)[:-3]
        for no, line in production_lines(p):
            for other in re.findall(r'(?:super|crate::commands)::(\w+)', line):
                if other in cmds and other != me:
                    cross.append(f'{p}:{no} -> {other}')
    print(f'imports between command files: {len(cross)}')
    for c in cross:
        print('  ' + c)
    for d in ('src/commands', 'src/cli'):
        n = sum(len(re.findall(r'#\[test\]', open(p).read())) for p in rust_files(d))
        print(f'unit tests in {d}/: {n}')


if __name__ == '__main__':
    sys.exit(main())
