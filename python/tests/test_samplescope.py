"""Tests of the samplescope Python module: its dicts equal the CLI's JSON,
its errors carry the CLI's one-line message, and verify tells a correct numpy
sampler from broken ones. Runs under pytest, or as a script (CTest)."""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

import samplescope

CLI = os.environ.get("SAMPLESCOPE_CLI", "samplescope-cli")


def cli(*args):
    run = subprocess.run([CLI, *args], capture_output=True, text=True)
    return run.returncode, run.stdout, run.stderr


def values_text(logits):
    return ",".join(repr(float(x)) for x in logits)


def random_case(rng):
    v = int(rng.integers(2, 40))
    logits = np.round(rng.normal(0.0, 2.0, v), 3)
    params = {"seed": int(rng.integers(0, 2**63))}
    if rng.random() < 0.7:
        params["temperature"] = float(np.round(rng.uniform(0.2, 2.0), 3))
    if rng.random() < 0.5:
        params["top_k"] = int(rng.integers(1, v + 1))
    if rng.random() < 0.5:
        params["top_p"] = float(np.round(rng.uniform(0.1, 1.0), 3))
    if rng.random() < 0.3:
        params["min_p"] = float(np.round(rng.uniform(0.0, 0.3), 3))
    if rng.random() < 0.3:
        params["repetition_penalty"] = 1.3
        params["prompt_ids"] = [int(i) for i in rng.integers(0, v, 3)]
    if rng.random() < 0.3:
        params["pipeline"] = str(rng.choice(["vllm", "sglang", "llamacpp", "hf"]))
    return logits, params


def flags(params):
    out = []
    for key, value in params.items():
        text = ",".join(str(i) for i in value) if isinstance(value, list) else str(value)
        out += ["--" + key.replace("_", "-"), text]
    return out


def test_trace_equals_the_cli_json():
    rng = np.random.default_rng(12)
    for _ in range(25):
        logits, params = random_case(rng)
        code, out, err = cli("trace", "--values", values_text(logits), *flags(params))
        assert code == 0, err
        assert samplescope.trace(logits, **params) == json.loads(out)


def test_trace_steps_and_full():
    logits = np.array([1.0, 3.0, 2.0, 3.0, -1.0])
    code, out, _ = cli("trace", "--values", values_text(logits), "--top-k", "3", "--seed", "5", "--steps", "3",
                       "--full")
    assert code == 0
    assert samplescope.trace(logits, top_k=3, seed=5, steps=3, full=True) == json.loads(out)


def test_errors_carry_the_cli_message():
    logits = np.array([1.0, 2.0, 3.0])
    for params in ({"temperature": -1.0}, {"top_p": 1.5}, {"top_k": -2}, {"pipeline": "nope"}):
        code, _, err = cli("trace", "--values", values_text(logits), *flags(params))
        assert code == 2
        try:
            samplescope.trace(logits, **params)
        except samplescope.InputError as error:
            assert isinstance(error, ValueError)
            assert "samplescope-cli: " + str(error) == err.strip()
        else:
            raise AssertionError("no error for %r" % (params,))
    try:
        samplescope.trace(logits, tmperature=1.0)
    except samplescope.InputError as error:
        assert "tmperature" in str(error)
    else:
        raise AssertionError("an unknown parameter passed")


def test_sample_is_the_trace_token():
    logits = np.array([0.5, 1.5, -0.2, 2.0])
    traced = samplescope.trace(logits, top_p=0.9, seed=3)
    drawn = samplescope.sample(logits, top_p=0.9, seed=3)
    assert drawn["token"] == traced["token"]
    assert drawn["u"] == traced["u"]
    assert drawn["kept"] == len(traced["kept"])
    assert samplescope.sample(logits, temperature=0)["u"] is None


def test_batch_matches_the_reference():
    rng = np.random.default_rng(4)
    logits = rng.normal(0.0, 1.0, (4, 50)).astype(np.float32)
    params = [{"seed": str(10 + r), "top_k": 20, "temperature": 0.8} for r in range(4)]
    out = samplescope.batch(logits, params, mode="exact", backend="host")
    assert len(out["rows"]) == 4
    for r, row in enumerate(out["rows"]):
        reference = samplescope.trace(logits[r].astype(np.float64), top_k=20, temperature=0.8, seed=10 + r)
        assert row["token"] == reference["token"]


def test_verify_the_batch_engines_fast_draws():
    """The batch engine's fast mode (f32 selection, Gumbel-max draw) on its
    host twin, verified against the exact q it claims."""
    logits = np.random.default_rng(9).normal(0.0, 2.0, 500).astype(np.float32)
    params = {"temperature": 0.9, "top_k": 100, "top_p": 0.95}
    out = samplescope.batch(logits[None, :], [dict(params, seed="3")], mode="fast", backend="host", draws=20000)
    tokens = np.array(out["rows"][0]["tokens"])
    assert tokens.shape == (20000,)
    result = samplescope.verify(logits.astype(np.float64), tokens, **params)
    assert result["verdict"] == "pass", result


