"""A plan's life in the service: ``planner`` runs CreatePlan's runs (admission, the Ray fan-out of
``arrayplan_engine.evaluation``, checkpoints, ranking, the stored answer) and ``simulate`` the
one-array calls (SimulateArray, RunConsistencyTest) over the same executor."""
