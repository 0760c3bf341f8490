"""Planted-fault testing of the suite (issue 37): the catalogue, its anchors and the runner."""
