"""Verified downloads through a real HTTP server on loopback: success, checksum mismatch, offline mode."""

from __future__ import annotations

import hashlib

import pytest
from helpers import serve_directory

from xmlthresh.data.download import DataUnavailableError, RemoteFile, ensure_file


@pytest.fixture
def server(tmp_path):
    root = tmp_path / "origin"
    root.mkdir()
    (root / "lists.txt").write_bytes(b"0 1 1 0\n")
    with serve_directory(root) as url:
        yield url


@pytest.fixture
def data_dir(tmp_path, monkeypatch):
    target = tmp_path / "data"
    monkeypatch.setenv("XMLTHRESH_DATA", str(target))
    monkeypatch.delenv("XMLTHRESH_OFFLINE", raising=False)
    return target


def test_download_verifies_and_places_file(server, data_dir):
    sha = hashlib.sha256(b"0 1 1 0\n").hexdigest()
    path = ensure_file(RemoteFile("berger/lists.txt", f"{server}/lists.txt", sha))
    assert path == data_dir / "berger" / "lists.txt"
    assert path.read_bytes() == b"0 1 1 0\n"


def test_checksum_mismatch_leaves_nothing_behind(server, data_dir):
    with pytest.raises(DataUnavailableError, match="sha256 mismatch.*save it as"):
        ensure_file(RemoteFile("berger/lists.txt", f"{server}/lists.txt", "0" * 64))
    assert list((data_dir / "berger").iterdir()) == []


def test_missing_remote_file_is_a_clear_error(server, data_dir):
    with pytest.raises(DataUnavailableError, match="download failed.*404"):
        ensure_file(RemoteFile("berger/absent.txt", f"{server}/absent.txt", "0" * 64))
    assert list((data_dir / "berger").iterdir()) == []


def test_offline_mode_never_downloads(server, data_dir, monkeypatch):
    monkeypatch.setenv("XMLTHRESH_OFFLINE", "1")
    with pytest.raises(DataUnavailableError, match="downloads are off"):
        ensure_file(RemoteFile("berger/lists.txt", f"{server}/lists.txt", "0" * 64))
    assert not data_dir.exists()
