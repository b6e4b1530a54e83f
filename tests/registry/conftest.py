"""A real ``moto_server`` on loopback standing in for AWS Glue (no mocks in-process)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

FAKE_AWS_ENV = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_REGION": "us-east-1",
}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="session")
def moto_endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Start ``moto_server`` once per session; fake credentials only in the environment."""
    binary = Path(sys.executable).parent / "moto_server"
    if not binary.exists():
        pytest.fail(f"{binary} is missing: install the dev extras (moto[server])")
    port = _free_port()
    endpoint = f"http://127.0.0.1:{port}"
    log = tmp_path_factory.mktemp("moto") / "moto_server.log"
    saved = {k: os.environ.get(k) for k in FAKE_AWS_ENV}
    os.environ.update(FAKE_AWS_ENV)
    with open(log, "w") as out:
        proc = subprocess.Popen(
            [str(binary), "-H", "127.0.0.1", "-p", str(port)], stdout=out, stderr=out
        )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(f"{endpoint}/moto-api/", timeout=1).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"moto_server did not start: {log.read_text()[-2000:]}")
                time.sleep(0.2)
        yield endpoint
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@pytest.fixture
def moto_reset(moto_endpoint: str) -> str:
    """A clean moto state for one test."""
    request = urllib.request.Request(f"{moto_endpoint}/moto-api/reset", method="POST")
    urllib.request.urlopen(request, timeout=5).close()
    return moto_endpoint
