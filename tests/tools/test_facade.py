import hermes_envs.tools as tools


def test_public_names_are_pinned():
    assert tools.__all__ == sorted(tools.__all__)
    assert tools.__all__ == [
        "CommandResult",
        "EnvRuntime",
        "Sandbox",
        "SandboxBackend",
        "SandboxConfig",
        "SandboxManager",
        "Tool",
        "ToolContext",
        "ToolRegistry",
        "active_sandboxes",
        "available_backends",
        "cleanup_all_sandboxes",
        "cleanup_sandbox",
        "configure_sandboxes",
        "default_manager",
        "get_sandbox",
        "register_backend",
        "registry",
        "sandbox_config",
        "schema_from_function",
        "tool",
    ]
    for name in tools.__all__:
        assert getattr(tools, name) is not None
