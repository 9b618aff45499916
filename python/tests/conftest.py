"""Shared fixtures of the binding's tests: a CPU context, a seeded generator, and where the
repository's header is (for the header checks).  The library is the one `import dualbatch`
finds: CTest and scripts/check_python.sh point DUALBATCH_LIBRARY or the loader at a build.
With DUALBATCH_ALL_SKIPPED_EXIT=N set, a session whose tests all skipped exits with N (CTest's
skip code for the GPU tests: cmake/python_tests.cmake)."""
import os
import pathlib

import numpy as np
import pytest

import dualbatch as db

REPO = pathlib.Path(__file__).resolve().parents[2]
HEADER = REPO / "include" / "dualbatch.h"


def pytest_report_header(config):
    return "dualbatch: %s (found by %s), version %s; package %s" % (
        db.library_path, db.library_found_by, db.library_version_string(), db.__file__)


@pytest.fixture
def ctx():
    with db.Context(device="cpu") as c:
        yield c


@pytest.fixture
def rng():
    return np.random.default_rng(20261128)


def pytest_sessionfinish(session, exitstatus):
    code = os.environ.get("DUALBATCH_ALL_SKIPPED_EXIT")
    stats = getattr(session.config.pluginmanager.get_plugin("terminalreporter"), "stats", {})
    if code and exitstatus == 0 and stats.get("skipped") and not stats.get("passed"):
        session.exitstatus = int(code)
