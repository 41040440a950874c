#!/usr/bin/env python3
"""Rewrites the README's stale training-runs rows from ReferenceRuns.ReadmeTableIsCurrent.

Usage (from the repository root, after a build):
    ./build/tests/validation_test --gtest_filter=ReferenceRuns.ReadmeTableIsCurrent \
        | python3 tests/validation/update_readme_table.py

The test prints, for each stale row, the README's line and then the expected one (gtest's
"Which is:" pair); each README line is replaced by its expected line.
"""
import ast
import os
import sys

lines = [l.split("Which is: ", 1)[1] for l in sys.stdin if "Which is: " in l]
if len(lines) % 2:
    sys.exit("update_readme_table: an odd number of 'Which is:' lines; is this the test's output?")
readme = open("README.md", encoding="utf-8").read()
for old, new in zip(lines[0::2], lines[1::2]):
    old, new = ast.literal_eval(old.strip()), ast.literal_eval(new.strip())
    if readme.count(old) != 1:
        sys.exit(f"update_readme_table: README.md does not hold exactly one line {old!r}")
    readme = readme.replace(old, new)
with open("README.md.tmp", "w", encoding="utf-8") as f:
    f.write(readme)
os.replace("README.md.tmp", "README.md")
print(f"{len(lines) // 2} rows updated")
