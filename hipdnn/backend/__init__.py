"""The engine contract: Engine, ExecutionPlan, knobs and the engine registry."""
