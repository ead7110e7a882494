"""modelstub as a per-test container, with testcontainers-python and pytest.

MODELSTUB_IMAGE names the image (default "modelstub"). With Docker the container's ports are
published on free host ports. TESTCONTAINERS_HOST_NETWORK=1 runs it on the host's network instead,
bound to free loopback ports: CI does that with podman, whose port publishing would add a bridge
and iptables rules to the host.
"""
import json
import os
import socket
import urllib.request

import pytest
from testcontainers.core.container import DockerContainer
from testcontainers.core.wait_strategies import LogMessageWaitStrategy

TOKEN = "change-me"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def modelstub():
    """Yields (grpc address, HTTP base URL) of a modelstub serving its built-in default script."""
    c = DockerContainer(os.environ.get("MODELSTUB_IMAGE", "modelstub"))
    c.with_env("MODELSTUB_CONTROL_TOKEN", TOKEN).with_env("MODELSTUB_RECORD_DIR", "")
    if os.environ.get("TESTCONTAINERS_HOST_NETWORK") == "1":
        grpc, http = free_port(), free_port()
        c.with_env("MODELSTUB_GRPC", f"127.0.0.1:{grpc}").with_env("MODELSTUB_HTTP", f"127.0.0.1:{http}")
        c.with_kwargs(network_mode="host")
    else:
        c.with_exposed_ports(50051, 8080)
    c.waiting_for(LogMessageWaitStrategy("HTTP listening"))
    with c:
        if os.environ.get("TESTCONTAINERS_HOST_NETWORK") != "1":
            host = c.get_container_host_ip()
            grpc, http = c.get_exposed_port(50051), c.get_exposed_port(8080)
        else:
            host = "127.0.0.1"
        yield f"{host}:{grpc}", f"http://{host}:{http}/v1"


def post(url, body):
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"content-type": "application/json", "authorization": f"Bearer {TOKEN}"})
    with urllib.request.urlopen(req, timeout=10) as res:
        return json.load(res)


def test_the_stub_answers_a_chat_completion_from_its_script(modelstub):
    _, base_url = modelstub
    answer = post(f"{base_url}/chat/completions", {"model": "modelstub-default", "messages": [{"role": "user", "content": "PROBE-ECHO hello"}]})
    assert answer["choices"][0]["message"]["content"] == "PROBE-ECHO ok: PROBE-ECHO hello"


def test_each_test_gets_a_fresh_stub_whose_ids_start_again(modelstub):
    _, base_url = modelstub
    first = post(f"{base_url}/chat/completions", {"model": "modelstub-default", "messages": [{"role": "user", "content": "PROBE-ECHO again"}]})
    assert first["id"] == "chatcmpl-gen-default-1"
