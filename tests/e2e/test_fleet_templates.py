"""The fleet templates: ci/kubernetes/ (valid YAML asking for nvidia.com/gpu, reports on the shared
volume, the image scripts/image names run as its own user; each container's script, with Kubernetes'
own $(VAR) expansion, run here against this build with /reports in a temporary folder) and ci/slurm/
(bash that parses; KD_IMAGE's Pyxis options, through a stand-in srun that runs each step here; the
real run under Slurm is tests/slurm/run-single-node, label slurm)."""
import glob
import json
import os
import re
import shutil
import subprocess
import unittest

import jsonschema
import yaml

from kd import BIN, BUILD, DiagnosticTest, expected_default_code, read, rendezvous_port, schema_validator, validate

SOURCE = os.path.dirname(os.path.dirname(BUILD.schema))
KUBE = os.path.join(SOURCE, "ci", "kubernetes")
SLURM = os.path.join(SOURCE, "ci", "slurm")
PLACEHOLDER = "registry.example.com"  # the templates' stand-in for the user's registry (docs/fleets.md)


def image_name():
    """The name scripts/image gives the image, in the templates' registry: its own 'localhost/' replaced."""
    name = subprocess.run([os.path.join(SOURCE, "scripts", "image"), "--print-name"], capture_output=True,
                          text=True, check=True).stdout.splitlines()[-1]
    assert name.startswith("localhost/"), name
    return f"{PLACEHOLDER}/{name[len('localhost/'):]}"


def image_user():
    """The Containerfile's USER (uid, gid)."""
    [line] = [line for line in read(os.path.join(SOURCE, "Containerfile")).splitlines() if line.startswith("USER ")]
    return tuple(int(n) for n in line.split()[1].split(":"))
AGGREGATE_SCHEMA = json.load(open(os.path.join(os.path.dirname(BUILD.schema), "aggregate.schema.json")))


def load(name):
    docs = list(yaml.safe_load_all(read(os.path.join(KUBE, name))))
    assert len(docs) == 1, name
    return docs[0]


def pod_spec(doc):
    return doc["spec"] if doc["kind"] == "Pod" else doc["spec"]["template"]["spec"]


def kube_expand(text, env):
    """What the kubelet does to command and args: $(VAR) of a defined VAR is replaced, $$ is a literal $."""
    return re.sub(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)",
                  lambda m: "$" if m[0] == "$$" else env.get(m[1], m[0]), text)


