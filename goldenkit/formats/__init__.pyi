"""goldenkit.formats's public names, listed once: each name and the module it lives in."""

from goldenkit.formats._common import (
    decode_text as decode_text,
    json_object_line as json_object_line,
)
from goldenkit.formats._contract_build import (
    answers_to_contract as answers_to_contract,
    input_to_contract as input_to_contract,
    short_answers as short_answers,
)
from goldenkit.formats._eval_config import (
    ADK_METRICS as ADK_METRICS,
    EvalCriteria as EvalCriteria,
    apply_criteria as apply_criteria,
    check_graders as check_graders,
    criteria_differences as criteria_differences,
    read_eval_config as read_eval_config,
)
from goldenkit.formats._importer import (
    IMPORT_FORMATS as IMPORT_FORMATS,
    import_dataset as import_dataset,
)
from goldenkit.formats._normalize import (
    detect_shape as detect_shape,
    normalize_case as normalize_case,
)
