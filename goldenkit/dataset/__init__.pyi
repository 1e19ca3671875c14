"""goldenkit.dataset's public names, listed once: each name and the module it lives in."""

from goldenkit.dataset._lines import (
    canonical_sha256 as canonical_sha256,
)
from goldenkit.dataset._reader import (
    Dataset as Dataset,
    read_dataset as read_dataset,
    rows_to_jsonl as rows_to_jsonl,
    validate_dataset as validate_dataset,
)
from goldenkit.dataset._red import (
    mark_red as mark_red,
    red_row_ids as red_row_ids,
    without_red as without_red,
)
from goldenkit.dataset._versions import (
    new_version_target as new_version_target,
    next_version as next_version,
    with_changelog_entry as with_changelog_entry,
    write_version as write_version,
)
from goldenkit.schema import (
    DATA_FILE as DATA_FILE,
    MANIFEST_FILE as MANIFEST_FILE,
)
