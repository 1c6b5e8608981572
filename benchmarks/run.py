"""Run every benchmark in this folder and print one table of ratios measured in one run.

Usage: ``python benchmarks/run.py [name-filter]``.

Each ``bench_*.py`` module beside this file defines ``run() -> list[Row]``; a row names the case,
the time rankstats took, the baseline it is compared against (a plain numpy pass, or PyKEEN when it
is installed) and that baseline's time. Ratios, not absolute times, are what carry over between
machines; the absolute figures are printed next to the target they are checked against.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _timing import Row  # noqa: E402


def _load(path: Path) -> list[Row]:
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    rows: list[Row] = module.run()
    return rows


def main(argv: list[str]) -> int:
    """Run the benchmarks whose file name contains the optional filter and print the table."""
    pattern = argv[1] if len(argv) > 1 else ""
    rows: list[Row] = []
    for path in sorted(HERE.glob("bench_*.py")):
        if pattern in path.stem:
            print(f"running {path.stem} ...", file=sys.stderr, flush=True)
            rows.extend(_load(path))
    header = ("case", "rankstats", "baseline", "baseline time", "ratio", "target", "met")
    table = [header] + [row.cells() for row in rows]
    widths = [max(len(line[i]) for line in table) for i in range(len(header))]
    for line in table:
        print("  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=False)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
