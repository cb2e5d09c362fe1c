"""The tests never reach off this machine, nor let a cloud SDK look for credentials (tests/conftest.py):
the SDKs' metadata services are switched off in the environment of the whole session, and a connection to
any address but the loopback fails at once in the test process."""

from __future__ import annotations

import os
import socket

import pytest
from conftest import CLOUD_CREDENTIALS, CLOUD_ISOLATION, _guarded, _loopback


def test_the_session_environment_switches_the_metadata_services_off():
    for name, value in CLOUD_ISOLATION.items():
        assert os.environ.get(name) == value, name
    assert not [name for name in CLOUD_CREDENTIALS if name in os.environ]


@pytest.mark.parametrize("address, local", [
    (("127.0.0.1", 80), True), (("127.8.9.10", 80), True), (("::1", 80, 0, 0), True), (("localhost", 80), True),
    ("/tmp/some.sock", True),
    (("192.0.2.1", 80), False), (("169.254.169.254", 80), False), (("10.0.0.5", 8786), False),
    (("2001:db8::1", 80, 0, 0), False), (("example.invalid", 80), False),
])
def test_only_the_loopback_is_local(address, local):
    assert _loopback(address) is local


def test_a_connection_off_the_machine_is_refused_before_it_is_tried():
    tried = []
    connect = _guarded(lambda sock, address: tried.append(address))
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        with pytest.raises(OSError, match=r"connect to this machine only .*'192\.0\.2\.1'"):
            connect(sock, ("192.0.2.1", 80))
        connect(sock, ("127.0.0.1", 9))
    assert tried == [("127.0.0.1", 9)]


def test_botocore_looks_for_credentials_nowhere_off_the_machine(monkeypatch):
    botocore_session = pytest.importorskip("botocore.session")
    tried = []
    guard = socket.socket.connect

    def recording(sock, address, *args):
        tried.append(address)
        return guard(sock, address, *args)

    monkeypatch.setattr(socket.socket, "connect", recording)
    assert botocore_session.Session().get_credentials() is None
    assert tried == []
