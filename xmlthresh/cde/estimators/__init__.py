"""Conditional density estimators: one module per estimator, registered by name in
:data:`xmlthresh.cde.registry.ESTIMATORS` (discovered on first use)."""
