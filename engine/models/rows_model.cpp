#include "engine/models/rows_model.h"

#include <cmath>

#include "engine/base/input_error.h"
#include "engine/base/number_text.h"

namespace samplescope {

RowsModel::RowsModel(LogitsMatrix rows, std::vector<std::string> labels, std::string source)
    : rows_(std::move(rows)), labels_(std::move(labels)), source_(std::move(source)) {
    if (rows_.rows == 0 || rows_.cols == 0) throw InputError("model", source_ + ": the file holds no rows of logits");
    if (!labels_.empty() && labels_.size() != rows_.cols) {
        throw InputError("vocab", source_ + ": " + std::to_string(labels_.size()) + " labels for V = " +
                                      std::to_string(rows_.cols));
    }
    for (std::size_t i = 0; i < rows_.values.size(); ++i) {
        const double x = rows_.values[i];
        if (std::isnan(x) || x == HUGE_VAL) {
            throw InputError("logits", source_ + ": row " + std::to_string(i / rows_.cols) + ", id " +
                                           std::to_string(i % rows_.cols) + " is " + format_number(x) +
                                           " (only finite values and -inf are allowed)");
        }
    }
}

std::string RowsModel::description() const {
    return "recorded rows from " + source_ + ": T = " + format_count(rows_.rows) + " steps of V = " +
           format_count(rows_.cols) + (labels_.empty() ? " (no vocabulary)" : "");
}

void RowsModel::next_logits(const ModelContext& context, std::vector<double>& row) const {
    const std::size_t t = context.generated();
    if (t >= rows_.rows) {
        throw InputError("steps", source_ + ": step " + std::to_string(t + 1) + " needs row " + std::to_string(t) +
                                      ", but the file holds " + std::to_string(rows_.rows) + " rows (one per step)");
    }
    const auto* begin = rows_.values.data() + t * rows_.cols;
    row.assign(begin, begin + rows_.cols);
}

std::vector<PromptWord> RowsModel::tokenize(std::string_view) const {
    throw InputError("prompt", "prompt: the rows model replays recorded logits and reads no text; give the "
                               "prompt's token ids instead (--prompt-ids)");
}

}  // namespace samplescope
