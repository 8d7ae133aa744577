"""What runs are shown as: the comparison report (tables, figures, HTML page), a run's pictures, the studies."""
