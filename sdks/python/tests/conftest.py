"""Clients of the emulator `go test ./sdks/` started: AGENTPLANE_URL directly, and the chaos
proxy's AGENTPLANE_TEST_DROP_URL (cuts streams) and AGENTPLANE_TEST_FLAKY_URL (fails first tries)."""

import itertools
import os

import pytest

from agentplane import Agentplane

if not os.environ.get("AGENTPLANE_URL"):
    raise RuntimeError("AGENTPLANE_URL is not set: run these tests with `go test -run TestPythonSDK ./sdks/`")

_names = itertools.count(1)


@pytest.fixture(scope="session")
def client():
    with Agentplane() as c:
        yield c


@pytest.fixture(scope="session")
def dropped():
    with Agentplane(os.environ["AGENTPLANE_TEST_DROP_URL"], max_retry_delay=0.05) as c:
        yield c


@pytest.fixture(scope="session")
def flaky():
    with Agentplane(os.environ["AGENTPLANE_TEST_FLAKY_URL"], max_retry_delay=0.05) as c:
        yield c


@pytest.fixture
def make_agent(client):
    def make(**config):
        return client.agents.create(name=f"py sdk {os.getpid()} {next(_names)}", type="simple",
                                    config={"model": "gpt-4o-mini", **config})
    return make


def assert_whole(events):
    """The frames' ids strictly increase and the last one is terminal."""
    assert events, "no events"
    for a, b in zip(events, events[1:]):
        assert b.id > a.id, f"frame {b.id} after {a.id}"
    assert events[-1].event in ("done", "error")
