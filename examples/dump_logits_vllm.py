"""Dump the logits vLLM's sampler receives at one decode step, for SampleScope.

A logits processor that changes nothing: at step STEP of the (single) request
it saves its row of the logits tensor, with the prompt ids and the ids
generated so far, to a .safetensors file. Written for the vLLM V1 engine's
batch-level processor interface (vllm.v1.sample.logits_processor); the
interface is still changing between releases, so check it against yours.

    python dump_logits_vllm.py MODEL "The cat sat on the" 3 step.safetensors

Needs: vllm, torch, safetensors.
"""
import os
import sys

import torch
from safetensors.torch import save_file
from vllm import LLM, SamplingParams
from vllm.v1.sample.logits_processor import BatchUpdate, LogitsProcessor

MODEL, PROMPT, STEP, OUT = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
# The processor runs inside vLLM's engine; it learns where to write from here.
os.environ["SAMPLESCOPE_DUMP"] = f"{STEP}:{OUT}"


class DumpLogits(LogitsProcessor):
    def __init__(self, vllm_config, device, is_pin_memory):
        step, _, self.path = os.environ["SAMPLESCOPE_DUMP"].partition(":")
        self.step = int(step)
        self.rows = {}  # batch row -> (prompt ids, live list of output ids)
        self.done = False

    def is_argmax_invariant(self) -> bool:
        return False  # so vLLM calls it for greedy requests too

    def update_state(self, batch_update: BatchUpdate | None):
        if batch_update is None:
            return
        for index in batch_update.removed:
            self.rows.pop(index, None)
        for index, _params, prompt_ids, output_ids in batch_update.added:
            self.rows[index] = (prompt_ids or [], output_ids)
        for source, target, _direction in batch_update.moved:
            if source in self.rows:
                self.rows[target] = self.rows.pop(source)

    def apply(self, logits: torch.Tensor) -> torch.Tensor:
        for row, (prompt_ids, output_ids) in self.rows.items():
            if not self.done and len(output_ids) == self.step:
                save_file(
                    {
                        "logits": logits[row].detach().float().cpu().contiguous(),
                        "prompt_ids": torch.tensor(prompt_ids, dtype=torch.int64),
                        "output_ids": torch.tensor(output_ids, dtype=torch.int64),
                    },
                    self.path,
                )
                self.done = True
        return logits


llm = LLM(model=MODEL, logits_processors=[DumpLogits])
llm.generate([PROMPT], SamplingParams(temperature=0.8, max_tokens=STEP + 1, seed=0))
print(f"saved step {STEP} to {OUT}")
