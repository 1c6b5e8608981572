"""From scores to results: ranks with ties, evaluation tables, streaming, early stopping.

- :func:`ranks_from_scores` turns a batch of scores into optimistic, realistic and pessimistic
  ranks (:class:`Ranks`), with filtering;
- :func:`evaluate` computes a table of metrics with their null-model statistics
  (:class:`EvaluationResults`), for several sides, rank types and groups;
- :class:`RankAccumulator` collects ranks batch by batch (and across workers) and gives the same
  results;
- :class:`EarlyStopper` decides when a metric has stopped improving.
"""

from rankstats.evaluation.evaluate import DEFAULT_METRICS, PYKEEN_METRICS, evaluate
from rankstats.evaluation.results import EvaluationResults, ResultRow
from rankstats.evaluation.scores import RANK_EXPECTED, Ranks, ranks_from_scores
from rankstats.evaluation.stopping import EarlyStopper
from rankstats.evaluation.streaming import RankAccumulator
from rankstats.evaluation.ties import expected_over_ties

__all__ = [
    "DEFAULT_METRICS",
    "PYKEEN_METRICS",
    "RANK_EXPECTED",
    "EarlyStopper",
    "EvaluationResults",
    "RankAccumulator",
    "Ranks",
    "ResultRow",
    "evaluate",
    "expected_over_ties",
    "ranks_from_scores",
]
