"""goldenkit.pages's public names, listed once: each name and the module it lives in."""

from goldenkit.pages._site import (
    STATE_FILE as STATE_FILE,
    SiteResult as SiteResult,
    build_site as build_site,
)
