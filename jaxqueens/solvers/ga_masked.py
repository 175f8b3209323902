"""`masked_apply`: an operator run only on the rows of a population that need it (the GA's
crossover and mutation, applied at rates cxpb and mutpb), exactly, whatever the mask.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
from jax import lax

I32 = jnp.int32


def capacity(batch: int, cap32: int) -> int:
    """Rows per compacted pass for an expected fraction `cap32 / 32` of `batch` (+6 sigma).

    Args:
      batch: rows in the batch.
      cap32: the expected fraction of masked rows, in 32nds.

    Returns:
      Rows per pass, 1..`batch`.
    """
    q = min(max(cap32, 0), 32) / 32
    return min(batch, max(1, math.ceil(batch * q + 6 * math.sqrt(batch * q * (1 - q)) + 8)))


def masked_apply(fn, mask: jax.Array, args: tuple, defaults, cap32: int, shared: tuple = ()):
    """`where(mask, fn(*shared, *row), defaults)` row by row, computing `fn` only on the
    masked rows.

    The rows with `mask` set are gathered into passes of `capacity` rows (`cap32`: the
    expected fraction of set rows in 32nds), `fn` runs on each pass (vmapped over its rows) and
    the results are scattered back; further passes run only while masked rows remain, so the
    result is exact for any mask. DEAP's rates (cxpb 0.5, mutpb 0.2) leave most rows unchanged:
    this skips their work. `cap32 >= 32` is the plain `where`.

    Batching rule: under `jax.vmap` (a kernel written for one GA trial, vmapped over trials or
    over swept `Params`) the batch axis is folded into the rows, so one compaction serves every
    trial (a per-trial compaction would size each pass for a small batch and loop as long as the
    slowest trial); a batched `shared` value is read by each row from its own batch entry.

    Args:
      fn: `fn(*shared, *row) -> ` a pytree like one row of `defaults`, written for one row.
      mask: `[B]` bool.
      args: arrays `[B, ...]`, the rows.
      defaults: pytree of `[B, ...]`: the rows left where `mask` is False.
      cap32: expected fraction of masked rows, in 32nds.
      shared: a tuple of pytrees every row reads whole (rates, an instance).

    Returns:
      A pytree like `defaults`.
    """
    leaves, treedef = jax.tree.flatten(tuple(shared))
    apply = _masked(fn, treedef, cap32, (False,) * len(leaves))
    return apply(mask, tuple(args), defaults, tuple(leaves), ())


def _masked(fn, treedef, cap32: int, grouped: tuple[bool, ...]):
    """`masked_apply` for `fn`; leaf i of `shared` is read whole (`grouped[i]`
    False) or as `leaf[group[row]]` (True; its group index array is in `groups`)."""

    @jax.custom_batching.custom_vmap
    def apply(mask, args, defaults, leaves, groups):
        def rows_fn(groups, *rows):  # fn over rows [k, ...]; groups: [k] per grouped leaf
            def one(gs, *row):
                it = iter(gs)
                vals = [
                    leaf[next(it)] if g else leaf for leaf, g in zip(leaves, grouped, strict=True)
                ]
                return fn(*jax.tree.unflatten(treedef, vals), *row)

            return jax.vmap(one)(groups, *rows)

        b = mask.shape[0]
        cap = capacity(b, cap32)
        if cap >= b:
            out = rows_fn(groups, *args)
            return jax.tree.map(
                lambda o, d: jnp.where(mask.reshape((b,) + (1,) * (d.ndim - 1)), o, d),
                out,
                defaults,
            )

        def one_pass(carry):
            todo, out = carry
            idx = jnp.nonzero(todo, size=cap, fill_value=b)[0]
            safe = jnp.minimum(idx, b - 1)
            res = rows_fn(tuple(g[safe] for g in groups), *(x[safe] for x in args))
            out = jax.tree.map(lambda d, r: d.at[idx].set(r, mode="drop"), out, res)
            return todo.at[idx].set(False, mode="drop"), out

        return lax.while_loop(lambda c: jnp.any(c[0]), one_pass, (mask, defaults))[1]

    @apply.def_vmap
    def _fold(axis_size, in_batched, mask, args, defaults, leaves, groups):
        m_b, a_b, d_b, l_b, g_b = in_batched
        b = mask.shape[1] if m_b else mask.shape[0]
        whole = lambda x, bat: x if bat else jnp.broadcast_to(x, (axis_size, *x.shape))
        fold = lambda x, bat: whole(x, bat).reshape((axis_size * b, *x.shape[1 + bat :]))
        mask = fold(mask, m_b)
        args = tuple(fold(x, xb) for x, xb in zip(args, a_b, strict=True))
        defaults = jax.tree.map(fold, defaults, d_b)
        new_leaves, new_groups, new_grouped = [], [], []
        git = iter(zip(groups, g_b, strict=True))
        for leaf, leaf_b, g in zip(leaves, l_b, grouped, strict=True):
            group, group_b = next(git) if g else (None, False)
            if not leaf_b:  # read whole, or through the row's group, as unbatched
                new_leaves.append(leaf)
                if g:
                    new_groups.append(fold(group, group_b))
            elif g:  # leaf [A, G, ...]: group (a, i) becomes a * G + i
                size = leaf.shape[1]
                offset = (jnp.arange(axis_size, dtype=I32) * size)[:, None]
                new_leaves.append(leaf.reshape((axis_size * size, *leaf.shape[2:])))
                new_groups.append((whole(group, group_b) + offset).reshape(-1))
            else:  # leaf [A, ...]: row r of the folded batch reads entry r // b
                new_leaves.append(leaf)
                new_groups.append(jnp.repeat(jnp.arange(axis_size, dtype=I32), b))
            new_grouped.append(g or leaf_b)
        out = _masked(fn, treedef, cap32, tuple(new_grouped))(
            mask, args, defaults, tuple(new_leaves), tuple(new_groups)
        )
        out = jax.tree.map(lambda o: o.reshape((axis_size, b, *o.shape[1:])), out)
        return out, jax.tree.map(lambda _: True, out)

    return apply
