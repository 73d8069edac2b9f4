"""A real Jupyter kernel for a test: this Python's ipykernel, started by jupyter_client as JupyterLab starts
one, given cells to run as a learner runs them. A test that uses it carries the ``kernel`` mark."""

from __future__ import annotations

import contextlib


class Kernel:
    """Runs cells in a started kernel; what they print comes back as text."""

    def __init__(self, client):
        self.client = client

    def run(self, code: str, timeout: float = 180) -> str:
        """Run ``code`` as one cell; return what it printed. The cell must end without an error, and must
        not ask the notebook for input (a kernel that would wait for a learner's answer fails the test)."""
        printed: list[str] = []

        def output(msg):
            if msg["msg_type"] == "stream":
                printed.append(msg["content"]["text"])
            elif msg["msg_type"] == "error":
                printed.append("\n".join(msg["content"]["traceback"]))

        def asked(msg):
            raise AssertionError(f"the kernel asked the notebook for input: {msg['content']}")

        reply = self.client.execute_interactive(code, timeout=timeout, output_hook=output, stdin_hook=asked,
                                                allow_stdin=True)
        text = "".join(printed)
        assert reply["content"]["status"] == "ok", text
        return text


@contextlib.contextmanager
def python_kernel():
    """A started ``python3`` kernel (this Python), shut down when the block ends."""
    import jupyter_client

    manager, client = jupyter_client.manager.start_new_kernel(kernel_name="python3")
    try:
        yield Kernel(client)
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
