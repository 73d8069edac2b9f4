"""Start a command where this account may make no user namespace, as on a host with
``sysctl user.max_user_namespaces=0``, without touching the host's sysctl.

Usage: python -I tests/helpers/no_user_namespaces.py COMMAND [ARG...]   (as an ordinary account)

The launcher enters a user namespace of its own (``unshare(CLONE_NEWUSER)``) that maps the account's uid
and gid to themselves, so the command runs as the same account, seeing the same files. The
``/proc/sys/user/max_*`` limits are kept per user namespace, and writable by a process holding
``CAP_SYS_RESOURCE`` in it (kernel/ucount.c), which the launcher holds until it ``execve``s the command
(that drops every capability: its uid in the namespace is not 0): it sets ``max_user_namespaces`` to 0
there, as bubblewrap's own ``--disable-userns`` does with 1. A new user namespace is then counted against
that limit and refused with ENOSPC, bwrap's "Creating new namespace failed: nesting depth or
/proc/sys/user/max_*_namespaces exceeded (ENOSPC)", the words it says on such a host. The command cannot
raise the limit again (no capability left), and nothing outside the namespace changes.
"""

import ctypes
import os
import sys

CLONE_NEWUSER = 0x10000000


def forbid_user_namespaces() -> None:
    """Enter a user namespace mapping this account to itself, where no further one may be made."""
    uid, gid = os.getuid(), os.getgid()
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(CLONE_NEWUSER) != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"unshare(CLONE_NEWUSER): {os.strerror(error)}")
    for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
        with open(f"/proc/self/{name}", "w") as file:
            file.write(text)
    with open("/proc/sys/user/max_user_namespaces", "w") as file:
        file.write("0")


if __name__ == "__main__":
    forbid_user_namespaces()
    os.execvp(sys.argv[1], sys.argv[1:])
