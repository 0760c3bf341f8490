"""Test models for the opalg.fijany tests: chains, short-branched trees, scaled masses."""

from __future__ import annotations

import numpy as np

import opalg
from opalg.model.multibody import Inertia

from helpers import make_model


def rebuild(base, parents, inertias=None, allow_massless=False):
    """``base``'s joints, placements and inertias on a new parent array."""
    return opalg.Model(parents, base.joints, base.placements, inertias or base.inertias,
                       allow_massless=allow_massless)


def branched(n_main: int, n_side: int, seed: int):
    """A main chain of n_main bodies with n_side short side branches (length 1 or 2)."""
    rng = np.random.default_rng(seed)
    parents = list(range(-1, n_main - 1))
    while len(parents) < n_main + n_side:
        k = len(parents)
        if k > n_main and rng.random() < 0.3 and parents[k - 1] < n_main:   # length-2 branch
            parents.append(k - 1)
        else:
            parents.append(int(rng.integers(0, n_main)))
    base = opalg.random_model(len(parents), "chain", seed=seed, joints="all")
    return rebuild(base, parents)


def model(kind: str, n: int, seed: int):
    """``chain``, ``branched`` (main chain + side branches), ``tree``, ``relabeled``, ``jain-chain``."""
    if kind == "branched":
        return branched(max(n - n // 3, 1), n // 3, seed)
    return make_model(kind, n, seed, joints="all")


def scaled_masses(base, seed: int, decades: float = 3.0):
    """``base`` with every body's inertia scaled by 10^U(−decades, decades)."""
    rng = np.random.default_rng(seed)
    s = 10.0 ** rng.uniform(-decades, decades, base.n)
    ins = [Inertia(i.mass * f, i.com, np.asarray(i.I_com) * f) for i, f in zip(base.inertias, s)]
    return rebuild(base, base.parents, ins)


KINDS = ["chain", "branched", "tree", "relabeled", "jain-chain"]
