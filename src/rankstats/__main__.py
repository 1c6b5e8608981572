"""Run the ``rankstats`` command line as ``python -m rankstats``."""

from rankstats.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
