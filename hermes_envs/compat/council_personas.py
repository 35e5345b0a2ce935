"""Upstream's ``tools.council_personas`` (served as ``tools.council_personas``): the council's data classes and
personas, from ``environments.council_evaluator`` (upstream keeps them in this module; its evaluator imports them)."""

from __future__ import annotations

from environments.council_evaluator import DEFAULT_PERSONAS, CouncilVerdict, Persona, PersonaResponse

__all__ = ["DEFAULT_PERSONAS", "CouncilVerdict", "Persona", "PersonaResponse"]
