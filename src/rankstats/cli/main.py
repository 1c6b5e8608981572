"""The parser of the ``rankstats`` command, and its entry point: every error is one line."""

from __future__ import annotations

import argparse
import io
import os
import sys
from collections.abc import Callable, Sequence

import rankstats
from rankstats.cli import compare, evaluate, example, metrics, null, plot
from rankstats.cli.common import EXIT_ERROR, EXIT_USAGE, PROG, CliError, Parser, UsageError

__all__ = ["COMMANDS", "build_parser", "main"]

#: the command modules, in the order of the help; each has ``register(commands)``
COMMANDS = (evaluate, compare, metrics, null, plot, example)


def build_parser() -> argparse.ArgumentParser:
    """Build the parser of the ``rankstats`` command and its subcommands."""
    parser = Parser(
        prog=PROG,
        description="Rank-based evaluation metrics with exact null models.",
        epilog=f"Run '{PROG} COMMAND --help' for the options of a command.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {rankstats.__version__}")
    commands = parser.add_subparsers(title="commands", metavar="COMMAND", dest="command")
    for module in COMMANDS:
        module.register(commands)
    return parser


def _fail(message: str) -> int:
    sys.stderr.write(f"{PROG}: error: {' '.join(message.split())}\n")
    return EXIT_ERROR


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``rankstats`` command.

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments, without the program name; ``sys.argv[1:]`` by default.

    Returns
    -------
    int
        The exit status: 0 on success, 1 for errors in the input, 2 for usage errors.
    """
    if isinstance(sys.stdout, io.TextIOWrapper):
        sys.stdout.reconfigure(errors="replace")  # e.g. '∞' on a console that cannot show it
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    handler: Callable[[argparse.Namespace], int] = args.handler
    if os.environ.get("RANKSTATS_DEBUG"):
        return handler(args)
    try:
        return handler(args)
    except UsageError as error:  # as argparse reports its own: the subcommand, and --help
        sys.stderr.write(
            f"{PROG} {args.command}: error: {' '.join(str(error).split())} "
            f"(see '{PROG} {args.command} --help')\n"
        )
        return EXIT_USAGE
    except (CliError, ValueError, TypeError, ImportError) as error:
        return _fail(str(error))  # rankstats' own errors (RankFileError too) are ValueErrors
    except BrokenPipeError:  # e.g. piped into head: stop quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_ERROR
    except OSError as error:
        where = f"{error.filename}: " if error.filename else ""
        return _fail(f"{where}{error.strerror or error}")
    except KeyboardInterrupt:
        sys.stderr.write(f"\n{PROG}: interrupted\n")
        return 130
    except MemoryError:
        return _fail("out of memory; try a smaller input or fewer --samples")
    except Exception as error:  # a bug: still one line, with a way to see the traceback
        return _fail(
            f"internal error ({type(error).__name__}: {error}); please report it, and set "
            f"RANKSTATS_DEBUG=1 to see the traceback"
        )
