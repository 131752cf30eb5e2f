"""Fan-out of simulations: the Executor seam (Ray or in-process) and the task functions."""

from .executor import Cancelled, Executor, ExecutorUnavailableError, LocalExecutor, RayExecutor, TaskCall, make_executor

__all__ = ["Cancelled", "Executor", "ExecutorUnavailableError", "LocalExecutor", "RayExecutor", "TaskCall", "make_executor"]
