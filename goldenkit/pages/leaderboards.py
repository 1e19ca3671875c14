"""Where the leaderboards plug into the site: :func:`leaderboard_sections`, the one place.

The leaderboard itself (ranking comparable runs of one dataset with paired
tests) is its own module of the library; this function is the site's single
hook for it. It is called once per build with the index of every run and the
site folder, may write its pages under ``site_dir / "leaderboards"``, and
returns the sections the index links to. Until the leaderboard is wired in
here it returns no section, and the index shows no leaderboard block.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from goldenkit.pages.views import Section

__all__ = ["leaderboard_sections"]


def leaderboard_sections(runs: pd.DataFrame, site_dir: Path, *, site_title: str) -> list[Section]:
    """The leaderboard pages of the site (written under ``site_dir``), as sections for the index.

    ``runs`` is :func:`goldenkit.history.runs_df` of the build. Not wired to a
    leaderboard yet: no section.
    """
    del runs, site_dir, site_title
    return []
