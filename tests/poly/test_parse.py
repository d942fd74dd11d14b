"""parse_c: the affine subset, statement names, parameters, and errors naming the line."""

from __future__ import annotations

import pytest

from stax import poly
from stax.poly._isl import set_


def test_names_params_labels_and_scalars() -> None:
    scop = poly.parse_c(
        "double s = 0;\n"
        "for (i = 0; i < N; i++)\n"
        "  if (i % 2 == 0 && i >= M)\n"
        "    T: s += f(a[i]);\n"
    )
    assert [s.name for s in scop.statements] == ["S0", "T"]
    assert scop.params == ("M", "N")
    assert scop.functions == (("f", 1),)
    assert scop.statement("T").iterators == ("i",)
    expected = set_("[M, N] -> { T[i] : 0 <= i < N and i >= M and i mod 2 = 0 }")
    assert scop.statement("T").domain.is_equal(expected)
    assert sorted(scop.arrays) == ["a", "s"]


def test_bounds_with_min_max_steps_and_decreasing_loops() -> None:
    scop = poly.parse_c(
        "for (i = N - 1; i >= 0; i--)\n"
        "  for (j = max(0, i - 2); j < min(N, i + 3); j += 2)\n"
        "    A[i][j] = A[i + 1][j];\n"
    )
    deps = poly.dependences(scop)
    # A[i][j] reads the row i + 1 written one iteration earlier of the decreasing i loop
    assert deps.distance_vectors("raw") == [(-1, 0)]
    assert poly.check(scop, scop.schedule).legal
    assert not poly.check(scop, "{ S0[i, j] -> [i, j] }").legal


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("for (i = 0; i < N; i++)\n  A[i] = B[C[i]];", "line 2: 'C[i]' is not an affine"),
        ("for (i = 0; i < N; i++)\n  A[i * i] = 0;", "line 2: 'i * i' is not an affine"),
        ("for (i = 0; i < N; i++)\n  while (1) A[i] = 0;", "line 2: unsupported construct 'while"),
        ("for (i = 0; i < N; i++)\n  if (A[i] > 0) A[i] = 0;", "line 2: 'A[i]' is not an affine"),
        ("for (i = 0; i < N; i++) {\n  N = 3;\n}", "line 2: 'N' is written"),
        ("for (i = 0; i < N; i++) {\n  A[i] = 1\n  B[i] = 2;\n}", "parse error at line 3"),
        ("for (i = 0; i < N; i++) {\n A[i] = 0;\n A[i][0] = 1;\n}", "subscripts"),
        ("for (i = 0; i < N; i++) {\n A[i] = f(1);\n B[i] = f(1, 2);\n}", "line 3: 'f' is called"),
    ],
)
def test_errors_name_the_line(source: str, message: str) -> None:
    with pytest.raises(poly.PolyError, match=message.replace("[", r"\[").replace("*", r"\*")):
        poly.parse_c(source)
