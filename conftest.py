"""Root pytest configuration: nbval sanitizer path and a deterministic hypothesis profile."""
import pathlib

from hypothesis import settings

ROOT = pathlib.Path(__file__).resolve().parent

# Hypothesis: derandomized so that CI and a student's run try the same examples;
# no deadline (timing belongs in benchmarks/, not in tests).
settings.register_profile("opalg", derandomize=True, deadline=None, max_examples=25,
                          print_blob=True)
# Opt-in: `pytest tests/test_property.py --hypothesis-profile=thorough` (the flag comes from
# hypothesis' pytest plugin): >= 1,000 new random models per property test, not derandomized,
# so every run explores new models (print_blob gives the reproduction of a failure).
# Meant for tests/test_property.py only; the rest of the suite would run 1,000 examples too.
settings.register_profile("thorough", parent=settings.get_profile("opalg"), max_examples=1000,
                          derandomize=False)
settings.load_profile("opalg")


def pytest_configure(config):
    # nbval reads --nbval-sanitize-with relative to the cwd: make it absolute.
    if hasattr(config.option, "nbval_sanitize_with") and not config.option.nbval_sanitize_with:
        config.option.nbval_sanitize_with = str(ROOT / "tools" / "nbval_sanitize.cfg")
