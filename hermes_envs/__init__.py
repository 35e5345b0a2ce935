"""hermes-envs: write, test and gate RL environments for tool-calling agents trained with Atropos."""
