"""The CI templates in ci/: valid YAML with what each CI needs, and their own commands, run
here against this build, give the report, the summary and a JUnit file CI servers can read."""
import glob
import json
import os
import re
import shutil
import subprocess
import tempfile
import unittest
import xml.etree.ElementTree as ET

import yaml

from ctest_run import BUILD, SOURCE, CTestCase, cmake_string
from kd import BIN, expected_default_code, read, validate

TEMPLATES = sorted(glob.glob(os.path.join(SOURCE, "ci", "*.yml")))


def load(name):
    return yaml.safe_load(read(os.path.join(SOURCE, "ci", name)))


def version():
    return re.search(r"^project\([^)]* VERSION ([0-9.]+)", read(os.path.join(SOURCE, "CMakeLists.txt")), re.M)[1]


def github_steps():
    return {s.get("id") or s.get("name") or s.get("uses"): s for s in load("github-actions.yml")["jobs"]["gpu-check"]["steps"]}


class Templates(unittest.TestCase):
    def test_every_template_is_yaml(self):
        self.assertGreaterEqual(len(TEMPLATES), 2)
        for path in TEMPLATES:
            with self.subTest(path=os.path.basename(path)):
                self.assertIsInstance(yaml.safe_load(read(path)), dict)

    def test_github_workflow(self):
        wf = load("github-actions.yml")
        self.assertIn("on", wf, "quote 'on': YAML 1.1 reads a bare on as true")
        on = wf["on"]
        self.assertIn("workflow_dispatch", on)  # by hand
        self.assertEqual(on["push"], {"branches": ["main"], "tags": ["v*"]}, "a GPU job on every push of every branch")
        self.assertEqual(set(on) - {"workflow_dispatch", "push", "schedule"}, set(), on)  # no pull_request: no GPU for forks
        self.assertTrue(all(len(s["cron"].split()) == 5 for s in on.get("schedule", [])), on)
        job = wf["jobs"]["gpu-check"]
        self.assertEqual(job["runs-on"], ["self-hosted", "linux", "x64", "gpu"])
        self.assertEqual(job["if"], "github.ref_type != 'tag'")  # a tag runs only the image job
        steps = github_steps()
        self.assertIn("--summary-md", steps["check"]["run"])
        self.assertIn("-L conformance", steps["Layer by layer (CTest, JUnit)"]["run"])
        self.assertIn('>> "$GITHUB_STEP_SUMMARY"', steps["Job summary"]["run"])
        upload = next(s for s in steps.values() if str(s.get("uses", "")).startswith("actions/upload-artifact"))
        self.assertEqual(upload["if"], "always()")  # kept on failure too
        self.assertEqual(upload["with"]["path"], "${{ runner.temp }}/kernodeck/")

    def test_github_image_job_pushes_what_scripts_image_built(self):
        job = load("github-actions.yml")["jobs"]["image"]
        self.assertEqual(job["if"], "github.ref_type == 'tag'")
        self.assertEqual(job["permissions"], {"contents": "read", "packages": "write"})
        build, push = job["steps"][1:]
        self.assertEqual(push["env"]["IMAGE"], "${{ steps.%s.outputs.name }}" % build["id"])
        self.assertIn('docker push "$IMAGE"', push["run"])
        # The build step as written, scripts/image told to print the name it would build (nothing is built).
        tag = "ghcr.io/${GITHUB_REPOSITORY,,}/kernodeck-conformance"
        self.assertIn(f'scripts/image --engine docker --tag "{tag}" | tail -n 1', build["run"])
        output = os.path.join(tempfile.mkdtemp(), "output")
        self.addCleanup(shutil.rmtree, os.path.dirname(output))
        script = build["run"].replace("scripts/image ", os.path.join(SOURCE, "scripts", "image") + " --print-name ")
        subprocess.run(["bash", "-eo", "pipefail", "-c", script], check=True,
                       env={**os.environ, "GITHUB_REPOSITORY": "Owner/Repo", "GITHUB_OUTPUT": output})
        self.assertEqual(read(output), "name=ghcr.io/owner/repo/kernodeck-conformance:%s\n" % version())

    def test_gitlab_job(self):
        job = load("gitlab-ci.yml")["kernodeck-conformance"]
        self.assertEqual(job["tags"], ["gpu"])
        self.assertEqual(job["artifacts"]["when"], "always")
        self.assertEqual(job["artifacts"]["reports"]["junit"], "kernodeck-out/kernodeck-junit.xml")
        self.assertIn("kernodeck-out/", job["artifacts"]["paths"])
        self.assertTrue(any("--output kernodeck-out/kernodeck-report.json" in line for line in job["script"]))


