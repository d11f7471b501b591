"""Situations a test cannot make with files alone: a private mount namespace (a disk that is
full, a LibTorch folder that is gone, for this one process only) and an unprivileged user (a
read-only folder, which root would still write to)."""
import functools
import os
import shutil
import subprocess


@functools.lru_cache(maxsize=None)
def unshare_flags():
    """unshare's flags for a private mount namespace here, or None: an unprivileged user
    namespace where the kernel allows one, else (as root) a mount namespace alone."""
    if not shutil.which("unshare"):
        return None
    for flags in (["--user", "--map-root-user", "--mount"], ["--mount"]):
        probe = subprocess.run(["unshare", *flags, "sh", "-c", "mount -t tmpfs kd-check /tmp"],
                               capture_output=True, timeout=30)
        if probe.returncode == 0:
            return tuple(flags)
    return None


SETUP_FAILED = 125  # the diagnostic never exits with it


def in_mount_namespace(test, setup, after=""):
    """An argv prefix: runs SETUP (shell, e.g. a mount) in a private mount namespace, then the
    command, then AFTER (e.g. a listing of the mounted folder, which vanishes with the namespace)."""
    flags = unshare_flags()
    if flags is None:
        test.skipTest("no private mount namespace can be made here (unshare)")
    script = f'{setup} || exit {SETUP_FAILED}\n"$@"\nrc=$?\n{after}\nexit $rc'
    return ["unshare", *flags, "sh", "-c", script, "sh"]


NOBODY = 65534


def as_unprivileged(test, *readable):
    """An argv prefix that runs the command as nobody when this is root (else as this user);
    READABLE folders are opened up (0755) so that nobody can reach the files in them."""
    if os.geteuid() != 0:
        return []
    if not shutil.which("setpriv"):
        test.skipTest("root, and no setpriv to run as an unprivileged user")
    for folder in readable:
        os.chmod(folder, 0o755)
    return ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--"]
