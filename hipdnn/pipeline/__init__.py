"""Build and run: the planner, the executor, the shared plan cache, the persistent plan store
(``plan_store``), variant pack signatures."""
