"""A fake S3 store for the tests: moto's server on 127.0.0.1 (never another address), with a bucket of the
test's files, reached with fake keys through ``AWS_ENDPOINT_URL``. The session's environment switches the
cloud SDKs' metadata services off (tests/conftest.py)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

FAKE_KEYS = {"AWS_ACCESS_KEY_ID": "fake-test-key-id", "AWS_SECRET_ACCESS_KEY": "fake-test-secret",
             "AWS_DEFAULT_REGION": "us-east-1"}
"""What a process that may read the store is given (moto takes any keys; botocore signs nothing without some)."""


@contextmanager
def fake_s3(files: dict[str, bytes], bucket: str = "trec-rag-eval-test") -> Iterator[str]:
    """Serve ``files`` (key -> bytes) in ``bucket`` for the block; yields the store's endpoint URL."""
    import boto3
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        endpoint = f"http://127.0.0.1:{server._server.server_port}"
        store = boto3.client("s3", endpoint_url=endpoint, aws_access_key_id=FAKE_KEYS["AWS_ACCESS_KEY_ID"],
                             aws_secret_access_key=FAKE_KEYS["AWS_SECRET_ACCESS_KEY"], region_name="us-east-1")
        store.create_bucket(Bucket=bucket)
        for key, data in files.items():
            store.put_object(Bucket=bucket, Key=key, Body=data)
        yield endpoint
    finally:
        server.stop()


def forget_s3_file_systems() -> None:
    """fsspec keeps one S3 file system per set of options for the process, with the credentials it found
    first: dropped, so that the next URL looks for them in the environment as it is now."""
    import s3fs

    s3fs.S3FileSystem.clear_instance_cache()


def environment_with(endpoint: str, credentials: bool) -> dict[str, str]:
    """This process's environment pointing at the fake store, with the fake keys or without any."""
    env = {key: value for key, value in os.environ.items() if key not in FAKE_KEYS}
    env["AWS_ENDPOINT_URL"] = endpoint
    return env | (FAKE_KEYS if credentials else {})
