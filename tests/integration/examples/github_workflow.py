#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The GitHub workflow .github/workflows/prewarm-bundle.yml, linted and run.

Lint: every job runs somewhere and needs only jobs that exist; every step runs
a script or uses an action pinned to a major version; every ${{ }} expression
names a context GitHub provides; every `run:` script parses (bash -n); the
image job's --build-arg names are ARGs of docker/Dockerfile; every file the
steps name exists.

Run: the plan, shard and merge jobs' own `run:` scripts, in the order the
jobs need each other, in a copy of the repository, with this build's binaries
as the tools artifact, the artifacts passed as directories, test keys as the
secrets, one shard job per matrix entry, and a small manifest instead of the
default one (the same steps; seconds instead of minutes). `./setup.sh` steps
(package installs, the Intel root) are what CI's own setup did already: they
are stubbed. The merged bundle must verify with the release key. The image
job is docker's: the container tests build the same Dockerfile with buildah.

Usage: github_workflow.py SOURCE_DIR PREWARM PREWARM_RUNTIME
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import yaml

CONTEXTS = {"github", "env", "vars", "job", "jobs", "steps", "runner", "secrets", "strategy", "matrix", "needs",
            "inputs"}
FUNCTIONS = {"fromJSON", "toJSON", "format", "hashFiles", "contains", "startsWith", "endsWith", "join", "success",
             "failure", "always", "cancelled"}


