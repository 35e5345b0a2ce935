"""The ``vision`` toolset (``vision_analyze``): an image and a question sent to the env's model server.

Backend: the model server (:mod:`.model`): the env's own server, the fake model server under tests. An image in the
task's sandbox (a relative path) is sent inline as a data URL; an http(s) URL is passed through for the server to
fetch. Result as upstream: ``{"success": true, "analysis": str}``.
"""

from __future__ import annotations

import base64
import mimetypes
from typing import Any

from ..registry import ToolRegistry
from ._limits import timeout_for
from ._tooling import register_family, schema
from .model import chat

__all__ = ["image_content_url", "register_vision_tools"]

MAX_IMAGE_BYTES = 20_000_000


def image_content_url(image_url: str, task_id: str) -> str:
    """``image_url`` as the model should get it: http(s)/data URLs as given, sandbox files as data URLs."""
    if image_url.startswith(("http://", "https://", "data:")):
        return image_url
    from ..sandbox import get_sandbox

    box = get_sandbox(task_id)
    assert box is not None
    data = box.read_bytes(image_url.removeprefix("file://"))
    if len(data) > MAX_IMAGE_BYTES:
        raise ValueError(f"image {image_url!r} should be at most {MAX_IMAGE_BYTES} bytes; got {len(data)}.")
    mime = mimetypes.guess_type(image_url)[0] or "image/png"
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


def vision_analyze(args: dict[str, Any], task_id: str) -> dict[str, Any]:
    image_url, question = str(args.get("image_url", "")).strip(), str(args.get("question", "")).strip()
    if not image_url or not question:
        return {"success": False, "error": "vision_analyze needs 'image_url' and 'question'."}
    content = [
        {"type": "text", "text": f"Fully describe the image, then answer: {question}"},
        {"type": "image_url", "image_url": {"url": image_content_url(image_url, task_id)}},
    ]
    reply = chat("vision_analyze", [{"role": "user", "content": content}], timeout=timeout_for("vision"))
    analysis = (reply.get("content") or "").strip()
    return {"success": True, "analysis": analysis or "Vision analysis returned no content."}


DESCRIPTION = (
    "Analyze images using AI vision. Provides a comprehensive description and answers a specific question about "
    "the image content."
)
PARAMS = schema(
    {
        "image_url": {
            "type": "string",
            "description": "Image URL (http/https) or local file path to analyze.",
        },
        "question": {
            "type": "string",
            "description": "Your specific question or request about the image to resolve. The AI will "
            "automatically provide a complete image description AND answer your specific question.",
        },
    },
    ["image_url", "question"],
)


def register_vision_tools(target: ToolRegistry) -> None:
    register_family(target, "vision", "vision", [("vision_analyze", DESCRIPTION, PARAMS, vision_analyze)])
