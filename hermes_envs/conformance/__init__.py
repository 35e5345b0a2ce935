"""The conformance kit: checks that catch the mistakes environment authors make, with findings that say the fix."""

from hermes_envs.conformance.findings import Finding, Outcome, Severity, Status
from hermes_envs.conformance.registry import CHECK_REGISTRY, CHECKS, CheckInfo, all_checks, check
from hermes_envs.conformance.runner import ConformanceReport, run_conformance
from hermes_envs.conformance.session import EnvSession, Settings

__all__ = [
    "CHECKS",
    "CHECK_REGISTRY",
    "CheckInfo",
    "ConformanceReport",
    "EnvSession",
    "Finding",
    "Outcome",
    "Settings",
    "Severity",
    "Status",
    "all_checks",
    "check",
    "run_conformance",
]
