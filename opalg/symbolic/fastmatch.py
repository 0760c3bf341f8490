r"""sympy's ``match_common_args`` (the step of ``opt_cse`` that pulls shared argument subsets
out of Adds and Muls), with plain ``set``\ s of integers where sympy keeps ``OrderedSet``\ s.

sympy numbers every argument and every function and keeps, for each, the set of the other's
numbers; its sets are ``OrderedSet``\ s (a dict per set, every operation a Python-level call).
On the sums and products of a TreeSystem's ℳ and bias those set operations are most of
``match_common_args``'s time.  No result depends on a set's iteration order: the candidates
are counted (a count does not depend on order) and then sorted by (count, number), the
arguments of a new common term are put in number order, a subset search intersects sets, and
the only ordered container, the queue of candidates, is kept here as that sorted list.  So the
substitutions written into ``opt_subs`` are sympy's: the same keys in the same order, the same
values node for node (``tests/test_symbolic_fastcse.py`` checks them against sympy's).

Adapted from SymPy 1.14's code (© 2006–2023 SymPy Development Team, BSD license): its
notice is in ``opalg/symbolic/SYMPY_LICENSE.txt``.
"""

from __future__ import annotations

from collections import defaultdict


class _Tracker:
    """sympy's ``FuncArgTracker`` on plain sets: argument values get numbers; for each function
    the set of its argument numbers, for each argument number the set of its functions."""

    def __init__(self, funcs):
        self.value_numbers, self.values = {}, []
        self.arg_to_funcset, self.func_to_argset = [], []
        for func_i, func in enumerate(funcs):
            argset = set()
            for arg in func.args:
                n = self.number(arg)
                argset.add(n)
                self.arg_to_funcset[n].add(func_i)
            self.func_to_argset.append(argset)

    def in_value_order(self, argset):
        """The argument values of ``argset``, in number order."""
        return [self.values[n] for n in sorted(argset)]

    def number(self, value):
        """The number of ``value`` (a new one for a value not seen before)."""
        n = len(self.value_numbers)
        got = self.value_numbers.setdefault(value, n)
        if got == n:
            self.values.append(value)
            self.arg_to_funcset.append(set())
        return got

    def stop_tracking(self, func_i):
        for arg in self.func_to_argset[func_i]:
            self.arg_to_funcset[arg].remove(func_i)

    def common_arg_candidates(self, argset, min_func_i):
        """{function number >= min_func_i: arguments shared with ``argset``}, those sharing >= 2
        (sympy's count, which skips the largest set in its first pass)."""
        count = defaultdict(int)
        if not argset:
            return count
        funcsets = [self.arg_to_funcset[arg] for arg in argset]
        largest = max(funcsets, key=len)
        for funcset in funcsets:
            if funcset is not largest:
                for func_i in funcset:
                    if func_i >= min_func_i:
                        count[func_i] += 1
        for func_i in count:                   # every count is >= 1 here
            if func_i in largest:
                count[func_i] += 1
        return {k: v for k, v in count.items() if v >= 2}

    def subset_candidates(self, argset, restrict_to):
        """The functions (within ``restrict_to``) whose arguments include all of ``argset``."""
        it = iter(argset)
        indices = self.arg_to_funcset[next(it)] & restrict_to
        for arg in it:
            indices &= self.arg_to_funcset[arg]
        return indices

    def update(self, func_i, new_args):
        old_args = self.func_to_argset[func_i]
        for arg in old_args - new_args:
            self.arg_to_funcset[arg].remove(func_i)
        for arg in new_args - old_args:
            self.arg_to_funcset[arg].add(func_i)
        self.func_to_argset[func_i] = new_args


def match_common_args(func_class, funcs, opt_subs):
    """``sympy.simplify.cse_main.match_common_args(func_class, funcs, opt_subs)``: writes the
    same substitutions into ``opt_subs`` (module docstring).

    Examples
    --------
    >>> import sympy as sp
    >>> from sympy.simplify.cse_main import match_common_args as sympys
    >>> from opalg.symbolic.fastmatch import match_common_args
    >>> x, y, z = sp.symbols("x y z")
    >>> funcs, got, want = [x + y + z, x + y + 2 * z, x + 2 * z], {}, {}
    >>> match_common_args(sp.Add, funcs, got), sympys(sp.Add, funcs, want)
    (None, None)
    >>> list(got), list(got) == list(want), list(map(str, got.values())) == list(map(str, want.values()))
    ([x + y + 2*z], True, True)
    """
    from sympy.simplify.cse_main import Unevaluated

    funcs = sorted(funcs, key=lambda f: len(f.args))   # whole-function matches come first
    tracker = _Tracker(funcs)
    changed = set()
    for i in range(len(funcs)):
        counts = tracker.common_arg_candidates(tracker.func_to_argset[i], min_func_i=i + 1)
        # smaller matches first; sympy pops these from the front of an OrderedSet, and the
        # subset search below is restricted to the ones not yet popped
        queue = sorted(counts, key=lambda k: (counts[k], k))
        pending = set(queue)
        for j in queue:
            pending.discard(j)
            com_args = tracker.func_to_argset[i] & tracker.func_to_argset[j]
            if len(com_args) <= 1:
                continue                  # already combined in an earlier iteration
            diff_i = tracker.func_to_argset[i] - com_args
            if diff_i:
                # unevaluated, so that it can take part in later (recursive) matches
                com_func = Unevaluated(func_class, tracker.in_value_order(com_args))
                com_number = tracker.number(com_func)
                tracker.update(i, diff_i | {com_number})
                changed.add(i)
            else:
                # the whole of funcs[i] is the common part: its evaluated form, which tree_cse
                # can see repeated (an Unevaluated never equals its evaluated twin)
                com_number = tracker.number(funcs[i])
            tracker.update(j, (tracker.func_to_argset[j] - com_args) | {com_number})
            changed.add(j)
            for k in tracker.subset_candidates(com_args, pending):
                tracker.update(k, (tracker.func_to_argset[k] - com_args) | {com_number})
                changed.add(k)
        if i in changed:
            opt_subs[funcs[i]] = Unevaluated(func_class, tracker.in_value_order(tracker.func_to_argset[i]))
        tracker.stop_tracking(i)
