"""arrayplan's engine: pure models, numbers in and numbers out.

No Ray, gRPC, OpenTelemetry, Kubernetes or I/O beyond reading the package's own data files.
The import contract is checked by tests/test_engine_purity.py.
"""

__version__ = "0.1.0"
