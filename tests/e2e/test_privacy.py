"""The report holds technical facts only: no paths, no environment, no user, home or host names.
Runs with planted values (an environment variable whose name and value are secrets, HOME and the
working folder under marker names, a marker user name in /etc/passwd) and looks for them."""
import json
import os
import re
import socket
import unittest

from kd import BUILD, HAVE_PROBE, DiagnosticTest, copy_alone, loaded_library, needs_probe, read
from sandbox import SETUP_FAILED, in_mount_namespace

MARKER = "kdPrivateMarker7"
# A path where one would start (at the beginning, after a space, quote, '=', bracket, comma or ':').
ABSOLUTE_PATH = re.compile(r"(?:^|[\s'\"`=(\[{<,:])~?/[^\s/]")


def strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings(v)


class Privacy(DiagnosticTest):
    def setUp(self):
        super().setUp()
        self.home = os.path.join(self.dir, f"home-{MARKER}")
        self.work = os.path.join(self.home, f"work-{MARKER}")
        os.makedirs(self.work)
        self.env = dict(os.environ, HOME=self.home, USER=f"{MARKER}user", LOGNAME=f"{MARKER}user",
                        KD_SECRET_TOKEN=f"secret-{MARKER}", **{f"{MARKER}_NAME": "x"})

    def planted_run(self, *args, probe=None, env=None, prefix=()):
        """Runs a copy of the diagnostic under the marker folders; returns (result, report text)."""
        binary = copy_alone(self, BUILD, probe=probe, folder=self.work)
        report = os.path.join(self.work, "report.json")
        r = self.run_kd(*args, "--output", report, report=False, binary=binary, env=env or self.env, cwd=self.work,
                        prefix=prefix)
        self.assertNotEqual(r.rc, SETUP_FAILED, r.stderr)
        text = read(report)
        self.assertEqual(json.loads(text)["exit_code"], r.rc)
        return r, text

    def assertPrivate(self, text):
        self.assertNotIn(MARKER, text)
        self.assertNotIn(self.dir, text)
        self.assertNotIn("KD_SECRET_TOKEN", text)
        host = socket.gethostname()
        if len(host) >= 3:
            self.assertNotIn(host, text)
        for s in strings(json.loads(text)):
            self.assertIsNone(ABSOLUTE_PATH.search(s), f"a path in the report: {s!r}")

    def test_error_message_naming_a_planted_path(self):
        r, text = self.planted_run("--device", "cpu")  # no probe beside it: the message names its path
        found_libtorch = HAVE_PROBE or bool(BUILD.torch_unbuildable)  # then its absence is the suite's gap (19)
        self.assertEqual(r.rc, 19 if found_libtorch else 3, r.stdout[-2000:])
        self.assertPrivate(text)
        self.assertIn("<path>/libkd_probe.so", json.loads(text)["error"]["message"])

    @needs_probe
    def test_every_fact_of_a_full_run(self):
        r, text = self.planted_run("--device", "cpu", probe=BUILD.probe)
        self.assertEqual(r.rc, 0, r.stdout[-2000:])
        self.assertPrivate(text)

    @needs_probe
    def test_loader_error_is_redacted_to_its_first_line(self):
        soname, _ = loaded_library(self, BUILD, "libc10.so")
        libs = os.path.join(self.work, "libs")
        os.mkdir(libs)
        open(os.path.join(libs, soname), "wb").close()
        r, text = self.planted_run("--device", "cpu", probe=BUILD.probe, env=dict(self.env, LD_LIBRARY_PATH=libs))
        self.assertEqual(r.rc, 4, r.stdout[-2000:])
        self.assertPrivate(text)
        self.assertEqual(json.loads(text)["error"]["message"], f"<path>/{soname}: file too short")

    @needs_probe
    def test_a_planted_user_name(self):
        # The user database itself says the marker name and home, in a private mount namespace.
        passwd = os.path.join(self.dir, "passwd")
        with open(passwd, "w") as f:
            f.write(f"{MARKER}user:x:0:0:{MARKER} user:{self.home}:/bin/sh\n" + read("/etc/passwd"))
        prefix = in_mount_namespace(self, f"mount --bind '{passwd}' /etc/passwd && [ \"$(id -un)\" = {MARKER}user ]")
        env = {k: v for k, v in self.env.items() if k not in ("USER", "LOGNAME")}
        r, text = self.planted_run("--device", "cpu", probe=BUILD.probe, env=env, prefix=prefix)
        self.assertEqual(r.rc, 0, r.stdout[-2000:] + r.stderr[-2000:])
        self.assertPrivate(text)


if __name__ == "__main__":
    unittest.main()
