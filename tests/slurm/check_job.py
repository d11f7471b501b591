"""Checks one Slurm test job's folder (tests/slurm/run-single-node): the aggregate and every
node's report validate against their schemas and say what the job was set up to show."""
import glob
import json
import os
import sys

import jsonschema

source, folder, node, what = sys.argv[1:5]


def load(path):
    with open(path) as f:
        return json.load(f)


def valid(path, schema):
    data = load(path)
    jsonschema.Draft202012Validator(load(os.path.join(source, "schema", schema))).validate(data)
    return data


def expect(cond, msg):
    if not cond:
        sys.exit(f"{what}: {msg}")


if what == "prolog":  # node-health kept each failing check's report, named by node and job: one the node's fault
    reports = sorted(glob.glob(os.path.join(folder, f"{node}-prolog_slurmd-job*.json")), key=os.path.getmtime)
    expect(len(reports) == 2, f"two kept reports expected, found {os.listdir(folder)}")
    kept = [valid(path, "report.schema.json") for path in reports]
    expect([(r["code"], r["error"]["action"]) for r in kept] == [("GPU_UNAVAILABLE", "fix_environment"),
                                                                  ("GPU_UNAVAILABLE", "drain_node")],
           [(r["code"], r["error"]["action"], r["error"]["signature"]) for r in kept])
    for path, r in zip(reports, kept):
        print(f"  prolog report {os.path.basename(path)}: {r['code']} at {r['stage']}, action {r['error']['action']}")
    sys.exit(0)

if what == "collective":  # L8 over two srun tasks: a rank each, one job
    agg = valid(os.path.join(folder, "aggregate.json"), "aggregate.schema.json")
    expect(agg["exit_code"] == 0, f"aggregate exit {agg['exit_code']}: {agg['failing']} {agg['not_counted']}")
    job = agg["job"]
    expect(job and job["world_size"] == 2 and job["status"] == "passed" and [r["rank"] for r in job["ranks"]] == [0, 1], job)
    for rank in (0, 1):
        r = valid(os.path.join(folder, "reports", f"rank-{rank}.json"), "report.schema.json")
        c = r["collective"]
        expect((r["code"], c["source"], c["world_size"], c["rank"], c["backend"]) ==
               ("SELECTED_TESTS_PASSED", "slurm", 2, rank, "gloo"), (r["code"], c))
        expect(c["all_reduce"]["status"] == "passed" and len(c["bandwidth"]["sizes"]) == 3, c)
    print(f"  collective: {job['reported']} ranks of {job['world_size']}, {job['status']}")
    sys.exit(0)

agg = valid(os.path.join(folder, "aggregate.json"), "aggregate.schema.json")
summary = open(os.path.join(folder, "summary.md")).read()
node_report = os.path.join(folder, "reports", f"{node}.json")
want_exit = {"passed": 0, "failed": 20, "missing": 21}[what]
expect(agg["exit_code"] == want_exit, f"aggregate exit {agg['exit_code']}, want {want_exit}")
expect(agg["counts"]["reports"] == 1, agg["counts"])
if what == "missing":
    expect(not os.path.exists(node_report), "the node wrote a report")
    expect(agg["not_counted"] == [{"report": node_report, "problem": "missing", "message": "No such file or directory"}],
           agg["not_counted"])
    expect("| missing |" in summary, summary)
else:
    r = valid(node_report, "report.schema.json")
    m = agg["machines"][0]
    expect((m["report"], m["run_id"], m["code"], m["exit_code"], m["stage"]) ==
           (node_report, r["run_id"], r["code"], r["exit_code"], r["stage"]), m)
    if what == "passed":
        expect(r["code"] == "CPU_CHECK_PASSED" and agg["codes"] == [{"code": "CPU_CHECK_PASSED", "exit_code": 0, "count": 1}],
               agg["codes"])
        expect(summary.startswith("### kernodeck aggregate: ✅"), summary)
    else:
        expect(r["exit_code"] in (5, 6) and agg["failing"] == [m] and m["layer"] == "L2", m)
        expect(summary.startswith("### kernodeck aggregate: ❌"), summary)
print(f"  aggregate: exit {agg['exit_code']}, {agg['counts']}")
