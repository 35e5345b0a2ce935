"""HC802: a custom tool lists 'target' in required but not in properties."""

from __future__ import annotations

import _good

EXPECTED_FINDINGS = ["HC802"]


class UnitsEnv(_good.UnitsEnv):
    def _resolve_tools_for_group(self):
        schemas, names = super()._resolve_tools_for_group()
        lookup = {
            "type": "function",
            "function": {
                "name": "lookup_unit",
                "description": "Conversion factor.",
                "parameters": {
                    "type": "object",
                    "properties": {"unit": {"type": "string"}},
                    "required": ["unit", "target"],
                },
            },
        }
        return schemas + [lookup], names | {"lookup_unit"}


if __name__ == "__main__":
    UnitsEnv.cli()
