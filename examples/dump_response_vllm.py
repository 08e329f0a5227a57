"""Save a vLLM offline generation (its RequestOutput) for `samplescope-cli explain`.

Runs LLM.generate with SamplingParams(logprobs=N) and writes the RequestOutput
as JSON field for field (request_id, prompt, prompt_token_ids, outputs with
index, text, token_ids, cumulative_logprob, logprobs, finish_reason,
stop_reason, finished), each position's logprobs as {token id: {logprob, rank,
decoded_token}} (vllm/logprobs.py Logprob). It adds what the output does not
carry: the engine's logprobs_mode and the SamplingParams used. -inf (an id a
processed mode cut) is written as -9999.0, as vLLM's OpenAI server does.

    python dump_response_vllm.py MODEL "Once upon a time" out.json --logprobs 5 --temperature 0.8 --top-k 20
    samplescope-cli explain --response out.json

Needs: vllm.
"""
import argparse
import json
import math

from vllm import LLM, SamplingParams

parser = argparse.ArgumentParser()
parser.add_argument("model")
parser.add_argument("prompt")
parser.add_argument("out")
parser.add_argument("--logprobs", type=int, default=5)
parser.add_argument("--logprobs-mode", default="raw_logprobs",
                    choices=["raw_logprobs", "raw_logits", "processed_logprobs", "processed_logits"])
parser.add_argument("--max-tokens", type=int, default=32)
parser.add_argument("--temperature", type=float, default=1.0)
parser.add_argument("--top-p", type=float, default=1.0)
parser.add_argument("--top-k", type=int, default=0)
parser.add_argument("--min-p", type=float, default=0.0)
parser.add_argument("--seed", type=int, default=None)
args = parser.parse_args()


def number(x):
    return -9999.0 if x == -math.inf else x


llm = LLM(model=args.model, logprobs_mode=args.logprobs_mode)
params = SamplingParams(max_tokens=args.max_tokens, temperature=args.temperature, top_p=args.top_p, top_k=args.top_k,
                        min_p=args.min_p, seed=args.seed, logprobs=args.logprobs)
result = llm.generate([args.prompt], params)[0]
document = {
    "request_id": result.request_id,
    "prompt": result.prompt,
    "prompt_token_ids": list(result.prompt_token_ids),
    "outputs": [{
        "index": o.index,
        "text": o.text,
        "token_ids": list(o.token_ids),
        "cumulative_logprob": o.cumulative_logprob,
        "logprobs": [{str(token_id): {"logprob": number(lp.logprob), "rank": lp.rank, "decoded_token": lp.decoded_token}
                      for token_id, lp in position.items()} for position in o.logprobs],
        "finish_reason": o.finish_reason,
        "stop_reason": o.stop_reason,
    } for o in result.outputs],
    "finished": result.finished,
    "logprobs_mode": args.logprobs_mode,
    "sampling_params": {"n": params.n, "presence_penalty": params.presence_penalty,
                        "frequency_penalty": params.frequency_penalty,
                        "repetition_penalty": params.repetition_penalty, "temperature": params.temperature,
                        "top_p": params.top_p, "top_k": params.top_k, "min_p": params.min_p, "seed": params.seed,
                        "max_tokens": params.max_tokens, "logprobs": params.logprobs},
}
with open(args.out, "w") as f:
    json.dump(document, f, indent=2, ensure_ascii=False)
print(f"{len(result.outputs[0].token_ids)} tokens with logprobs -> {args.out}")
