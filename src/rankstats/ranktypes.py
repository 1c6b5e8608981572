r"""The rank types: how a rank is read off scores with ties.

With ties among the scores, the rank of the true answer is not one number:

- ``"optimistic"``: 1 + the number of candidates scored strictly better (ties resolved in the true
  answer's favour);
- ``"pessimistic"``: the number of candidates scored at least as well, the true answer included
  (ties resolved against it);
- ``"realistic"``: their mean, the expected rank when ties are broken uniformly at random (a
  half-integer where the number of tied candidates is even).

The null model :math:`r_i \sim \mathcal{U}\{1..C_i\}` describes realistic ranks; the adjusted
and z-scored metrics therefore support only :data:`RANK_REALISTIC`.
"""

from __future__ import annotations

from typing import Literal

__all__ = ["RANK_OPTIMISTIC", "RANK_PESSIMISTIC", "RANK_REALISTIC", "RANK_TYPES", "RankType"]

#: the name of a rank type
RankType = Literal["optimistic", "realistic", "pessimistic"]
#: ties resolved in the true answer's favour
RANK_OPTIMISTIC: RankType = "optimistic"
#: ties broken uniformly at random, in expectation
RANK_REALISTIC: RankType = "realistic"
#: ties resolved against the true answer
RANK_PESSIMISTIC: RankType = "pessimistic"
#: every rank type, from the most to the least favourable
RANK_TYPES: tuple[RankType, ...] = (RANK_OPTIMISTIC, RANK_REALISTIC, RANK_PESSIMISTIC)
