"""Type aliases for the numpy arrays rankstats passes around once input is validated."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = ["BoolArray", "FloatArray", "IntArray"]

#: float64 arrays: ranks (possibly half-integers), weights, results
FloatArray = npt.NDArray[np.float64]
#: int64 arrays: candidate counts
IntArray = npt.NDArray[np.int64]
#: boolean masks
BoolArray = npt.NDArray[np.bool_]
