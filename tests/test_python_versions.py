"""One truth about the Pythons supported: setup.cfg's python_requires and classifiers, the README's Quick start,
the oldest one ruff and mypy check the code for, and the versions CI's smoke runs take (.ci/smoke reads the
classifiers) all say the same."""

from __future__ import annotations

import configparser
import os
import re

from conftest import REPO, pyproject


def _setup() -> configparser.ConfigParser:
    config = configparser.ConfigParser()
    config.read(os.path.join(REPO, "setup.cfg"), encoding="utf-8")
    return config


def _classified() -> list[str]:
    lines = _setup()["metadata"]["classifiers"].splitlines()
    found = [line.rsplit("::", 1)[1].strip() for line in lines if re.fullmatch(r"\s*Programming Language :: Python "
                                                                                r":: 3\.\d+\s*", line)]
    return sorted(found, key=lambda version: tuple(int(part) for part in version.split(".")))


def test_the_classifiers_name_every_version_from_the_oldest_required_on():
    versions = _classified()
    assert _setup()["options"]["python_requires"].strip() == f">={versions[0]}"
    minors = [int(version.split(".")[1]) for version in versions]
    assert minors == list(range(minors[0], minors[-1] + 1))  # no gap


def test_the_readme_names_the_same_versions():
    with open(os.path.join(REPO, "README.md"), encoding="utf-8") as handle:
        quick_start = handle.read().split("## Quick start", 1)[1].split("```", 1)[0]
    versions = _classified()
    assert f"Python {', '.join(versions[:-1])} or {versions[-1]}, and pip" in " ".join(quick_start.split())


def test_the_code_is_checked_for_the_oldest():
    oldest = _classified()[0]
    config = pyproject()["tool"]
    assert config["ruff"]["target-version"] == "py" + oldest.replace(".", "")
    assert config["mypy"]["python_version"] == oldest


def test_the_smoke_runs_read_the_classifiers():
    with open(os.path.join(REPO, ".ci", "smoke"), encoding="utf-8") as handle:
        script = handle.read()
    assert "Programming Language :: Python :: " in script and "setup.cfg" in script
    assert not re.search(r"\b3\.1[0-9]\b", script)  # no version written in the script itself
    with open(os.path.join(REPO, ".ci", "run"), encoding="utf-8") as handle:
        assert "bash .ci/smoke" in handle.read()