class Kubernetes(DiagnosticTest):
    def test_manifests_parse_and_share_the_reports_volume(self):
        kinds = {name: load(os.path.basename(name))["kind"] for name in glob.glob(os.path.join(KUBE, "*.yaml"))}
        self.assertEqual(sorted(kinds.values()), ["DaemonSet", "Job", "Job", "PersistentVolumeClaim", "Pod", "Service"])
        claim = load("reports-pvc.yaml")
        self.assertEqual(claim["spec"]["accessModes"], ["ReadWriteMany"])
        for name in ("kernodeck-job.yaml", "kernodeck-daemonset.yaml", "kernodeck-aggregate.yaml",
                     "kernodeck-collective-job.yaml"):
            with self.subTest(name=name):
                spec = pod_spec(load(name))
                self.assertEqual(spec["volumes"], [{"name": "reports", "persistentVolumeClaim": {"claimName": claim["metadata"]["name"]}}])
                checks = [c for c in spec.get("initContainers", []) + spec["containers"] if c["name"] != "pause"]
                self.assertEqual(len(checks), 1)
                self.assertEqual(checks[0]["volumeMounts"], [{"name": "reports", "mountPath": "/reports"}])
                gpus = checks[0].get("resources", {}).get("limits", {}).get("nvidia.com/gpu")
                self.assertEqual(gpus, None if name == "kernodeck-aggregate.yaml" else 1, "the aggregate needs no GPU")

    def test_pods_run_the_built_image_as_its_user(self):
        image, (uid, gid) = image_name(), image_user()
        self.assertNotEqual(uid, 0)
        for name in ("kernodeck-job.yaml", "kernodeck-daemonset.yaml", "kernodeck-aggregate.yaml",
                     "kernodeck-collective-job.yaml"):
            with self.subTest(name=name):
                spec = pod_spec(load(name))
                checks = [c for c in spec.get("initContainers", []) + spec["containers"] if c["name"] != "pause"]
                self.assertEqual([c["image"] for c in checks], [image])
                self.assertEqual(spec["securityContext"],
                                 {"runAsNonRoot": True, "runAsUser": uid, "runAsGroup": gid, "fsGroup": gid})

    def test_job_spreads_one_pod_per_node_and_never_retries(self):
        job = load("kernodeck-job.yaml")
        self.assertEqual(job["spec"]["backoffLimit"], 0)
        self.assertEqual(job["spec"]["completions"], job["spec"]["parallelism"])
        [term] = pod_spec(job)["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        self.assertEqual(term["topologyKey"], "kubernetes.io/hostname")
        self.assertEqual(term["labelSelector"]["matchLabels"], job["spec"]["template"]["metadata"]["labels"])

    def test_collective_job_is_indexed_behind_its_headless_service(self):
        job, service = load("kernodeck-collective-job.yaml"), load("kernodeck-collective-service.yaml")
        self.assertEqual((job["spec"]["completionMode"], job["spec"]["backoffLimit"]), ("Indexed", 0))
        self.assertEqual(job["spec"]["completions"], job["spec"]["parallelism"])
        env = {e["name"]: e.get("value") for e in pod_spec(job)["containers"][0]["env"]}
        self.assertEqual(int(env["WORLD_SIZE"]), job["spec"]["completions"])
        self.assertEqual(pod_spec(job)["subdomain"], service["metadata"]["name"])
        self.assertEqual(env["MASTER_ADDR"], f"{job['metadata']['name']}-0.{service['metadata']['name']}")  # pod 0's name
        self.assertEqual((service["spec"]["clusterIP"], service["spec"]["publishNotReadyAddresses"]), ("None", True))
        self.assertEqual(service["spec"]["selector"], job["spec"]["template"]["metadata"]["labels"])
        self.assertEqual(service["spec"]["ports"][0]["port"], int(env["MASTER_PORT"]))

    def test_collective_job_ranks_as_written_meet_and_aggregate_per_rank(self):
        # Two pods' scripts at once, rank 0 on this machine (MASTER_ADDR), Gloo over the CPU (KD_ARGS).
        if not BUILD.collective:
            self.skipTest("this LibTorch has no Gloo process group (test_collective.WithoutGloo)")
        port = str(rendezvous_port())
        reports = os.path.join(self.dir, "reports")
        os.mkdir(reports)
        pods = [self.run_container("kernodeck-collective-job.yaml",
                                   {"JOB_UID": "7a1b", "JOB_COMPLETION_INDEX": str(i), "MASTER_ADDR": "127.0.0.1",
                                    "MASTER_PORT": port, "KD_ARGS": "--device cpu"}, reports, wait=False)
                for i in (0, 1)]
        for p in pods:
            out, err = p.communicate(timeout=150)
            self.assertEqual(p.returncode, 0, out[-2000:] + err)
        for i in (0, 1):
            data = json.loads(read(os.path.join(reports, "kernodeck-collective-7a1b", f"rank-{i}.json")))
            validate(data)
            self.assertEqual((data["collective"]["source"], data["collective"]["rank"]), ("kubernetes", i))
        p = self.run_container("kernodeck-aggregate.yaml", {"KD_RUN": f"{reports}/kernodeck-collective-7a1b"}, reports)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("Job (L8 collective): 2 ranks of 2 reported; passed", p.stdout)

    def run_container(self, name, env, reports, wait=True):
        """The check container's script as the kubelet would start it, /reports being REPORTS here."""
        spec = pod_spec(load(name))
        [c] = [c for c in spec.get("initContainers", []) + spec["containers"] if c["name"] != "pause"]
        self.assertEqual(c["command"], ["/bin/sh", "-c"])
        script = kube_expand(c["args"][0], env).replace("/reports", reports)
        bin_dir = os.path.join(self.dir, "bin")
        os.makedirs(bin_dir, exist_ok=True)
        if not os.path.exists(os.path.join(bin_dir, "kernodeck-diagnostic")):
            os.symlink(BIN, os.path.join(bin_dir, "kernodeck-diagnostic"))
        # What the manifest defines, what an Indexed Job's pods get, and the aggregate's documented KD_RUN.
        defined = {e["name"] for e in c.get("env", [])} | {"JOB_COMPLETION_INDEX", "KD_RUN"}
        self.assertLessEqual(set(env) - {"PATH"}, defined, "the test sets only what the manifest defines")
        literal = {e["name"]: e["value"] for e in c.get("env", []) if "value" in e}  # as the kubelet sets them
        script = kube_expand(c["args"][0], {**literal, **env}).replace("/reports", reports)
        argv = ["/bin/sh", "-c", script]
        environ = {**os.environ, **literal, **env, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
        if not wait:
            return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environ)
        return subprocess.run(argv, capture_output=True, text=True, timeout=120, env=environ)

    def test_job_then_aggregate_as_written(self):
        code, exit_code = expected_default_code()
        reports = os.path.join(self.dir, "reports")
        os.mkdir(reports)
        for node in ("gpu-node-1", "gpu-node-2"):
            p = self.run_container("kernodeck-job.yaml", {"NODE_NAME": node, "JOB_UID": "0f3c"}, reports)
            self.assertEqual(p.returncode, exit_code, p.stdout[-2000:] + p.stderr)
            data = json.loads(read(os.path.join(reports, "kernodeck-check-0f3c", f"{node}.json")))
            validate(data)
            self.assertEqual(data["code"], code)
        p = self.run_container("kernodeck-aggregate.yaml", {}, reports)
        self.assertEqual(p.returncode, 20 if exit_code else 0, p.stdout + p.stderr)
        agg = json.loads(read(os.path.join(reports, "kernodeck-check-0f3c.aggregate.json")))
        schema_validator(AGGREGATE_SCHEMA).validate(agg)
        self.assertEqual([m["report"] for m in agg["machines"]],
                         [f"{reports}/kernodeck-check-0f3c/gpu-node-{i}.json" for i in (1, 2)])
        self.assertTrue(os.path.exists(os.path.join(reports, "kernodeck-check-0f3c.summary.md")))

    def test_daemonset_check_writes_a_new_report_per_start(self):
        code, exit_code = expected_default_code()
        reports = os.path.join(self.dir, "reports")
        os.mkdir(reports)
        p = self.run_container("kernodeck-daemonset.yaml", {"NODE_NAME": "gpu-node-1"}, reports)
        self.assertEqual(p.returncode, exit_code, p.stdout[-2000:] + p.stderr)
        [name] = os.listdir(os.path.join(reports, "daemonset"))
        self.assertRegex(name, r"^gpu-node-1-\d{8}T\d{6}Z\.json$")
        validate(json.loads(read(os.path.join(reports, "daemonset", name))))


class Slurm(unittest.TestCase):
    def test_scripts_parse_and_ask_for_one_task_per_node(self):
        for name in ("kernodeck.sbatch", "node-health", "kernodeck-collective.sbatch"):
            path = os.path.join(SLURM, name)
            self.assertTrue(os.access(path, os.X_OK), name)
            p = subprocess.run(["bash", "-n", path], capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, p.stderr)
        text = read(os.path.join(SLURM, "kernodeck.sbatch"))
        self.assertIn("#SBATCH --ntasks-per-node=1\n", text)
        self.assertIn('srun "${container[@]}" --nodes="$SLURM_JOB_NUM_NODES" --ntasks-per-node=1', text)
        self.assertIn('"$diag" aggregate ', text)
        collective = read(os.path.join(SLURM, "kernodeck-collective.sbatch"))
        self.assertIn("--layers L8", collective)  # every task a rank; its report named by rank for the aggregate
        self.assertIn('rank-$SLURM_PROCID.json', collective)


# Pyxis' srun, standing in: records its arguments (a JSON list per call), then runs the step's command here as
# one task on one node, node-1 (what the image would run).
SRUN = """#!/bin/bash
python3 -c 'import json, sys; print(json.dumps(sys.argv[1:]))' "$@" >> "$KD_SRUN_LOG"
while [ $# -gt 0 ] && [[ $1 == -* ]]; do shift; done
SLURMD_NODENAME=node-1 SLURM_PROCID=0 SLURM_LOCALID=0 SLURM_STEP_NUM_TASKS=1 SLURM_STEP_NODELIST=node-1 exec "$@"
"""


class SlurmImage(DiagnosticTest):
    """KD_IMAGE: every srun of the batch scripts, the aggregate's too, gets Pyxis' --container-image (the image
    scripts/image names, in Enroot's form) and the job's folder mounted."""

    def sbatch(self, name, env):
        bin_dir = os.path.join(self.dir, "bin")
        os.makedirs(bin_dir, exist_ok=True)
        for tool, text in (("srun", SRUN), ("scontrol", "#!/bin/sh\necho node-1\n")):  # scontrol show hostnames
            with open(os.path.join(bin_dir, tool), "w") as f:
                f.write(text)
            os.chmod(os.path.join(bin_dir, tool), 0o755)
        if not os.path.exists(os.path.join(bin_dir, "kernodeck-diagnostic")):
            os.symlink(BIN, os.path.join(bin_dir, "kernodeck-diagnostic"))
        log = os.path.join(self.dir, "srun.log")
        open(log, "w").close()
        environ = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "KD_SRUN_LOG": log, "SLURM_JOB_ID": "42",
                   "SLURM_SUBMIT_DIR": self.dir, "SLURM_JOB_NUM_NODES": "1", "SLURM_JOB_NODELIST": "node-1",
                   "SLURM_NTASKS": "1", "KD_ARGS": "--device cpu", **env}
        p = subprocess.run(["bash", os.path.join(SLURM, name)], env=environ, capture_output=True, text=True, timeout=180)
        with open(log) as f:
            calls = [json.loads(line) for line in f]
        return p, calls, os.path.join(self.dir, "kernodeck-reports", "job-42")

    def check_job(self, p, job, report):
        self.assertEqual(p.returncode, 0, p.stdout[-2000:] + p.stderr)
        validate(json.loads(read(os.path.join(job, "reports", report))))
        schema_validator(AGGREGATE_SCHEMA).validate(json.loads(read(os.path.join(job, "aggregate.json"))))

    def test_every_step_runs_in_the_image(self):
        image = image_name()
        enroot = image.replace("/", "#", 1)  # registry.example.com#kernodeck-conformance:0.1.0
        for name, report in (("kernodeck.sbatch", "node-1.json"), ("kernodeck-collective.sbatch", "rank-0.json")):
            with self.subTest(name=name):
                if name.startswith("kernodeck-collective") and not BUILD.collective:
                    self.skipTest("this LibTorch has no Gloo process group (test_collective.WithoutGloo)")
                shutil.rmtree(os.path.join(self.dir, "kernodeck-reports"), ignore_errors=True)
                env = {"KD_IMAGE": image, "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(rendezvous_port())}
                p, calls, job = self.sbatch(name, env)
                self.check_job(p, job, report)
                self.assertEqual(len(calls), 2, calls)  # the check's step, then the aggregate's
                for call in calls:
                    self.assertEqual(call[:2], [f"--container-image={enroot}", f"--container-mounts={job}:{job}"])
                self.assertEqual(calls[1][2:5], ["--nodes=1", "--ntasks=1", "kernodeck-diagnostic"])
                self.assertEqual(calls[1][5], "aggregate")

    def test_a_squashfs_file_is_named_as_it_is_and_no_image_means_no_container(self):
        sqsh = os.path.join(self.dir, "kernodeck.sqsh")
        open(sqsh, "w").close()
        p, calls, job = self.sbatch("kernodeck.sbatch", {"KD_IMAGE": sqsh})
        self.check_job(p, job, "node-1.json")
        self.assertEqual([c[0] for c in calls], [f"--container-image={sqsh}"] * 2)
        shutil.rmtree(job)
        p, calls, job = self.sbatch("kernodeck.sbatch", {})
        self.check_job(p, job, "node-1.json")
        self.assertEqual(len(calls), 1, "without KD_IMAGE the aggregate runs in the batch step")
        self.assertFalse([a for a in calls[0] if a.startswith("--container")], calls)


if __name__ == "__main__":
    unittest.main()
