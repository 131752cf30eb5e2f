"""Cluster tests: Helm chart, Dockerfile, CapacityPlan controller, OTLP, multi-node Ray."""
