"""goldenkit.harnesses's public names, listed once: each name and the module it lives in."""

from goldenkit.harnesses._formats import (
    FORMATS as FORMATS,
)
from goldenkit.harnesses._import import (
    import_run as import_run,
)
from goldenkit.harnesses._runfolder import (
    IMPORTED as IMPORTED,
    sample_differences as sample_differences,
)
