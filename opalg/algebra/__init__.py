r"""Layer 4, the operator objects: φ, ℰφ, H, M, P, D, G, K, ψ, Ω of a model at a state, and their algebra.

:mod:`~opalg.algebra.operators` (composable operators: products, adjoints, inverses, ``.dense()``),
:mod:`~opalg.algebra.block_ops` and :mod:`~opalg.algebra.tridiag_solve` (block-tridiagonal and
block-sparse operators, Thomas and cyclic reduction), :mod:`~opalg.algebra.soa`
(``opalg.operators(model, q, qd)``, built from the quantities of the recursions below).
"""
