#!/usr/bin/env bash
# Renders every tab of the visualiser at a laptop's 1280 x 720 and at 1600 x
# 1000 into docs/images/tabs/ (offscreen, the built-in example; the Generate,
# Speculative and Beam tabs on their default prompts), for the docs and for looking at after a change
# to a view. A tab that would need a larger window makes samplescope warn:
# that is a bug, and this script fails on it.
#   bash scripts/screenshots.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
app=${1:-build}/app/samplescope
out=docs/images/tabs
mkdir -p "$out"
export QT_QPA_PLATFORM=offscreen
status=0
for size in 1280x720 1600x1000; do
    for tab in generate speculative beam pipeline tokens logits compare-pipelines compare-stages-a histogram batch verify responses; do
        extra=()
        case "$tab" in
            # Without Debian's model the tab is drawn saying what to install.
            generate) extra=(--steps 8) ;;
            histogram) extra=(--histogram-draws 100000) ;;
            tokens) extra=(--select 11) ;;
            compare-stages-a) extra=(--sampler-example xtc) ;;
            responses) extra=(--response examples/responses/vllm_chat_stream.txt
                              --response-request examples/responses/vllm_chat_stream.request.json --response-token 4) ;;
        esac
        file="$out/$tab-$size.png"
        if ! log=$("$app" --screenshot "$file" --window-size "$size" --tab "$tab" "${extra[@]}" 2>&1); then
            echo "$tab at $size: $log" >&2
            status=1
        elif grep -q "warning: the window needs" <<<"$log"; then
            echo "$tab at $size: $(grep 'warning: the window needs' <<<"$log")" >&2
            status=1
        fi
        echo "$file"
    done
done
exit $status
