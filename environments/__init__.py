"""Upstream-layout modules (``environments.hermes_base_env`` ...) and example environments.

Env files written for the hermes-agent layout import ``environments.hermes_base_env`` and friends; these modules
re-export hermes-envs so such files run unchanged.
"""
