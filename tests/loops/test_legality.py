"""Loop legality with isl (issue 10 item 4, `stax.poly.loop_legality`): the loop-carried
dependences of a rolled loop from the body's accesses, and the verdict `stax.loops` records."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_matches, make_array

import stax
from stax.loops import records
from stax.poly.loop_legality import Access, check_loop


def at(c: int = 0, **coefs: int):
    return "int", (c, tuple(coefs.items()))


def span(start, stop, step: int = 1):
    return "slice", start, stop, step


I = (0, (("i", 1),))  # the loop index as a form  # noqa: E741


def test_recurrence_carries_a_flow_dependence_of_distance_one():
    acc = [Access("x", False, (8,), (at(-1, i=1),)), Access("x", True, (8,), (at(i=1),))]
    legal = check_loop("i", range(1, 8), {}, acc)
    assert not legal.parallel
    assert "flow dependence on x: distances { L[t = 1] }" in str(legal)
    assert legal.dependences == ("flow dependence on x: distances { L[t = 1] }",)


def test_reading_ahead_is_an_anti_dependence_and_double_buffering_stays_legal():
    acc = [Access("x", False, (8,), (at(1, i=1),)), Access("x", True, (8,), (at(i=1),))]
    legal = check_loop("i", range(0, 7), {}, acc)
    assert not legal.parallel
    assert legal.dependences == ("anti dependence on x: distances { L[t = 1] }",)
    assert legal.double_buffering.startswith("legal")


def test_rows_written_by_their_own_iteration_are_independent():
    acc = [Access("a", False, (6, 4), (at(i=1), ("all",))),
           Access("a", True, (6, 4), (at(i=1), span((0, ()), I)))]
    assert check_loop("i", range(6), {}, acc).parallel


def test_whole_array_access_and_reversed_ranges():
    acc = [Access("a", False, (5,), None), Access("a", True, (5,), None)]
    legal = check_loop("i", range(4, -1, -1), {}, acc)
    assert [d.split(" ")[0] for d in legal.dependences] == ["flow", "anti", "output"]


def test_strided_writes_that_never_meet_reads():
    # a[2i] written, a[2i+1] read: even and odd elements never meet
    acc = [Access("a", False, (10,), (at(1, i=2),)), Access("a", True, (10,), (at(i=2),))]
    assert check_loop("i", range(5), {}, acc).parallel
    # a stepped slice a[i::3] read while a[i] is written: they meet
    acc = [Access("a", False, (10,), (span(I, (10, ()), 3),)),
           Access("a", True, (10,), (at(i=1),))]
    assert not check_loop("i", range(5), {}, acc).parallel


def test_enclosing_index_is_a_parameter():
    # row p of A: A[p, j] written, A[p, :j] read (the inner loop of a Cholesky step)
    acc = [Access("A", False, (6, 6), (at(p=1), span((0, ()), (0, (("i", 1),))))),
           Access("A", True, (6, 6), (at(p=1), at(i=1)))]
    legal = check_loop("i", range(5), {"p": range(1, 6)}, acc)
    assert legal.dependences[0].startswith("flow dependence on A: distances [p]")


def rows(a):
    for i in range(a.shape[0]):
        a[i, :] = a[i, :] * 2 + i
    return a


def shift(x):
    for i in range(1, x.shape[0]):
        x[i] = x[i - 1] + x[i]
    return x


def columns_and_rows(m):
    cov = np.zeros((m.shape[1], m.shape[1]))
    for i in range(m.shape[1]):
        cov[i:, i] = cov[i, i:] = m[:, i] @ m[:, i:]
    return cov


@pytest.mark.parametrize(("fn", "shape", "parallel"), [(rows, (5, 3), True),
                                                       (shift, (6,), False),
                                                       (columns_and_rows, (5, 4), True)])
def test_recorded_verdict(fn, shape, parallel):
    x = make_array(shape, "float64")
    jitted = stax.jit(fn, strict=True)
    assert_matches(jitted(x.copy()), fn(x.copy()))
    (rec,) = records(jitted)
    legality = rec.body.legality
    assert legality.startswith("iterations independent" if parallel else "sequential"), legality
    assert "Double buffering: legal" in legality
    assert "legality: " + legality in rec.body.describe()  # what stax.explain shows
