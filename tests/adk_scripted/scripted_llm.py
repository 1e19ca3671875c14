"""A ``BaseLlm`` whose answers are fixed in advance (no network, deterministic).

A script maps a user message to the steps the model takes in answer to it. A
step is either function calls (``{"calls": [(name, args), ...]}``, optionally
with ``"text"`` beside them) or a final text (``{"text": ...}``). The model finds
the latest script key among the request's contents, counts how many of its own
function-call turns follow it, and answers with the next step; once the steps
run out it repeats the last one's text. Unknown messages get ``default``.
A step may also ``"sleep"`` seconds first, answer ``"error": (code, message)``
(an LlmResponse with error_code) or ``"raise"`` an exception.
Every answer reports usage (prompt = number of contents, candidates = 7).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from typing import Any

from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types

OUTPUT_TOKENS = 7


class ScriptedLlm(BaseLlm):
    model: str = "scripted-llm"
    script: dict[str, list[dict[str, Any]]] = {}
    default: str = "I cannot help with that."

    def _find(self, request: LlmRequest) -> tuple[str | None, int]:
        contents = list(request.contents or [])
        for i in range(len(contents) - 1, -1, -1):
            for part in contents[i].parts or []:
                if part.text and part.text.strip() in self.script:
                    steps_done = sum(
                        1
                        for c in contents[i + 1 :]
                        if c.role == "model" and any(p.function_call for p in c.parts or [])
                    )
                    return part.text.strip(), steps_done
        return None, 0

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        key, done = self._find(llm_request)
        usage = types.GenerateContentResponseUsageMetadata(
            prompt_token_count=len(llm_request.contents or []), candidates_token_count=OUTPUT_TOKENS
        )
        if key is None:
            yield LlmResponse(
                content=types.Content(role="model", parts=[types.Part(text=self.default)]), usage_metadata=usage
            )
            return
        steps = self.script[key]
        step = steps[min(done, len(steps) - 1)]
        if done >= len(steps):
            step = {"text": steps[-1].get("text", "")}
        if "sleep" in step:
            await asyncio.sleep(step["sleep"])
        if "error" in step:
            code, message = step["error"]
            yield LlmResponse(error_code=code, error_message=message)
            return
        if "raise" in step:
            raise step["raise"]
        parts: list[types.Part] = []
        if step.get("text"):
            parts.append(types.Part(text=step["text"]))
        for name, args in step.get("calls", []):
            parts.append(types.Part(function_call=types.FunctionCall(name=name, args=dict(args))))
        yield LlmResponse(content=types.Content(role="model", parts=parts), usage_metadata=usage)
