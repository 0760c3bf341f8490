r"""What serves the notebooks: figures and animations (:mod:`~opalg.course.display`), printed
checks (:mod:`~opalg.course.report`) and the exercises' hidden checks
(:mod:`opalg.course.exercises`).  Nothing below this layer imports it.
"""
