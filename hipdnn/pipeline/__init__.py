"""Build and run: the planner, the executor, the shared plan cache, variant pack signatures."""