def numpy_sampler(logits, n, seed, temperature=1.0, top_k=0, drop_last=False):
    """A sampler under test: softmax, top-k, draw with numpy."""
    z = logits / temperature
    order = np.argsort(-z, kind="stable")
    keep = order[:top_k] if top_k else order
    if drop_last:
        keep = keep[:-1]
    p = np.zeros_like(z)
    p[keep] = np.exp(z[keep] - z[keep].max())
    p /= p.sum()
    return np.random.default_rng(seed).choice(len(z), size=n, p=p)


def test_verify_a_numpy_sampler():
    logits = np.random.default_rng(7).normal(0.0, 1.5, 200)
    good = numpy_sampler(logits, 20000, 1, temperature=0.7, top_k=50)
    result = samplescope.verify(logits, good, temperature=0.7, top_k=50)
    assert result["verdict"] == "pass", result
    assert result["rows"][0]["detectable_tv"] < 0.05
    bad = numpy_sampler(logits, 20000, 1, temperature=0.7, top_k=50, drop_last=True)
    assert samplescope.verify(logits, bad, temperature=0.7, top_k=50)["verdict"] == "fail"
    hot = numpy_sampler(logits, 20000, 1, temperature=0.75, top_k=50)
    assert samplescope.verify(logits, hot, temperature=0.7, top_k=50)["verdict"] == "fail"


def test_verify_equals_the_cli():
    logits = np.random.default_rng(8).normal(0.0, 1.0, (2, 30))
    draws = np.stack([numpy_sampler(logits[r], 5000, r, top_k=10) for r in range(2)]).astype(np.int64)
    with tempfile.TemporaryDirectory() as folder:
        logits_file = os.path.join(folder, "logits.npy")
        samples_file = os.path.join(folder, "samples.npy")
        np.save(logits_file, logits)
        np.save(samples_file, draws)
        code, out, err = cli("verify", "--logits", logits_file, "--samples", samples_file, "--top-k", "10")
    assert code == 0, err
    assert samplescope.verify(logits, draws, top_k=10) == json.loads(out)
    params = [{"top_k": 10}, {"top_k": 10}]
    assert samplescope.verify(logits, draws, params_list=params) == json.loads(out)
    try:
        samplescope.verify(logits, draws, alpha=0)
    except samplescope.InputError as error:
        assert "alpha" in str(error)
    else:
        raise AssertionError("alpha 0 passed")


def refused(call, field_text):
    """Raises samplescope.InputError (a ValueError) whose one line holds field_text."""
    try:
        call()
    except samplescope.InputError as error:
        message = str(error)
        assert "\n" not in message, message
        assert field_text in message, (field_text, message)
        return message
    except Exception as error:  # any other type is the bug this guards against
        raise AssertionError("%s raised %s: %s, not InputError" % (field_text, type(error).__name__, error))
    raise AssertionError("nothing refused for %s" % field_text)


def test_bad_arrays_are_refused():
    logits = np.array([1.0, 2.0, 3.0])
    draws = np.array([2, 2, 1])
    # An empty [0, V] batch crashed the interpreter; an empty params list too.
    refused(lambda: samplescope.verify(np.zeros((0, 5)), draws), "logits of shape [0, 5] holds no logits")
    refused(lambda: samplescope.verify(np.zeros((0, 5)), draws, params_list=[]), "holds no logits")
    refused(lambda: samplescope.verify(logits, draws, params_list=[]), "params_list: has 0 rows")
    refused(lambda: samplescope.batch(np.zeros((0, 5))), "holds no logits")
    refused(lambda: samplescope.verify(logits, np.zeros((1, 0), dtype=np.int64)), "holds no draws")
    # Draws must be integer ids: floats, NaN and bools were truncated, uint64 wrapped.
    refused(lambda: samplescope.verify(logits, np.array([2.7, 1.2])), "samples must be integer token ids, got dtype float64")
    refused(lambda: samplescope.verify(logits, np.array([np.nan, 1.0])), "dtype float64")
    refused(lambda: samplescope.verify(logits, np.array([True, False])), "dtype bool")
    refused(lambda: samplescope.verify(logits, [1.5, 2.0]), "dtype float64")
    refused(lambda: samplescope.verify(logits, np.array([2**63, 1], dtype=np.uint64)),
            "draw 0 is 9223372036854775808, past the largest token id an int64 holds")
    assert samplescope.verify(logits, np.array([2, 2, 1], dtype=np.uint8))["rows"][0]["samples"] == 3
    # Logits must be real numbers: complex and strings were read as numbers.
    refused(lambda: samplescope.trace(np.array([1 + 2j, 3 + 0j])), "logits must hold real numbers, got dtype complex128")
    refused(lambda: samplescope.trace(np.array(["1", "2"])), "logits must hold real numbers, got dtype <U1")
    refused(lambda: samplescope.trace(np.array([True, False])), "dtype bool")
    refused(lambda: samplescope.trace([[1.0, 2.0]]), "logits must be [V], got 2 dimensions")


