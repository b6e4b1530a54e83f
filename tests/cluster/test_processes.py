"""Detached services are known again by pid + start time and stopped with their group."""

from __future__ import annotations

import subprocess
import sys

import pytest

from floe.cluster.processes import (
    ClusterError,
    ProcessRef,
    free_port,
    group_members,
    port_open,
    start_detached,
    stop_group,
    wait_until,
)
from floe.runtime.settings import child_environment

# A parent that starts a child and ignores SIGTERM: stop_group must still end both.
STUBBORN = (
    "import signal, subprocess, sys, time\n"
    "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)'])\n"
    "print('ready', flush=True)\n"
    "time.sleep(300)\n"
)


def test_a_detached_group_is_stopped_whole(tmp_path):
    log = tmp_path / "logs" / "svc.log"
    ref = start_detached([sys.executable, "-c", STUBBORN], log, {"FLOE_TEST_MARK": "1"})
    assert wait_until(lambda: "ready" in log.read_text(), 30, interval=0.1)
    members = group_members(ref.pid)
    assert ref.pid in members and len(members) == 2, "leader and its child share the group"
    assert ref.alive()

    assert stop_group(ref, timeout=2.0) is True  # SIGTERM ignored: SIGKILL after 2 s
    assert not ref.alive()
    assert group_members(ref.pid) == []
    assert stop_group(ref) is False, "stopping twice stops nothing"


def test_a_recycled_pid_is_not_ours(tmp_path):
    ref = start_detached([sys.executable, "-c", "import time; time.sleep(60)"], tmp_path / "l", {})
    impostor = ProcessRef(ref.pid, ref.start_ticks + 1)  # same pid, another start time
    assert ref.alive() and not impostor.alive()
    assert ProcessRef.from_json(ref.to_json()) == ref
    stop_group(ref)


def test_a_command_that_cannot_start_says_so(tmp_path):
    with pytest.raises(FileNotFoundError):
        start_detached([str(tmp_path / "no-such-binary")], tmp_path / "l", {})


def test_only_a_group_leader_is_stopped_as_a_group():
    # A process in this test's own group: signalling "its" group would hit pytest.
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        ref = ProcessRef.of(child.pid)
        assert ref is not None
        with pytest.raises(ClusterError, match="no longer leads its own process group"):
            stop_group(ref)
    finally:
        child.kill()
        child.wait()


def test_ports():
    port = free_port()
    assert not port_open(port)


def test_child_environment_adds_to_this_one():
    env = child_environment({"FLOE_TEST_ONLY": "x"})
    assert env["FLOE_TEST_ONLY"] == "x" and "PATH" in env