class TemplateCommands(CTestCase):
    """The templates' commands as written (the build step aside: this build is used)."""

    def project(self):
        """A folder shaped like the CI checkout: build/ is this build's diagnostic and conformance tests."""
        root = os.path.join(self.dir, "project")
        build = os.path.join(root, "build")
        os.makedirs(build)
        os.symlink(BIN, os.path.join(build, "kernodeck-diagnostic"))  # finds its probe beside the real file
        self.write_ctest_dir(build, [f"subdirs({cmake_string(os.path.join(BUILD, 'ctest'))})"])
        return root

    def bash(self, script, cwd, env):
        # How the runners start a script: bash with errexit (GitHub adds pipefail, GitLab too).
        return subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script], cwd=cwd,
                              env={**os.environ, **env}, capture_output=True, text=True, timeout=600)

    def check_outputs(self, report, summary, junit):
        code, exit_code = expected_default_code()
        data = json.loads(read(report))
        validate(data)
        self.assertEqual((data["code"], data["exit_code"]), (code, exit_code))
        self.assertIn(f"| Verdict | `{code}` (exit {exit_code}), ", read(summary))
        self.assertJUnitValid(junit)
        cases = {c.get("name"): c for c in ET.parse(junit).getroot().iter("testcase")}
        self.assertIn("conformance.L1", cases)
        if exit_code:
            failed = [n for n, c in cases.items() if c.get("status") == "fail"]
            self.assertEqual(len(failed), 1, list(cases))
            self.assertIn(f"Verdict: {code} (exit {exit_code}) at stage {data['stage']}",
                          cases[failed[0]].find("system-out").text)
        return exit_code

    def test_gitlab_script(self):
        root = self.project()
        job = load("gitlab-ci.yml")["kernodeck-conformance"]
        proc = self.bash("\n".join(job["script"]), root, {"CI_PROJECT_DIR": root})
        out = os.path.join(root, "kernodeck-out")
        exit_code = self.check_outputs(os.path.join(out, "kernodeck-report.json"),
                                       os.path.join(out, "kernodeck-summary.md"), os.path.join(root, job["artifacts"]["reports"]["junit"]))
        self.assertEqual(proc.returncode != 0, exit_code != 0, proc.stdout[-3000:] + proc.stderr[-2000:])

    def test_github_steps(self):
        root = self.project()
        temp = os.path.join(self.dir, "runner-temp")
        os.mkdir(temp)
        page = os.path.join(self.dir, "step-summary.md")
        with open(page, "w") as f:
            f.write("earlier step\n")
        env = {"RUNNER_TEMP": temp, "GITHUB_STEP_SUMMARY": page}
        steps = github_steps()
        rcs = [self.bash(steps[name]["run"], root, env).returncode
               for name in ("Prepare the output folder", "check", "Layer by layer (CTest, JUnit)", "Job summary")]
        out = os.path.join(temp, "kernodeck")
        exit_code = self.check_outputs(os.path.join(out, "kernodeck-report.json"),
                                       os.path.join(out, "kernodeck-summary.md"), os.path.join(out, "kernodeck-junit.xml"))
        self.assertEqual(rcs[0], 0)
        self.assertEqual(rcs[1], exit_code)  # the check step fails exactly when the check fails
        self.assertEqual(rcs[3], 0)
        self.assertEqual(read(page), "earlier step\n" + read(os.path.join(out, "kernodeck-summary.md")))


if __name__ == "__main__":
    unittest.main()
