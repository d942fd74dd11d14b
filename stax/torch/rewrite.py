"""ATen graph rewrites made on a graph before `GraphRunner` plans it (the runner owns the
graph AOTAutograd hands it).

`merge_summed_products`: a sum of 2-D matrix products, `mm(a1, b1) + mm(a2, b2) + ...`, is
one product over the concatenated inner axis, `mm(cat([a1, a2, ...], 1), cat([b1, b2, ...],
0))`, when the concatenated operands are smaller than the result. A weight gradient summed
over the steps of a recurrent cell is such a sum: the LSTM cell's backward over 4 steps of a
batch of 8 computed four 1024x256 products of inner size 8 (1 MiB each, then read again by
the sum) where one product of inner size 32 writes the gradient once.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.fx as fx
from torch._guards import detect_fake_mode

aten = torch.ops.aten


def _transposes(node: fx.Node) -> bool:
    """`node` transposes a 2-D tensor."""
    if node.target is aten.t.default:
        return True
    return node.target is aten.permute.default and len(node.args) == 2 and \
        [d % 2 for d in node.args[1]] == [1, 0]


def _terms(node: fx.Node, root: bool, flipped: bool = False
           ) -> list[tuple[fx.Node, bool]] | None:
    """The products `node` sums, each with whether the sum reads it transposed (a tree of
    adds and transposes, each inner node read only by its parent), or None if it sums
    anything else."""
    if not root and len(node.users) != 1:
        return None
    if node.target is aten.mm.default:
        return [(node, flipped)]
    if _transposes(node) and isinstance(node.args[0], fx.Node):
        return _terms(node.args[0], False, not flipped)
    if node.target is not aten.add.Tensor or node.kwargs or len(node.args) != 2 or not all(
            isinstance(a, fx.Node) for a in node.args):
        return None
    parts = [_terms(a, False, flipped) for a in node.args]
    return None if None in parts else [t for p in parts for t in p]  # type: ignore[union-attr]


def _shape(node: fx.Node) -> tuple[int, ...] | None:
    val = node.meta.get("val")
    if not isinstance(val, torch.Tensor) or not all(type(s) is int for s in val.shape):
        return None
    return tuple(val.shape)


def _mergeable(root: fx.Node, terms: list[tuple[fx.Node, bool]]) -> bool:
    """Products of one float dtype and the root's shape (transposed where the sum reads them
    so), whose concatenated operands are smaller than the result (else the concatenation
    costs more than it saves)."""
    want = _shape(root)
    if len(terms) < 2 or want is None or len(want) != 2:
        return False
    dtype = root.meta["val"].dtype
    if not dtype.is_floating_point:
        return False
    inner = 0
    for t, flipped in terms:
        a, b = t.args
        shape = _shape(t)
        if not isinstance(a, fx.Node) or not isinstance(b, fx.Node) or shape is None \
                or (shape[::-1] if flipped else shape) != want or any(
                    n.meta["val"].dtype != dtype for n in (t, a, b)):
            return False
        sa = _shape(a)
        if sa is None or _shape(b) is None:
            return False
        inner += sa[1]
    return inner * (want[0] + want[1]) < want[0] * want[1]


def _made(graph: fx.Graph, target: Any, *args: Any) -> fx.Node:
    """A new node `target(*args)` with its fake value (within the graph's fake mode)."""
    node = graph.call_function(target, args)
    node.meta["val"] = target(*fx.node.map_arg(args, lambda a: a.meta["val"]))
    return node


def merge_summed_products(gm: fx.GraphModule) -> int:
    """Rewrite each mergeable sum of products in `gm` (in place); the number rewritten."""
    graph = gm.graph
    erased: set[fx.Node] = set()
    count = 0
    for root in reversed(list(graph.nodes)):
        if root in erased or root.op != "call_function" or root.target is not aten.add.Tensor:
            continue
        terms = _terms(root, True)
        if terms is None or not _mergeable(root, terms):
            continue
        mode = detect_fake_mode([root.meta["val"]])
        rows, cols = root.meta["val"].shape
        # The sum's layout (later views of it were traced on it): row-major, or column-major
        # (the transpose of a row-major product of the transposed terms).
        transposed = root.meta["val"].stride() == (1, rows) != (cols, 1)
        if mode is None or not transposed and root.meta["val"].stride() != (cols, 1):
            continue
        operands = {n for t, _ in terms for n in t.args}
        with graph.inserting_before(root), mode:
            # (a b)^T = b^T a^T for the products the sum reads transposed
            flips = [f != transposed for _, f in terms]
            lefts = [_made(graph, aten.permute.default, t.args[1], [1, 0]) if f else t.args[0]
                     for (t, _), f in zip(terms, flips, strict=True)]
            rights = [_made(graph, aten.permute.default, t.args[0], [1, 0]) if f else t.args[1]
                      for (t, _), f in zip(terms, flips, strict=True)]
            product = _made(graph, aten.mm.default, _made(graph, aten.cat.default, lefts, 1),
                            _made(graph, aten.cat.default, rights, 0))
            if transposed:
                product = _made(graph, aten.permute.default, product, [1, 0])
        root.replace_all_uses_with(product)
        dead = [root]
        while dead:  # the sum's adds, transposes and products, each once nothing reads it
            node = dead.pop()
            inputs = [a for a in node.all_input_nodes if a not in operands]
            graph.erase_node(node)
            erased.add(node)
            dead += [a for a in inputs if not a.users and a not in erased]
        count += 1
    if count:
        gm.recompile()
    return count

