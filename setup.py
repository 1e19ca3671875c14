"""The package list, which pyproject.toml cannot extend: its ``packages.find`` sees only folders of the package.

Everything else is in pyproject.toml. goldenkit's packages are found under
goldenkit/; ``goldenkit.notebooks.bundled`` is the top-level notebooks/ folder,
which pyproject.toml's ``[tool.setuptools.package-dir]`` maps into the package so
the wheel carries the notebooks as package data (one copy in git).
"""

from setuptools import find_namespace_packages, setup

setup(packages=[*find_namespace_packages(include=["goldenkit*"]), "goldenkit.notebooks.bundled"])
