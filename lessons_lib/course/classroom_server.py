"""The kernel manager of a class's Jupyter servers (Binder, a hub's single-user servers, TLJH).

``binder/jupyter_server_config.json`` names :class:`ClassroomKernelManager` as the servers' kernel
manager; learners never import this module (it has no ``__all__``, so ``lessons_lib`` does not
re-export it).

What it fixes. When a kernel dies (a learner's cell runs out of memory) the server restarts it and
tells the tab ("restarting"); the tab opens a new websocket at once. Before it forwards anything on
a new websocket, jupyter_server checks that the kernel's outputs reach it (its "nudge": kernel_info
requests until an iopub message arrives), but it skips that check for a kernel it believes busy,
and after an automatic restart it still holds the dead kernel's last state, "busy"
(jupyter_server issue 1395). A request sent in the new kernel's first tenth of a second is then
answered while the server's iopub socket is still reconnecting: its outputs and its idle status are
lost, and the cell never finishes. The hub test's kernel killed mid-training met this in 2 runs of
12. A manual restart sets the state to "starting"; this manager does the same when the server
restarts a kernel on its own, before the tab hears "restarting", so the check runs.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from jupyter_server.services.kernels.kernelmanager import AsyncMappingKernelManager


class ClassroomKernelManager(AsyncMappingKernelManager):
    """jupyter_server's kernel manager, with a kernel restarted automatically marked "starting"."""

    async def start_kernel(self, *, kernel_id: str | None = None, **kwargs: Any) -> str:
        new = kernel_id is None or kernel_id not in self
        kernel_id = await super().start_kernel(kernel_id=kernel_id, **kwargs)
        if new:  # registered before any websocket's callback: it runs before "restarting" is sent
            self.add_restart_callback(kernel_id, partial(self.mark_starting, kernel_id), "restart")
        return kernel_id

    def mark_starting(self, kernel_id: str) -> None:
        """The new kernel's state until it speaks, as after a manual restart (not the dead one's)."""
        if kernel_id in self:
            self.get_kernel(kernel_id).execution_state = "starting"