def test_bad_keyword_types_are_refused():
    logits = np.array([1.0, 2.0, 3.0])
    draws = np.array([2, 2, 1])
    # A string is not a list of ids: '12' read as [1, 2].
    refused(lambda: samplescope.trace(logits, prompt_ids="12", repetition_penalty=1.5),
            "prompt_ids must be a list of integer ids, got '12'")
    refused(lambda: samplescope.trace(logits, output_ids=[1.5]), "output_ids must be an integer, got 1.5")
    refused(lambda: samplescope.trace(logits, output_ids=[True]), "output_ids must be an integer, got True")
    refused(lambda: samplescope.trace(logits, output_ids=np.array([1.0])), "output_ids must be a 1-D integer array")
    assert samplescope.trace(logits, output_ids=np.array([1, 2]), seed=1)["token"] in (0, 1, 2)
    # Types that raised RuntimeError or TypeError before.
    refused(lambda: samplescope.trace(logits, steps="2"), "steps must be an integer, got '2'")
    refused(lambda: samplescope.trace(logits, steps=True), "steps must be an integer, got True")
    refused(lambda: samplescope.trace(logits, steps=0), "steps must be an integer in [1, 100000]")
    refused(lambda: samplescope.trace(logits, full="yes"), "full must be True or False, got 'yes'")
    refused(lambda: samplescope.trace(logits, top_k=True), "top_k must be a number, got True")
    refused(lambda: samplescope.trace(logits, top_k="5"), "top_k must be a number, got '5'")
    refused(lambda: samplescope.trace(logits, temperature=[1.0]), "temperature must be a number, got [1.0]")
    refused(lambda: samplescope.trace(logits, pipeline=5), "pipeline must be a string, got 5")
    refused(lambda: samplescope.trace(logits, logit_bias=5), "logit_bias must be a string, got 5")
    refused(lambda: samplescope.trace(logits, seed=1.5), "seed must be an integer, got 1.5")
    refused(lambda: samplescope.verify(logits, draws, alpha="0.1"), "alpha must be a number, got '0.1'")
    refused(lambda: samplescope.verify(logits, draws, row=-1), "row must be an integer in [0, ")
    refused(lambda: samplescope.verify(logits, draws, row=0.0), "row must be an integer, got 0.0")
    refused(lambda: samplescope.batch(logits[None, :], draws="3"), "draws must be an integer, got '3'")
    refused(lambda: samplescope.batch(logits[None, :], mode=1), "mode must be a string, got 1")
    refused(lambda: samplescope.batch(logits[None, :], backend=None), "backend must be a string, got None")
    # params_list: JSON-shaped or refused, never a raw JSON or TypeError.
    refused(lambda: samplescope.verify(logits, draws, params_list={"top_k": 2}), "params_list must be a list")
    refused(lambda: samplescope.verify(logits, draws, params_list=[{"top_p": float("nan")}]),
            "params_list holds a value JSON cannot hold")
    refused(lambda: samplescope.verify(logits, draws, params_list=[{"top_k": object()}]), "has no JSON form")
    refused(lambda: samplescope.verify(logits, draws, params_list=[{"top_k": 10**400}]), "outside the range of a double")
    refused(lambda: samplescope.verify(logits, draws, params_list=[5]), "expected an object of parameters")
    # numpy scalars are the numbers they hold; integers stay exact.
    out = samplescope.verify(logits, draws, params_list=[{"top_k": np.int64(2), "temperature": np.float32(0.5)}])
    assert out["rows"][0]["kept_count"] == 2
    assert samplescope.trace(logits, top_k=np.int32(2), seed=1)["params"]["top_k"] == 2
    assert samplescope.trace(logits, min_keep=2**63 - 1, pipeline="llamacpp", seed=1)["params"]["min_keep"] == 2**63 - 1


if __name__ == "__main__":
    tests = [(name, f) for name, f in sorted(globals().items()) if name.startswith("test_") and callable(f)]
    for name, test in tests:
        test()
        print("PASS", name)
    print("%d tests passed" % len(tests))
    sys.exit(0)
