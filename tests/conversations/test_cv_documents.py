"""The documents' word tables come from the message catalog: a report or an estimate reads in the conversation's
language, Chinese with its own punctuation, English as before."""

from __future__ import annotations

import pytest

from conversations.documents import _estimate, _report

REPORT = {"system": "AC", "complaint": "no cold air", "cause": ["capacitor"], "suspected": ["fan"], "estimate_status": "confirmed",
          "estimate_lines": [{"label": "Replace capacitor", "hours": 1.5}], "total_hours": 1.5}


@pytest.mark.parametrize(("lang", "lines"), [
    ("en", ["# Final report", "**Complaint:** no cold air", "- Suspected: fan", "## Labor (confirmed)", "- **Total: 1.5 h** (confirmed)"]),
    ("zh", ["# 最终报告", "**故障描述：** no cold air", "- 疑似原因：fan", "## 工时（已确认）", "- **合计：1.5 小时**（已确认）"]),
    ("ru", ["# Итоговый отчёт", "**Жалоба:** no cold air", "- Предполагается: fan", "## Работы (подтверждено)", "- **Итого: 1.5 ч** (подтверждено)"]),
    ("es", ["# Informe final", "**Avería:** no cold air", "- Sospecha: fan", "## Mano de obra (confirmado)", "- **Total: 1.5 h** (confirmado)"]),
])
def test_a_final_report_in_the_conversations_language(lang: str, lines: list[str]) -> None:
    said = _report({**REPORT, "language": lang}).splitlines()
    assert all(line in said for line in lines), said


@pytest.mark.parametrize(("lang", "title", "total"), [
    ("en", "# Labor estimate (draft)", "**Total: 2 h**"), ("zh", "# 工时估算（草稿）", "**合计：2 小时**"),
    ("ru", "# Смета работ (черновик)", "**Итого: 2 ч**"), ("es", "# Presupuesto de mano de obra (borrador)", "**Total: 2 h**"),
])
def test_a_labor_estimate_in_the_conversations_language(lang: str, title: str, total: str) -> None:
    said = _estimate({"language": lang, "status": "draft", "lines": [{"label": "Diagnose", "hours": 2}], "total_hours": 2}).splitlines()
    assert said[0] == title and said[-1] == total
