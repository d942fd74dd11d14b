"""`stax.explain` shows the loop-IR printer's text and the validator's verdict (issue 16, S16).

The decisions the report renders come from the backend the function was compiled with: a
value with two consumers and a costly op gets a buffer by the rule `costly_recompute`.
"""

from __future__ import annotations

import numpy as np

import stax
from stax.ir.printer import format_program


def gathered_softmax(x, i):
    e = np.exp(x[i])
    return e / e.sum(1, keepdims=True)


def test_explain_shows_the_loop_ir_and_its_validation() -> None:
    x = np.linspace(-2.0, 2.0, 24).reshape(4, 6)
    i = np.array([3, 0, -1, 2])
    f = stax.jit(gathered_softmax)
    np.testing.assert_allclose(f(x, i), gathered_softmax(x, i), rtol=1e-12)
    report = stax.explain(f, x, i)
    program = report.compilation.lowered.program
    text = str(report)
    assert f"== Loop IR ==\n{format_program(program)}\n\n== IR validation ==\nvalid\n" in text
    assert report.ir_problems == ()
    assert [d.rule for d in report.compilation.lowered.decisions][:1] == ["costly_recompute"]
    assert "exp is costly to recompute on this backend" in text
    assert report.schedule.rules == stax.backends.get_backend("cpu").fusion_rules()
