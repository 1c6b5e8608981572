"""``rankstats example``: print the bundled example file, a template for your own."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from rankstats.io.read import example_source

__all__ = ["register"]


def run(args: argparse.Namespace) -> int:
    """Print the bundled example."""
    data, _ = example_source()
    sys.stdout.write(data.decode("utf-8"))
    return 0


def register(commands: Any) -> None:
    """Add the ``example`` command to the subparsers ``commands``."""
    parser = commands.add_parser(
        "example",
        help="print the bundled example file",
        description="Print the bundled example input (TransE ranks on Nations) as CSV.",
    )
    parser.set_defaults(handler=run)
