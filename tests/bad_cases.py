"""Bad-program case files: each starts with `# error: LINE: message` and may say `# xfail: reason`."""

from __future__ import annotations

import os
import re

import pytest


def expectation(path: str) -> tuple[int, str, str | None]:
    """(line, message, xfail reason or None) from a case file's header."""
    with open(path) as f:
        head = f.read().splitlines()[:3]
    m = re.match(r"# error: (\d+): (.*)", head[0])
    xf = next((ln[len("# xfail: "):] for ln in head if ln.startswith("# xfail: ")), None)
    return int(m.group(1)), m.group(2), xf


def cases(folder: str) -> list:
    """One pytest param per case file (named by its stem), strict-xfail where the header says so."""
    out = []
    for name in sorted(f[:-3] for f in os.listdir(folder) if f.endswith(".py")):
        xf = expectation(os.path.join(folder, name + ".py"))[2]
        marks = [pytest.mark.xfail(strict=True, reason=xf)] if xf else []
        out.append(pytest.param(name, marks=marks, id=name))
    return out
