"""Tests of the documentation: its examples run, its command output is current, and it builds.

The examples (``>>>`` lines) of every page and the output shown after ``$ rankstats ...`` in
console blocks are checked against the code on every test run, with or without Sphinx. The full
Sphinx build with warnings as errors needs Sphinx and matplotlib and takes several seconds; it is
skipped without them, and ``-k "not sphinx"`` deselects it.
"""

from __future__ import annotations

import contextlib
import doctest
import io
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from rankstats.cli import main

DOCS = Path(__file__).resolve().parent.parent / "docs"
PAGES = sorted(path for path in DOCS.rglob("*.rst") if "_build" not in path.parts)
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def page_id(path: Path) -> str:
    return str(path.relative_to(DOCS))


def test_there_are_pages() -> None:
    assert {"index.rst", "getting-started.rst", "metrics.rst", "api.rst", "cli.rst"} <= {
        page_id(path) for path in PAGES
    }


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_examples_run(page: Path) -> None:
    failures, _ = doctest.testfile(
        str(page), module_relative=False, optionflags=FLAGS, verbose=False, report=True
    )
    assert failures == 0, f"{failures} example(s) in {page_id(page)} failed; see the output above"


def console_examples() -> list[tuple[str, str, str]]:
    """Every ``$ rankstats ...`` line of a console block that shows output, with that output."""
    found = []
    for page in PAGES:
        blocks = re.findall(
            r"^\.\. code-block:: console\n\n((?:(?:   .*)?\n)+)", page.read_text(), flags=re.M
        )
        for block in blocks:
            lines = [line[3:] for line in block.splitlines()]
            for index, line in enumerate(lines):
                if not line.startswith("$ rankstats "):
                    continue
                output = []
                for following in lines[index + 1 :]:
                    if following.startswith("$ "):
                        break
                    output.append(following)
                text = "\n".join(output).strip()
                if text:
                    found.append((page_id(page), line[2:], text + "\n"))
    return found


#: the files the console examples read, besides the bundled example
EXAMPLE_FILES = {
    # cli.rst shows the error for a rank larger than its candidate count at line 7
    "ranks.csv": "rank,num_candidates\n" + "1,14\n" * 5 + "15,14\n",
}


@pytest.mark.parametrize(("page", "command", "output"), console_examples())
def test_console_output_is_current(
    page: str, command: str, output: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Run the command of the example (in-process) and compare with the output shown."""
    for name, text in EXAMPLE_FILES.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    args = shlex.split(command.split("#")[0])[1:]
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        main(args)
    checker = doctest.OutputChecker()
    assert checker.check_output(output, out.getvalue(), FLAGS), (
        f"{page}: the output of '{command}' has changed:\n{out.getvalue()}"
    )


@pytest.fixture(scope="module")
def built_docs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Build the documentation once, with warnings as errors; the HTML output directory."""
    pytest.importorskip("sphinx")
    pytest.importorskip("matplotlib")
    tmp_path = tmp_path_factory.mktemp("docs")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "sphinx",
            "-W",
            "--keep-going",
            "-q",
            "-b",
            "html",
            "-d",
            str(tmp_path / "doctrees"),
            str(DOCS),
            str(tmp_path / "html"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "MPLBACKEND": "Agg"},
    )
    assert result.returncode == 0, result.stderr
    return tmp_path / "html"


def test_sphinx_build_with_warnings_as_errors(built_docs: Path) -> None:
    html = (built_docs / "metrics.html").read_text(encoding="utf-8")
    assert "InverseHarmonicMeanRank" in html  # the generated metrics table
    assert (built_docs / "_images" / "null_mrr.png").exists()  # the generated figure


def test_sphinx_no_page_has_an_email_link(built_docs: Path) -> None:
    """``Hits@10`` written as plain text renders as an e-mail address; it must be a literal."""
    for page in built_docs.rglob("*.html"):
        assert "mailto:" not in page.read_text(encoding="utf-8"), page.name


def test_sphinx_every_public_name_is_documented(built_docs: Path) -> None:
    """Every name of ``rankstats.__all__`` is in the API reference, at the top level or where
    it is defined."""
    from sphinx.util.inventory import InventoryFile

    import rankstats

    with (built_docs / "objects.inv").open("rb") as stream:
        inventory = InventoryFile.load(stream, "", lambda base, uri: uri)
    documented = {name for entries in inventory.values() for name in entries}
    missing = []
    for name in rankstats.__all__:
        obj = getattr(rankstats, name)
        places = {f"rankstats.{name}"}
        module = getattr(obj, "__module__", None)
        if isinstance(module, str) and module.startswith("rankstats"):
            places.add(f"{module}.{getattr(obj, '__qualname__', name)}")
        if not places & documented:
            missing.append(name)
    assert not missing, f"not in the API reference: {missing}"


def _mailto_links(text: str, source: str) -> list[str]:
    """The e-mail links docutils makes of reST text (unknown Sphinx roles are ignored)."""
    from docutils import nodes
    from docutils.core import publish_doctree

    tree = publish_doctree(
        text,
        source_path=source,
        settings_overrides={"report_level": 5, "halt_level": 5, "file_insertion_enabled": False},
    )
    return [
        node.astext()
        for node in tree.findall(nodes.reference)
        if str(node.get("refuri", "")).startswith("mailto:")
    ]


#: modules whose import needs an optional extra
_IMPORTS_EXTRA = {"rankstats.distributed.torchmetrics": "torchmetrics"}


def _docstrings() -> list[tuple[str, str]]:
    import importlib
    import importlib.util
    import inspect
    import pkgutil

    import rankstats

    found = [("rankstats", rankstats.__doc__ or "")]
    for info in pkgutil.walk_packages(rankstats.__path__, prefix="rankstats."):
        if info.name == "rankstats.__main__":
            continue
        # modules that subclass an optional extra's classes import it (the others import lazily)
        needs = _IMPORTS_EXTRA.get(info.name)
        if needs is not None and importlib.util.find_spec(needs) is None:
            continue
        module = importlib.import_module(info.name)
        found.append((info.name, module.__doc__ or ""))
        for name, obj in vars(module).items():
            if name.startswith("_") or getattr(obj, "__module__", None) != module.__name__:
                continue
            found.append((f"{info.name}.{name}", inspect.getdoc(obj) or ""))
            if inspect.isclass(obj):
                for member, value in vars(obj).items():
                    if member.startswith("_"):
                        continue  # private members are not rendered
                    doc = (
                        inspect.getdoc(value)
                        if callable(value) or isinstance(value, property)
                        else None
                    )
                    if doc:
                        found.append((f"{info.name}.{name}.{member}", doc))
    return found


def test_no_text_renders_as_an_email_address() -> None:
    """Pages and docstrings write ``Hits@10`` as a literal, never as text docutils links."""
    pytest.importorskip("docutils")
    bad = []
    for page in PAGES:
        bad += [f"{page_id(page)}: {link}" for link in _mailto_links(page.read_text(), str(page))]
    for where, doc in _docstrings():
        bad += [f"{where}: {link}" for link in _mailto_links(doc, where)]
    assert not bad, bad
