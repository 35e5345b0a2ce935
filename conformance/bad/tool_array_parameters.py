"""HC802: a custom tool's parameters are an array schema, not an object of named arguments."""

from __future__ import annotations

from _good import UnitsEnv

EXPECTED_FINDINGS = ["HC802"]


class UnitsHelperEnv(UnitsEnv):
    def _resolve_tools_for_group(self):
        schemas, names = super()._resolve_tools_for_group()
        lookup = {
            "type": "function",
            "function": {
                "name": "lookup_unit",
                "description": "Conversion factor.",
                "parameters": {"type": "array", "items": {"type": "string"}},
            },
        }
        return schemas + [lookup], names | {"lookup_unit"}


if __name__ == "__main__":
    UnitsHelperEnv.cli()
