"""goldenkit.leaderboards's public names, listed once: each name and the module it lives in."""

from goldenkit.leaderboards._alignment import (
    run_inputs as run_inputs,
)
from goldenkit.leaderboards._pairwise import (
    pairwise_compare as pairwise_compare,
)
from goldenkit.leaderboards._passk import (
    pass_at_k as pass_at_k,
)
from goldenkit.leaderboards._ranking import (
    Leaderboard as Leaderboard,
    leaderboard as leaderboard,
)
from goldenkit.leaderboards._report import (
    cost_table as cost_table,
    difference_matrix as difference_matrix,
    format_leaderboard_table as format_leaderboard_table,
    frontier_figure as frontier_figure,
    frontier_line as frontier_line,
    interval_figure as interval_figure,
    notes_block as notes_block,
    slice_leaderboards as slice_leaderboards,
)
