"""The package list, which pyproject.toml cannot extend: its ``packages.find`` sees only folders of the package.

Everything else is in pyproject.toml. goldenkit's packages are found under
goldenkit/; three more are top-level folders, which pyproject.toml's
``[tool.setuptools.package-dir]`` maps into the package so the wheel carries
them as package data (one copy in git): ``goldenkit.notebooks.bundled`` is
notebooks/, ``goldenkit.demo.datasets`` is datasets/ (the demo's dataset and
its recorded answers) and ``goldenkit.demo.baselines`` is baselines/ (its
committed baseline).
"""

from setuptools import find_namespace_packages, setup

MAPPED = ["goldenkit.notebooks.bundled", "goldenkit.demo.datasets", "goldenkit.demo.baselines"]

setup(packages=[*find_namespace_packages(include=["goldenkit*"]), *MAPPED])