def fail(message):
    print(f"github-workflow: FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def expressions(text):
    return re.findall(r"\$\{\{(.*?)\}\}", text)


def lint(workflow, source_dir):
    problems = []
    jobs = workflow.get("jobs") or {}
    if not jobs:
        problems.append("no jobs")
    dockerfile = open(os.path.join(source_dir, "docker/Dockerfile"), encoding="utf-8").read()
    dockerfile_args = set(re.findall(r"^ARG\s+(.*)$", dockerfile, flags=re.M))
    dockerfile_args = {a.split("=")[0] for line in dockerfile_args for a in line.split()}
    for name, job in jobs.items():
        if "runs-on" not in job:
            problems.append(f"job {name}: no runs-on")
        needs = job.get("needs", [])
        for need in [needs] if isinstance(needs, str) else needs:
            if need not in jobs:
                problems.append(f"job {name}: needs {need}, which is not a job")
        for i, step in enumerate(job.get("steps", [])):
            where = f"job {name} step {i + 1} ({step.get('name', step.get('uses', 'run'))})"
            if ("run" in step) == ("uses" in step):
                problems.append(f"{where}: needs exactly one of run and uses")
            if "uses" in step and not re.fullmatch(r"[\w.-]+/[\w.-]+@v\d+", step["uses"]):
                problems.append(f"{where}: {step['uses']} is not pinned to a major version")
            if "run" in step:
                script = re.sub(r"\$\{\{.*?\}\}", "X", step["run"])
                check = subprocess.run(["bash", "-n"], input=script, text=True, capture_output=True)
                if check.returncode != 0:
                    problems.append(f"{where}: bash -n: {check.stderr.strip()}")
                for arg in re.findall(r"--build-arg\s+([A-Z_]+)=", step["run"]):
                    if arg not in dockerfile_args:
                        problems.append(f"{where}: --build-arg {arg} is not an ARG of docker/Dockerfile")
                for path in re.findall(r"(?<![\w/$.-])((?:docker|manifests|keys)/[\w./-]+)", step["run"]):
                    if not path.startswith("keys/") and not os.path.exists(os.path.join(source_dir, path)):
                        problems.append(f"{where}: {path} does not exist")
    for expression in expressions(yaml.safe_dump(workflow)):
        for word in re.findall(r"(?<![\w.'\"-])([A-Za-z_][\w-]*)(?=[.(\[])", expression):
            if word not in CONTEXTS and word not in FUNCTIONS:
                problems.append(f"${{{{{expression}}}}}: {word} is not a context or function GitHub provides")
    return problems


def substitute(text, values):
    def one(match):
        expression = match.group(1).strip()
        if expression in values:
            return values[expression]
        fail(f"the script step uses ${{{{ {expression} }}}}, which this runner does not provide")
    return re.sub(r"\$\{\{(.*?)\}\}", one, text)


def run_step(job, step, workspace, env, values):
    script = substitute(step["run"], values)
    result = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=workspace, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    print(f"--- {job}: {step.get('name', script.splitlines()[0])} (exit {result.returncode})\n{result.stdout}",
          file=sys.stderr)
    if result.returncode != 0:
        fail(f"job {job}: step '{step.get('name', script.splitlines()[0])}' exited {result.returncode}")
    return result.stdout


def main(argv):
    source_dir, prewarm, runtime = argv[1], argv[2], argv[3]
    workflow = yaml.safe_load(open(os.path.join(source_dir, ".github/workflows/prewarm-bundle.yml"), encoding="utf-8"))
    problems = lint(workflow, source_dir)
    for p in problems:
        print(f"github-workflow: lint: {p}", file=sys.stderr)
    if problems:
        fail(f"{len(problems)} lint problems")
    print("github-workflow: lint: clean", file=sys.stderr)

    scratch = tempfile.mkdtemp(prefix="prewarm-gh-")
    try:
        return run_jobs(workflow, source_dir, prewarm, runtime, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def run_jobs(workflow, source_dir, prewarm, runtime, scratch):
    # The keys the secrets hold; the committed .pub files of the repository.
    keys = os.path.join(scratch, "keys")
    os.makedirs(keys)
    for name in ("ci-shard", "release"):
        subprocess.run([prewarm, "keygen", "--out", os.path.join(keys, f"test_only_{name}")], check=True,
                       capture_output=True)
    secrets = {}
    secrets["secrets.PREWARM_SHARD_KEY"] = open(os.path.join(keys, "test_only_ci-shard.key")).read()
    secrets["secrets.PREWARM_RELEASE_KEY"] = open(os.path.join(keys, "test_only_release.key")).read()

    # A small manifest with two jobs, so that two shards each get one.
    manifest = os.path.join(scratch, "manifest.yaml")
    with open(manifest, "w") as f:
        f.write("version: 1\nmodels:\n  - name: quick\n    command:\n"
                "      argv: ['mkdir -p \"$POCL_CACHE_DIR/k\" && echo \"kernel {precision}\" >\"$POCL_CACHE_DIR/k/bin\"']\n"
                "      shell: true\n      kinds: [pocl]\n      verify: off\n"
                "precisions: [fp32, fp16]\ntargets: [cpu]\nbundle:\n  channel: ci/workflow\n")

    # CI's own package installs (apt-get in the job containers) are done on
    # this host already: a stub answers them, so the test changes nothing here.
    stubs = os.path.join(scratch, "stubs")
    os.makedirs(stubs)
    with open(os.path.join(stubs, "apt-get"), "w") as f:
        f.write("#!/bin/sh\nexit 0\n")
    os.chmod(os.path.join(stubs, "apt-get"), 0o755)

    def workspace(job):
        """actions/checkout: a fresh copy of the repository, with the keys and a stub setup.sh."""
        path = os.path.join(scratch, "ws-" + job)
        shutil.copytree(source_dir, path, ignore=shutil.ignore_patterns("build", "build-*", ".git", "out"))
        os.makedirs(os.path.join(path, "keys"), exist_ok=True)
        shutil.copy(os.path.join(keys, "test_only_ci-shard.pub"), os.path.join(path, "keys/ci-shard.pub"))
        shutil.copy(os.path.join(keys, "test_only_release.pub"), os.path.join(path, "keys/release.pub"))
        with open(os.path.join(path, "setup.sh"), "w") as f:
            f.write("#!/bin/sh\n# CI's own setup installed the packages and the Intel root already.\nexit 0\n")
        os.chmod(os.path.join(path, "setup.sh"), 0o755)
        subprocess.run(["git", "init", "-q"], cwd=path, check=True)
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "t"],
                       cwd=path, check=True, env={**os.environ, "GIT_COMMITTER_DATE": "2026-11-27T00:00:00Z",
                                                 "GIT_AUTHOR_DATE": "2026-11-27T00:00:00Z"})
        return path

    artifacts = {"tools": os.path.join(scratch, "artifact-tools")}
    os.makedirs(artifacts["tools"])
    shutil.copy(prewarm, os.path.join(artifacts["tools"], "prewarm"))
    shutil.copy(runtime, os.path.join(artifacts["tools"], "prewarm-runtime"))
    # The tools job carries the full command line beside the front, where the front looks for it.
    shutil.copy(os.path.join(os.path.dirname(os.path.realpath(runtime)), "prewarm-runtime-full"),
                os.path.join(artifacts["tools"], "prewarm-runtime-full"))

    jobs = workflow["jobs"]
    outputs = {}
    base_env = {**os.environ, "PATH": stubs + os.pathsep + os.environ.get("PATH", ""),
                "PREWARM_MANIFEST": manifest, "PREWARM_SHARDS": "2",
                "IMAGE": "ghcr.io/example/app"}

    def run_job(name, matrix=None):
        job = jobs[name]
        ws = workspace(name + ("-" + matrix["slug"] if matrix else ""))
        runner_temp = os.path.join(ws, ".runner-temp")
        os.makedirs(runner_temp)
        output_file = os.path.join(runner_temp, "output")
        open(output_file, "w").close()
        env = {**base_env, "RUNNER_TEMP": runner_temp, "GITHUB_OUTPUT": output_file}
        values = dict(secrets)
        values.update({"github.sha": "0" * 40})
        for key, value in (matrix or {}).items():
            values[f"matrix.{key}"] = str(value)
        for step in job["steps"]:
            uses = step.get("uses", "")
            if uses.startswith("actions/download-artifact"):
                spec = step.get("with", {})
                target = os.path.join(ws, spec["path"])
                if "pattern" in spec:
                    prefix = spec["pattern"].rstrip("*")
                    for artifact, path in artifacts.items():
                        if artifact.startswith(prefix):
                            shutil.copytree(path, target, dirs_exist_ok=True)
                else:
                    shutil.copytree(artifacts[spec["name"]], target, dirs_exist_ok=True)
            elif uses.startswith("actions/upload-artifact"):
                spec = step["with"]
                name_value = substitute(spec["name"], values)
                artifacts[name_value] = os.path.join(scratch, "artifact-" + name_value.replace("/", "_"))
                shutil.copytree(os.path.join(ws, spec["path"]), artifacts[name_value])
            elif uses:
                continue  # checkout (done), caches, docker's actions
            elif "if" in step and "matrix.runner == 'cpu'" in step["if"] and (matrix or {}).get("runner") != "cpu":
                continue
            else:
                for key, value in step.get("env", {}).items():
                    env[key] = substitute(str(value), values)
                run_step(name, step, ws, env, values)
        for line in open(output_file):
            key, _, value = line.rstrip("\n").partition("=")
            outputs[f"needs.{name}.outputs.{key}"] = value
        return ws

    # tools: its artifact is this build's binaries. plan -> shard (matrix) -> merge.
    run_job("plan")
    matrix = json.loads(outputs["needs.plan.outputs.matrix"])
    entries = matrix["include"]
    if len(entries) != 2:
        fail(f"the plan made {len(entries)} shards of 2 jobs with --shards 2: {entries}")
    for entry in entries:
        if entry.get("runner") != "cpu":
            fail(f"a CPU-only manifest's shard asks for runner {entry.get('runner')}")
        run_job("shard", entry)
    ws = run_job("merge")
    bundle = os.path.join(ws, "prebuilt-bundle")
    verify = subprocess.run([runtime, "verify", bundle, "--trust", os.path.join(keys, "test_only_release.pub")],
                            text=True, capture_output=True)
    if verify.returncode != 0:
        fail(f"the merged bundle does not verify with the release key: {verify.stderr}")
    print(f"github-workflow: PASS: lint clean; plan -> {len(entries)} shards -> merge ran as the workflow says; "
          "the merged bundle verifies with the release key", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
