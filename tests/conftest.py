"""Fixtures shared by the tests: ``metric`` runs a test once for every registered metric."""

from __future__ import annotations

import pytest

from rankstats import RankBasedMetric
from support import ALL_METRICS, metric_id


@pytest.fixture(params=ALL_METRICS, ids=metric_id)
def metric(request: pytest.FixtureRequest) -> RankBasedMetric:
    return request.param  # type: ignore[no-any-return]
