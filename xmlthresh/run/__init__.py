"""One run and one sweep: the job around a task, the two tasks, protocols, the sweep's callback."""
