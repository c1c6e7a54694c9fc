"""`make lab`: JupyterLab opens a chapter (MyST Markdown) as a notebook and runs it on the
project's own kernel.

The test starts JupyterLab headless on a loopback port, asks its contents API for a chapter
as a notebook (jupytext's contents manager reads the ``.md``), starts a kernel through the
sessions API and runs the chapter's first code cells over the kernel's websocket.
"""

import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path
from urllib.request import Request, urlopen

import pytest

REPO = Path(__file__).resolve().parents[2]
CHAPTER = "notebooks/01_data_and_systems.md"
TOKEN = uuid.uuid4().hex
FIRST_CELLS = 2
START_TIMEOUT_S = 60
CELL_TIMEOUT_S = 120

jupyter = shutil.which("jupyter", path=str(Path(sys.executable).parent))
pytestmark = pytest.mark.skipif(
    jupyter is None or not (REPO / "data" / "build" / "wikisample" / ".complete").exists(),
    reason="needs the project's environment (make install) and testbed (make data)",
)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _api(base: str, path: str, body: dict | None = None) -> dict:
    request = Request(
        f"{base}{path}",
        data=None if body is None else json.dumps(body).encode(),
        headers={"Authorization": f"token {TOKEN}", "Content-Type": "application/json"},
        method="GET" if body is None else "POST",
    )
    with urlopen(request, timeout=30) as response:
        return json.loads(response.read())


@pytest.fixture(scope="module")
def lab():
    port = _free_port()
    process = subprocess.Popen(
        [
            jupyter,
            "lab",
            "--no-browser",
            f"--port={port}",
            "--ip=127.0.0.1",
            f"--IdentityProvider.token={TOKEN}",
            f"--ServerApp.root_dir={REPO}",
            "--ServerApp.allow_root=True",
        ],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, "JUPYTER_PLATFORM_DIRS": "1"},
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + START_TIMEOUT_S
    try:
        while True:
            try:
                _api(base, "/api/status")
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(
                        "JupyterLab did not start: " + process.stderr.read().decode()[-2000:]
                    ) from None
                time.sleep(0.5)
        yield base
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()


def test_lab_is_jupyterlab_with_jupytext(lab):
    with urlopen(f"{lab}/lab?token={TOKEN}", timeout=30) as response:
        page = response.read().decode()
    assert "JupyterLab" in page


def test_a_chapter_opens_as_a_notebook(lab):
    model = _api(lab, f"/api/contents/{CHAPTER}?type=notebook&content=1")
    assert model["type"] == "notebook"
    cells = model["content"]["cells"]
    assert sum(cell["cell_type"] == "code" for cell in cells) > FIRST_CELLS
    assert model["content"]["metadata"]["kernelspec"]["name"] == "python3"


async def _run_cells(lab: str, kernel_id: str, sources: list[str]) -> list[dict]:
    from tornado.websocket import websocket_connect

    url = lab.replace("http", "ws", 1) + f"/api/kernels/{kernel_id}/channels?token={TOKEN}"
    connection = await websocket_connect(url)
    session, replies = uuid.uuid4().hex, []
    try:
        for source in sources:
            msg_id = uuid.uuid4().hex
            header = {
                "msg_id": msg_id,
                "username": "test",
                "session": session,
                "msg_type": "execute_request",
                "version": "5.3",
                "date": "",
            }
            content = {
                "code": source,
                "silent": False,
                "store_history": True,
                "user_expressions": {},
                "allow_stdin": False,
                "stop_on_error": True,
            }
            await connection.write_message(
                json.dumps(
                    {
                        "header": header,
                        "parent_header": {},
                        "metadata": {},
                        "content": content,
                        "channel": "shell",
                        "buffers": [],
                    }
                )
            )
            errors, stdout, reply, idle = [], [], None, False
            # The reply (shell channel) may come before the cell's output (IOPub): the output
            # is complete when the kernel reports itself idle after the request.
            while reply is None or not idle:
                message = json.loads(
                    await asyncio.wait_for(connection.read_message(), CELL_TIMEOUT_S)
                )
                if message.get("parent_header", {}).get("msg_id") != msg_id:
                    continue
                kind, content = message["msg_type"], message["content"]
                if kind == "stream" and content["name"] == "stdout":
                    stdout.append(content["text"])
                if kind == "error":
                    errors.append(content["evalue"])
                if kind == "execute_reply":
                    reply = content
                if kind == "status" and content["execution_state"] == "idle":
                    idle = True
            replies.append({**reply, "errors": errors, "stdout": "".join(stdout)})
    finally:
        connection.close()
    return replies


def test_the_first_cells_run_on_the_projects_kernel(lab):
    model = _api(lab, f"/api/contents/{CHAPTER}?type=notebook&content=1")
    code = [cell["source"] for cell in model["content"]["cells"] if cell["cell_type"] == "code"]
    session = _api(
        lab,
        "/api/sessions",
        {"path": CHAPTER, "type": "notebook", "name": "", "kernel": {"name": "python3"}},
    )
    probe = "import sys, rankbias; print(sys.prefix, rankbias.__file__)"
    replies = asyncio.run(_run_cells(lab, session["kernel"]["id"], [*code[:FIRST_CELLS], probe]))
    assert [reply["status"] for reply in replies] == ["ok"] * (FIRST_CELLS + 1), replies
    assert not any(reply["errors"] for reply in replies), replies
    prefix, package = replies[-1]["stdout"].split()
    assert Path(prefix) == Path(sys.prefix), "the kernel is not the project's environment"
    assert Path(package).is_relative_to(REPO / "src"), package


def test_make_labs_settings_open_markdown_as_a_jupytext_notebook():
    overrides = json.loads((REPO / "book" / "_lab" / "overrides.json").read_text())
    viewers = overrides["@jupyterlab/docmanager-extension:plugin"]["defaultViewers"]
    assert set(viewers) == {"markdown", "myst"}
    extension = Path(sys.prefix) / "share" / "jupyter" / "labextensions" / "jupyterlab-jupytext"
    scripts = "".join(path.read_text(errors="replace") for path in extension.rglob("*.js"))
    assert all(f'"{viewer}"' in scripts for viewer in set(viewers.values())), viewers


def test_jupytext_executes_a_chapter_from_the_command_line(tmp_path):
    """README, "Run a chapter yourself": ``jupytext --to ipynb --execute`` (needs nbconvert)."""
    out = tmp_path / "chapter_template.ipynb"
    env = {**os.environ, "RANKBIAS_TESTBED": str(REPO / "data" / "build" / "wikisample")}
    done = subprocess.run(
        [
            Path(jupyter).with_name("jupytext"),
            "--to",
            "ipynb",
            "--execute",
            REPO / "book" / "chapter_template.md",
            "-o",
            out,
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    cells = json.loads(out.read_text())["cells"]
    assert all(cell.get("outputs") is not None for cell in cells if cell["cell_type"] == "code")
    assert any(cell.get("outputs") for cell in cells if cell["cell_type"] == "code")
