#!/usr/bin/env python3
"""Byte-for-byte checks of the CLI's JSON on a fixed set of random cases.

`record CLI FILE` runs every case of a deterministic random set through the CLI
and stores its exit status and standard output; `check CLI FILE` runs the same
argument lists again and fails on any difference. Timing fields and the host's
thread count are the only values masked: they describe the machine, not the
sampling. The set covers trace (every pipeline, steps, histories, files with
vocabularies), diff, histogram, batch and compare.
"""
import json
import random
import re
import subprocess
import sys

PIPELINES = ["spec", "vllm", "sglang", "hf", "llamacpp", "flashinfer-joint", "flashinfer-topk-first"]
MASKED = re.compile(r'("(?:seconds|reference_seconds|engine_seconds|device)": )("[^"]*"|[-0-9.e+]+)')


def values(rng, v):
    style = rng.random()
    if style < 0.2:  # ties
        return ",".join(str(rng.choice([0, 1, 2, 1.5])) for _ in range(v))
    if style < 0.3:  # with -inf
        return ",".join("-inf" if rng.random() < 0.3 else f"{rng.gauss(0, 2):.6g}" for _ in range(v - 1)) + ",3"
    return ",".join(f"{rng.gauss(0, rng.choice([0.5, 2, 5])):.9g}" for _ in range(v))


def params(rng, v):
    a = []
    if rng.random() < 0.7:
        a += ["--temperature", rng.choice(["0", "0.5", "0.7", "1", "1.3", "2", "1e-6", "0.01"])]
    if rng.random() < 0.5:
        a += ["--top-k", str(rng.choice([0, 1, 2, 3, 5, v, v + 3]))]
    if rng.random() < 0.5:
        a += ["--top-p", rng.choice(["0", "0.3", "0.5", "0.8", "0.9", "0.95", "1"])]
    if rng.random() < 0.4:
        a += ["--min-p", rng.choice(["0", "0.05", "0.1", "0.3", "1"])]
    if rng.random() < 0.3:
        a += ["--repetition-penalty", rng.choice(["1", "1.1", "1.5", "0.8"])]
    if rng.random() < 0.3:
        a += ["--presence-penalty", rng.choice(["0", "0.5", "-0.5", "1.5"])]
    if rng.random() < 0.3:
        a += ["--frequency-penalty", rng.choice(["0", "0.3", "-0.2", "1"])]
    if rng.random() < 0.4:
        a += ["--prompt-ids", ",".join(str(rng.randrange(v)) for _ in range(rng.randint(1, 5)))]
    if rng.random() < 0.4:
        a += ["--output-ids", ",".join(str(rng.randrange(v)) for _ in range(rng.randint(1, 6)))]
    if rng.random() < 0.2:
        a += ["--skip-draws", str(rng.randint(0, 50))]
    a += ["--seed", str(rng.randrange(2**64))]
    return a


def cases():
    rng = random.Random(20261201)
    out = []
    for _ in range(160):
        v = rng.randint(5, 60)
        a = ["trace", "--values", values(rng, v)] + params(rng, v)
        if rng.random() < 0.6:
            a += ["--pipeline", rng.choice(PIPELINES)]
            if rng.random() < 0.3:
                a += ["--engine-defaults"]
        elif rng.random() < 0.3:
            a += ["--pipeline", "custom", "--stages",
                  rng.choice(["penalties,top_k,top_p,min_p,temperature", "temperature,min_p,top_p",
                              "top_p:exclusive_prefix:joint,top_k", "top_k,temperature,top_p"])]
        if rng.random() < 0.2:
            a += ["--steps", str(rng.randint(2, 4))]
        if rng.random() < 0.1:
            a += ["--full"]
        out.append(a)
    for _ in range(40):
        v = rng.randint(5, 40)
        out.append(["diff", "--values", values(rng, v), "--pipeline-a", rng.choice(PIPELINES),
                    "--pipeline-b", rng.choice(PIPELINES)] + params(rng, v))
    for _ in range(30):
        v = rng.randint(3, 30)
        a = ["histogram", "--values", values(rng, v), "--draws", str(rng.choice([100, 1000, 5000]))]
        if rng.random() < 0.5:
            a += ["--pipeline", rng.choice(PIPELINES)]
        out.append(a + params(rng, v))
    for f in ["logits_f32.npy", "logits_bf16.safetensors", "logits.json", "logits_labelled.tsv",
              "logits_row.txt", "logits_f64_fortran.npy", "logits_f16_big_endian.npy"]:
        for vocab in ["", "tokenizer.json", "vocab.txt"]:
            a = ["trace", "--logits", "examples/data/" + f, "--temperature", "0.8", "--top-p", "0.9",
                 "--seed", str(rng.randrange(2**64))]
            if vocab:
                a += ["--vocab", "examples/data/" + vocab]
            if rng.random() < 0.5:
                a += ["--pipeline", rng.choice(PIPELINES)]
            out.append(a)
    for _ in range(30):
        b, v = rng.randint(1, 8), rng.randint(5, 300)
        out.append(["batch", "--generate", f"{b},{v}", "--workload",
                    rng.choice(["mixed", "every-stage", "top-p", "greedy"]), "--generate-seed",
                    str(rng.randrange(1000)), "--mode", rng.choice(["exact", "fast"]), "--threads", "2",
                    "--backend", rng.choice(["reference", "host"])])
    for _ in range(20):
        b, v = rng.randint(1, 8), rng.randint(5, 300)
        mode = rng.choice(["exact", "fast"])
        a = ["compare", "--generate", f"{b},{v}", "--workload", rng.choice(["mixed", "every-stage", "top-p"]),
             "--generate-seed", str(rng.randrange(1000)), "--mode", mode, "--threads", "2", "--backend", "host"]
        if mode == "fast" and rng.random() < 0.5:
            a += ["--draws", "2000"]
        if rng.random() < 0.5:
            a += ["--rows"]
        out.append(a)
    for f in ["logits_batch.csv", "logits_batch.json"]:
        given = ["--params", "tests/data/golden_batch_params.json", "--threads", "2"]
        out.append(["batch", "--logits", "examples/data/" + f, "--backend", "reference"] + given)
        out.append(["batch", "--logits", "examples/data/" + f, "--backend", "host", "--mode", "fast"] + given)
        out.append(["compare", "--logits", "examples/data/" + f, "--backend", "host", "--rows"] + given)
    return out


def run(cli, args):
    p = subprocess.run([cli] + args, capture_output=True, text=True, errors="backslashreplace", timeout=120)
    return p.returncode, MASKED.sub(r"\1<masked>", p.stdout)


def main():
    mode, cli, path = sys.argv[1:4]
    if mode == "record":
        with open(path, "w") as f:
            for a in cases():
                rc, out = run(cli, a)
                f.write(json.dumps({"args": a, "rc": rc, "stdout": out}) + "\n")
        return 0
    bad = 0
    n = 0
    with open(path) as f:
        for line in f:
            case = json.loads(line)
            n += 1
            rc, out = run(cli, case["args"])
            if rc != case["rc"] or out != case["stdout"]:
                bad += 1
                if bad <= 5:
                    print("differs:", " ".join(case["args"]))
                    for i, (x, y) in enumerate(zip(out.splitlines(), case["stdout"].splitlines())):
                        if x != y:
                            print(f"  line {i + 1}: now {x!r}, recorded {y!r}")
                            break
                    else:
                        print(f"  exit {rc} vs {case['rc']}; lengths {len(out)} vs {len(case['stdout'])}")
    print(f"{n - bad} passed, {bad} failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
