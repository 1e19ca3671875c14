"""Images in a run: which rows carry them, and the check that refuses what cannot be sent.

A case's images (:class:`goldenkit.records.ImagePart`, ``Case.images``) are part of the
question: a model asked about a picture it never sees answers something else. So
goldenkit never drops one. Before the first call, :func:`check_images` asks the
provider, image by image, whether it can send it (:meth:`Provider.image_refusal
<goldenkit.providers._base.Provider.image_refusal>`), and refuses the run (an
:class:`~goldenkit.errors.InputError`, exit 1) naming the rows when it cannot:

* ``vision=False`` (``[run] vision = false``, ``goldenkit run --no-vision``): the user
  declares that the model takes no images; every row with an image is refused;
* the openai provider sends images (``image_url`` parts) but no other media (audio, PDF);
* the ollama provider sends base64 images, not images given only by URL (goldenkit does
  not fetch from the network during a run);
* the callable, fixtures and adk providers take them; any other provider refuses unless
  it overrides ``image_refusal``.

>>> from goldenkit.records import Case, ImagePart, Turn
>>> cases = {"r1": Case("r1", "contract", (Turn("what is this?", images=(ImagePart("image/png", b"x"),)),)),
...          "r2": Case("r2", "contract", (Turn("hi"),))}
>>> image_rows(cases)
{'r1': 1}
"""

from __future__ import annotations

from collections.abc import Mapping

from goldenkit._registry import publish
from goldenkit.errors import InputError
from goldenkit.providers._base import Provider
from goldenkit.records import Case

__all__ = ["MAX_NAMED", "check_images", "image_refusals", "image_rows"]

#: Rows named in a refusal (the count says how many more).
MAX_NAMED = 10


def image_rows(cases: Mapping[str, Case]) -> dict[str, int]:
    """``{row id: number of images}`` of the rows that carry any, in the cases' order."""
    return {rid: len(case.images) for rid, case in cases.items() if case.images}


def image_refusals(cases: Mapping[str, Case], provider: Provider, *, vision: bool = True) -> dict[str, str]:
    """``{row id: why its images cannot be sent}`` for every row the run must refuse."""
    out: dict[str, str] = {}
    for rid, case in cases.items():
        for image in case.images:
            if not vision:
                why: str | None = "the model is declared without vision ([run] vision = false or --no-vision)"
            else:
                why = provider.image_refusal(image)
            if why is not None:
                out[rid] = why
                break
    return out


def check_images(cases: Mapping[str, Case], provider: Provider, *, vision: bool = True) -> None:
    """Refuse (InputError, exit 1) a run with rows whose images cannot be sent; see the module doc."""
    refused = image_refusals(cases, provider, vision=vision)
    if not refused:
        return
    ids = list(refused)
    named = ", ".join(f'"{rid}"' for rid in ids[:MAX_NAMED])
    more = f" and {len(ids) - MAX_NAMED} more" if len(ids) > MAX_NAMED else ""
    n = len(ids)
    raise InputError(
        f"{n} row{'s' if n != 1 else ''} carr{'y' if n != 1 else 'ies'} images that cannot be sent "
        f"({refused[ids[0]]}): {named}{more}; goldenkit never drops an image: run a provider and model "
        "that take them, or leave these rows out"
    )


publish(globals())
