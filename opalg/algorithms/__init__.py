r"""Layer 3, the recursions read off the operator factorizations: one module per algorithm.

:mod:`~opalg.algorithms.rnea` (RNEA, the bias), :mod:`~opalg.algorithms.crba` (CRBA; its
common-frame route :mod:`~opalg.algorithms.crba_world`), :mod:`~opalg.algorithms.riccati` (the
articulated-body Riccati sweep; its pivot tests :mod:`~opalg.algorithms.pivots`),
:mod:`~opalg.algorithms.aba` (the innovations passes: ABA, ℳ⁻¹, Υ), :mod:`~opalg.algorithms.hybrid`,
:mod:`~opalg.algorithms.operational` (Jacobians, Λ⁻¹), :mod:`~opalg.algorithms.constrained` and
:mod:`~opalg.algorithms.constrained.passes` (Ider's control forces, dense and by passes),
:mod:`~opalg.algorithms.tree_sparse` and :mod:`~opalg.algorithms.ltdl` (ℳ's sparsity and its
factor), :mod:`~opalg.algorithms.momentum`, and :mod:`~opalg.algorithms.kkt`, the dense
saddle-point solve every constrained route is checked against.  The functions themselves are re-exported by
:mod:`opalg` (``opalg.aba``, ``opalg.crba`` ...); here each module keeps its algorithm's name.
"""
