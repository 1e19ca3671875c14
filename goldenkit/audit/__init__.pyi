"""goldenkit.audit's public names, listed once: each name and the module it lives in."""

from goldenkit.audit._apply import (
    AuditApplied as AuditApplied,
    apply_audit as apply_audit,
    merge_patch as merge_patch,
)
from goldenkit.audit._browser import (
    ALL as ALL,
    AuditBrowser as AuditBrowser,
    AuditWidget as AuditWidget,
)
from goldenkit.audit._failures import (
    FAILURE_COLUMNS as FAILURE_COLUMNS,
    audit_sample as audit_sample,
    case_texts as case_texts,
    failing_rows as failing_rows,
    failure_card_html as failure_card_html,
    sample_cards_html as sample_cards_html,
)
from goldenkit.audit._labelling import (
    HumanLabelling as HumanLabelling,
    LabelNextPanel as LabelNextPanel,
)
from goldenkit.audit._marks import (
    AUDIT_LABELS as AUDIT_LABELS,
    AUDITS_DIR as AUDITS_DIR,
    AuditLog as AuditLog,
    audit_file as audit_file,
    latest_marks as latest_marks,
    make_mark as make_mark,
    marks_frame as marks_frame,
    read_marks as read_marks,
)
from goldenkit.audit._session import (
    AuditSession as AuditSession,
    open_audit as open_audit,
)
