r"""Reading and writing files of ranks and results: the one place that knows file formats.

- :func:`read_ranks` reads ranks from CSV, TSV or whitespace-separated text (optionally gzipped),
  NumPy ``.npy`` / ``.npz`` (PyKEEN's layout too), Parquet and Arrow (with the optional pyarrow)
  into a :class:`RankData`, whose :meth:`~RankData.evaluate` calls :func:`rankstats.evaluate`;
- :func:`write_results` writes an :class:`~rankstats.EvaluationResults` to CSV, JSON or Parquet.

Errors are :class:`RankFileError` (a :class:`ValueError`) naming the file and, for a bad value,
its line (or row) and column. This module is not imported by ``import rankstats``.

Examples
--------
>>> import io
>>> from rankstats.io import read_ranks
>>> data = read_ranks(io.BytesIO(b"rank,num_candidates\n1,10\n4,10\n"))
>>> results = data.evaluate(metrics=["mrr", "hits@1"])
>>> round(results["mrr"], 3), results["hits@1"]
(0.625, 0.5)
"""

from rankstats.io.data import (
    CANDIDATES_COLUMN,
    RANK_COLUMN,
    RANK_COLUMNS,
    WEIGHT_COLUMN,
    RankData,
    RankFileError,
)
from rankstats.io.read import EXAMPLE, FORMATS, read_ranks
from rankstats.io.write import write_results

__all__ = [
    "CANDIDATES_COLUMN",
    "EXAMPLE",
    "FORMATS",
    "RANK_COLUMN",
    "RANK_COLUMNS",
    "WEIGHT_COLUMN",
    "RankData",
    "RankFileError",
    "read_ranks",
    "write_results",
]
