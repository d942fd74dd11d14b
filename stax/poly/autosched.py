"""`auto_schedule`: a Pluto-style affine schedule from isl's scheduler, under a budget.

isl's scheduler (`isl_schedule_constraints_compute_schedule`) is Pluto's algorithm: per band it
solves, through the Farkas lemma, for affine hyperplanes with non-negative dependence distances
(permutable bands, so tileable) minimising a bound on the distances, prefers coincident (parallel)
outer dimensions and falls back to Feautrier-style carrying when no more permutable dimensions
exist. Validity, proximity and coincidence constraints are all of the scop's dependences. The
result is re-checked with `check` before it is returned.
"""

from __future__ import annotations

import islpy as isl

from stax.poly._isl import DEFAULT_MAX_OPERATIONS, budget
from stax.poly.check import check
from stax.poly.deps import dependences
from stax.poly.model import Scop
from stax.poly.tree import ScheduleTree
from stax.report.progress import progress


def auto_schedule(scop: Scop, max_operations: int = DEFAULT_MAX_OPERATIONS) -> ScheduleTree:
    """A legal schedule tree with permutable bands and parallel members flagged.

    Raises BudgetExceeded when isl needs more than `max_operations` operations.
    """
    with progress("stax poly: auto-schedule", 3) as bar:  # G: on a terminal only
        bar.advance("dependences", 0)
        deps = dependences(scop).all
        bar.advance("isl scheduler")
        with budget(max_operations, what="auto_schedule"):
            constraints = (
                isl.ScheduleConstraints.on_domain(scop.domain)
                .set_validity(deps)
                .set_proximity(deps)
                .set_coincidence(deps)
            )
            schedule = constraints.compute_schedule()
        bar.advance("legality check")
        verdict = check(scop, ScheduleTree.from_isl(schedule))
        bar.advance("done")
    assert verdict.legal, f"isl's scheduler returned an illegal schedule: {verdict}"
    return verdict.tree
