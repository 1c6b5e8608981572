"""The metric classes, one module per family; :mod:`rankstats.registry` collects them."""
