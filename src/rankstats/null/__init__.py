"""The null model: closed forms and Monte-Carlo for ranks drawn uniformly from their candidates.

Every function here works on clean, already-validated numpy arrays (validation happens once, at
the public boundary in :mod:`rankstats.validation`) and is vectorised over its inputs.
"""
