#!/usr/bin/env python3
"""What changed between two recordings of cli_golden.py, beyond what is expected.

    compare_records.py OLD.jsonl NEW.jsonl DEFAULTS_CLI

Walks each pair of records (same arguments, same order) and allows exactly two
kinds of difference, which it counts: a trace's `params` that no longer lists a
parameter holding its default (the defaults are read from DEFAULTS_CLI, a CLI
that prints every parameter), and an `ignored_params` list that a trace of the
contract (`spec`, no "pipeline" key) now has right after its `stages`. Any other
difference (exit status, a value, a key, the order of keys) is printed and the
exit status is 1. Use it after `cli_golden.py record` to show that a
re-recording changed only what it meant to.
"""
import collections
import json
import subprocess
import sys


def pairs(text):
    return json.loads(text, object_pairs_hook=lambda items: items)


def defaults_of(cli):
    out = subprocess.run([cli, "trace", "--values", "0,1", "--seed", "0"], capture_output=True, text=True,
                         check=True).stdout
    params = dict(json.loads(out)["params"])
    del params["seed"]
    return params


class Compare:
    def __init__(self, defaults):
        self.defaults = defaults
        self.removed = collections.Counter()
        self.added_ignored = 0
        self.added_ignored_nonempty = collections.Counter()
        self.problems = []

    def params(self, old, new, where):
        new_items = list(new)
        kept = [(k, v) for k, v in old if k in dict(new_items)]
        if kept != new_items:
            self.problems.append(f"{where}: params {new_items} is not {old} less its defaults")
            return
        for k, v in old:
            if k in dict(new_items):
                continue
            if k not in self.defaults or self.defaults[k] != v:
                self.problems.append(f"{where}: params dropped {k} = {v!r}, which is not its default")
            else:
                self.removed[k] += 1

    def walk(self, old, new, where):
        if isinstance(old, list) and old and isinstance(old[0], tuple):  # an object, as pairs
            if not (isinstance(new, list) and (not new or isinstance(new[0], tuple))):
                self.problems.append(f"{where}: an object became {type(new).__name__}")
                return
            keys_old = [k for k, _ in old]
            keys_new = [k for k, _ in new]
            is_spec_trace = "stages" in keys_old and "pipeline" not in keys_old
            after_stages = keys_old.index("stages") + 1 if is_spec_trace else 0
            if is_spec_trace and keys_new == keys_old[:after_stages] + ["ignored_params"] + keys_old[after_stages:]:
                self.added_ignored += 1
                for key in new[after_stages][1]:
                    self.added_ignored_nonempty[key] += 1
                new = new[:after_stages] + new[after_stages + 1:]
                keys_new = [k for k, _ in new]
            if keys_old != keys_new:
                self.problems.append(f"{where}: keys {keys_old} became {keys_new}")
                return
            for (k, a), (_, b) in zip(old, new):
                if k == "params" and isinstance(a, list):
                    self.params(a, b, where + ".params")
                else:
                    self.walk(a, b, f"{where}.{k}")
        elif isinstance(old, list):
            if not isinstance(new, list) or len(old) != len(new):
                self.problems.append(f"{where}: a list of {len(old)} became {new if not isinstance(new, list) else len(new)}")
                return
            for i, (a, b) in enumerate(zip(old, new)):
                self.walk(a, b, f"{where}[{i}]")
        elif old != new or type(old) is not type(new):
            self.problems.append(f"{where}: {old!r} became {new!r}")


def main():
    old_path, new_path, cli = sys.argv[1:4]
    compare = Compare(defaults_of(cli))
    changed = 0
    total = 0
    with open(old_path) as old_file, open(new_path) as new_file:
        for number, (a, b) in enumerate(zip(old_file, new_file), 1):
            old, new = json.loads(a), json.loads(b)
            total += 1
            where = f"record {number} ({' '.join(old['args'][:1] + old['args'][-2:])})"
            if old["args"] != new["args"] or old["rc"] != new["rc"]:
                compare.problems.append(f"{where}: arguments or exit status differ")
                continue
            if old["stdout"] == new["stdout"]:
                continue
            changed += 1
            try:
                compare.walk(pairs(old["stdout"]), pairs(new["stdout"]), where)
            except json.JSONDecodeError:
                compare.problems.append(f"{where}: output is not JSON and differs")
    print(f"{total} records, {changed} with a different output")
    print(f"params entries dropped at their default: {sum(compare.removed.values())} "
          f"({', '.join(f'{k} {n}' for k, n in sorted(compare.removed.items()))})")
    print(f"spec traces given ignored_params: {compare.added_ignored}, non-empty keys: "
          f"{dict(sorted(compare.added_ignored_nonempty.items())) or 'none'}")
    print(f"other differences: {len(compare.problems)}")
    for problem in compare.problems[:20]:
        print("  " + problem)
    return 1 if compare.problems else 0


if __name__ == "__main__":
    sys.exit(main())
