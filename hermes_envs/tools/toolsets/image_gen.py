"""The ``image_gen`` toolset (``image_generate``). Result as upstream: ``{"success": true, "image": url}``.

Backends: ``fake`` (the env's model server is asked for the image; a URL in its reply is the image, any other reply
becomes a deterministic placeholder URL derived from the prompt and the reply), ``fal`` (FAL.ai, ``FAL_KEY``, the
``fal-client`` package imported on first use, as upstream), ``openai`` (the Images API at
``HERMES_IMAGE_BASE_URL`` / ``OPENAI_BASE_URL`` with ``OPENAI_API_KEY``). Real calls go through the recorder hook.
"""

from __future__ import annotations

import hashlib
import os
import re
from typing import Any

from ..registry import ToolRegistry
from ._backends import FAKE, slot
from ._limits import ToolBackendError, timeout_for
from ._tooling import register_family, schema
from .model import chat
from .recording import recorded_call

__all__ = ["register_image_gen_tools"]

SIZES = {"landscape": "1536x1024", "square": "1024x1024", "portrait": "1024x1536"}
_URL = re.compile(r"(https?://\S+|data:image/\S+)")


class FakeImageBackend:
    name = FAKE

    def generate(self, prompt: str, aspect_ratio: str) -> dict[str, Any]:
        reply = chat(
            "image_generate",
            [
                {
                    "role": "system",
                    "content": "You generate images. Reply with the URL of the generated image.",
                },
                {"role": "user", "content": f"Generate a {aspect_ratio} image: {prompt}"},
            ],
            timeout=timeout_for("image_gen"),
        )
        text = (reply.get("content") or "").strip()
        found = _URL.search(text)
        if found:
            return {"success": True, "image": found.group(1).rstrip(").,")}
        digest = hashlib.sha256(f"{prompt}\n{aspect_ratio}\n{text}".encode()).hexdigest()[:16]
        return {"success": True, "image": f"https://images.hermes.invalid/{digest}.png"}


class FalImageBackend:
    name = "fal"

    def generate(self, prompt: str, aspect_ratio: str) -> dict[str, Any]:
        if not os.environ.get("FAL_KEY", "").strip():
            raise ToolBackendError(
                f"the fal image backend should have FAL_KEY set; got none. Fix: export FAL_KEY=..., or "
                f"HERMES_IMAGE_GEN_BACKEND={FAKE}."
            )
        try:
            import fal_client  # type: ignore[import-not-found]
        except ImportError:
            raise ToolBackendError(
                "the fal image backend should have the 'fal-client' package; got ImportError. Fix: pip install "
                f"fal-client, or HERMES_IMAGE_GEN_BACKEND={FAKE}."
            ) from None
        size = {"landscape": "landscape_16_9", "square": "square_hd", "portrait": "portrait_16_9"}[
            aspect_ratio
        ]

        def call() -> dict[str, Any]:
            raw = fal_client.subscribe("fal-ai/flux/dev", arguments={"prompt": prompt, "image_size": size})
            images = raw.get("images") or []
            if not images:
                return {"success": False, "image": None, "error": "the image service returned no image"}
            return {"success": True, "image": images[0].get("url")}

        return recorded_call(
            "image_gen", "generate", {"backend": self.name, "prompt": prompt, "size": size}, call
        )


class OpenAIImageBackend:
    name = "openai"

    def generate(self, prompt: str, aspect_ratio: str) -> dict[str, Any]:
        import httpx

        key = os.environ.get("OPENAI_API_KEY", "").strip()
        if not key:
            raise ToolBackendError(
                "the openai image backend should have OPENAI_API_KEY set; got none. Fix: export it, or "
                f"HERMES_IMAGE_GEN_BACKEND={FAKE}."
            )
        base = (
            os.environ.get("HERMES_IMAGE_BASE_URL")
            or os.environ.get("OPENAI_BASE_URL")
            or "https://api.openai.com/v1"
        )
        model = os.environ.get("HERMES_IMAGE_MODEL", "gpt-image-1")
        request = {"backend": self.name, "model": model, "prompt": prompt, "size": SIZES[aspect_ratio]}

        def call() -> dict[str, Any]:
            response = httpx.post(
                base.rstrip("/") + "/images/generations",
                json={"model": model, "prompt": prompt, "size": SIZES[aspect_ratio], "n": 1},
                headers={"Authorization": f"Bearer {key}"},
                timeout=timeout_for("image_gen"),
            )
            if response.status_code >= 400:
                return {
                    "success": False,
                    "image": None,
                    "error": f"HTTP {response.status_code}: {response.text[:300]}",
                }
            data = (response.json().get("data") or [{}])[0]
            image = data.get("url") or (
                f"data:image/png;base64,{data['b64_json']}" if data.get("b64_json") else None
            )
            return {"success": bool(image), "image": image}

        return recorded_call("image_gen", "generate", request, call)


def _auto() -> str:
    if os.environ.get("FAL_KEY", "").strip():
        return "fal"
    raise ToolBackendError(
        "image_generate should have an image backend; got no FAL_KEY. Fix: export FAL_KEY=... (FAL.ai, as upstream), "
        f"HERMES_IMAGE_GEN_BACKEND=openai with OPENAI_API_KEY, or HERMES_IMAGE_GEN_BACKEND={FAKE} (the model server "
        "answers)."
    )


IMAGES = slot("image_gen", _auto)
IMAGES.register(FAKE, FakeImageBackend)
IMAGES.register("fal", FalImageBackend)
IMAGES.register("openai", OpenAIImageBackend)


def image_generate(args: dict[str, Any], task_id: str) -> dict[str, Any]:
    prompt = str(args.get("prompt", "")).strip()
    aspect = str(args.get("aspect_ratio", "landscape") or "landscape")
    if not prompt:
        return {"success": False, "image": None, "error": "image_generate needs a 'prompt'."}
    if aspect not in SIZES:
        return {
            "success": False,
            "image": None,
            "error": f"aspect_ratio should be one of {sorted(SIZES)}; got {aspect!r}.",
        }
    return IMAGES.get().generate(prompt, aspect)


DESCRIPTION = (
    "Generate high-quality images from text prompts. Returns a single image URL. Display it using markdown: "
    "![description](URL)"
)
PARAMS = schema(
    {
        "prompt": {
            "type": "string",
            "description": "The text prompt describing the desired image. Be detailed and descriptive.",
        },
        "aspect_ratio": {
            "type": "string",
            "enum": ["landscape", "square", "portrait"],
            "description": "The aspect ratio of the generated image. 'landscape' is 16:9 wide, 'portrait' is 16:9 "
            "tall, 'square' is 1:1.",
            "default": "landscape",
        },
    },
    ["prompt"],
)


def register_image_gen_tools(target: ToolRegistry) -> None:
    register_family(
        target, "image_gen", "image_gen", [("image_generate", DESCRIPTION, PARAMS, image_generate)]
    )
