"""Where runs are recorded: MLflow through its client, the store checks."""
