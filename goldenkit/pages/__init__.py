"""The static site: an index of runs, each run's reports, a history page per dataset, the baselines.

:func:`build_site` writes it (``goldenkit pages -o site/``). Every page is one
self-contained file that loads nothing from the network and works from
``file://`` and from any static host (GitHub Pages, an S3 bucket, a CI artifact).
The leaderboards (a page per group of ``goldenkit benchmark`` runs) are made by
:func:`goldenkit.pages._leaderboards.leaderboard_sections`.
"""

from goldenkit._registry import attach_stub as _attach_stub

__getattr__, __dir__, __all__ = _attach_stub(__name__, __file__)
