"""``auto`` skips the line-by-line reading of shell fences when no line opens one: the shortcut must never lose
a command that reading would find, whatever the text."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_envs.parsers.auto import _SHELL_FENCE_LINE, shell_blocks

_LINES = st.sampled_from(
    [
        "```",
        "```bash",
        "``` sh ",
        "   ```shell\r",
        "    ```bash",
        "```console",
        "```python",
        "```bashx",
        " ```",
        "ls -la",
        "",
        "\r",
        "x ```bash",
        "\t```sh",
        "echo `date`",
    ]
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_LINES, max_size=12), st.sampled_from(["\n", "\r\n"]))
def test_no_shell_fence_line_means_no_command(lines, newline):
    text = newline.join(lines)
    commands, _ = shell_blocks(text)
    if _SHELL_FENCE_LINE.search(text) is None:
        assert commands == []
    if commands:  # and a text with a command is always read line by line
        assert _SHELL_FENCE_LINE.search(text) is not None
