// The rows model: a recorded [T, V] (or [B, T, V]) logits file replayed one
// row per generated token, every position of a 3-D array in either order,
// and its refusals.
#include <QtTest>

#include <cmath>

#include "engine/base/input_error.h"
#include "engine/io/npy_writer.h"
#include "engine/models/model_source.h"
#include "engine/models/rows_model.h"

using namespace samplescope;

namespace {

// [B, T, V] values where each one names its place: b * 100 + t * 10 + v.
std::vector<double> numbered(std::size_t batch, std::size_t steps, std::size_t vocab) {
    std::vector<double> values;
    for (std::size_t b = 0; b < batch; ++b) {
        for (std::size_t t = 0; t < steps; ++t) {
            for (std::size_t v = 0; v < vocab; ++v) values.push_back(static_cast<double>(b * 100 + t * 10 + v));
        }
    }
    return values;
}

}  // namespace

class TestRowsModel : public QObject {
    Q_OBJECT

private slots:
    void everyPositionOfABatchRow() {
        for (const bool fortran : {false, true}) {
            for (const std::uint64_t batch : {1U, 3U}) {
                const std::string bytes =
                    encode_npy({batch, 4, 5}, numbered(batch, 4, 5), {{FloatType::F32, false}, fortran});
                for (std::uint64_t b = 0; b < batch; ++b) {
                    LoadOptions options;
                    options.all_positions_of = b;
                    const LogitsMatrix rows = load_logits_bytes(bytes, "dump.npy", options);
                    QCOMPARE(rows.rows, 4U);
                    QCOMPARE(rows.cols, 5U);
                    for (std::size_t t = 0; t < 4; ++t) {
                        for (std::size_t v = 0; v < 5; ++v) {
                            QCOMPARE(rows.values[t * 5 + v], static_cast<double>(b * 100 + t * 10 + v));
                        }
                    }
                }
                LoadOptions outside;
                outside.all_positions_of = batch;
                try {
                    load_logits_bytes(bytes, "dump.npy", outside);
                    QFAIL("accepted");
                } catch (const InputError& error) {
                    QVERIFY2(std::string(error.what()).find("batch row " + std::to_string(batch) + " is outside") !=
                                 std::string::npos,
                             error.what());
                }
            }
        }
        // Without the option a 3-D file still gives each batch row's last position.
        const LogitsMatrix last = load_logits_bytes(encode_npy({2, 4, 5}, numbered(2, 4, 5)), "dump.npy");
        QCOMPARE(last.rows, 2U);
        QCOMPARE(last.values[5], 130.0);
    }

    void stepTReadsRowT() {
        LogitsMatrix rows;
        rows.rows = 3;
        rows.cols = 4;
        rows.values = numbered(1, 3, 4);
        const RowsModel model(rows, {"w", "x", "y", "z"}, "dump.npy");
        QCOMPARE(model.vocab_size(), 4U);
        QCOMPARE(model.max_generated().value(), 3U);
        std::vector<double> row;
        const std::vector<std::int64_t> ids{3, 1, 2, 0};
        model.next_logits({std::span(ids).first(1), 1}, row);  // a prompt of one id, nothing generated
        QCOMPARE(row, (std::vector<double>{0, 1, 2, 3}));
        model.next_logits({std::span(ids).first(3), 1}, row);  // two generated: row 2
        QCOMPARE(row, (std::vector<double>{20, 21, 22, 23}));
        try {
            model.next_logits({ids, 1}, row);
            QFAIL("accepted");
        } catch (const InputError& error) {
            QCOMPARE(error.field(), std::string("steps"));
            QVERIFY2(std::string(error.what()).find("step 4 needs row 3, but the file holds 3 rows") != std::string::npos,
                     error.what());
        }
        QCOMPARE(model.token_text(2), std::string("y"));
        QVERIFY_THROWS_EXCEPTION(InputError, model.tokenize("hello"));
    }

    void refusals() {
        LogitsMatrix rows;
        rows.rows = 2;
        rows.cols = 2;
        rows.values = {0.0, 1.0, NAN, 2.0};
        QVERIFY_THROWS_EXCEPTION(InputError, RowsModel(rows, {}, "x"));
        rows.values = {0.0, 1.0, HUGE_VAL, 2.0};
        QVERIFY_THROWS_EXCEPTION(InputError, RowsModel(rows, {}, "x"));
        rows.values = {0.0, 1.0, -HUGE_VAL, 2.0};
        QCOMPARE(RowsModel(rows, {}, "x").row_count(), 2U);
        QVERIFY_THROWS_EXCEPTION(InputError, RowsModel(rows, {"only one"}, "x"));
        QVERIFY_THROWS_EXCEPTION(InputError, load_model(ModelSpec{"rows", 0, "", "", "", {}}, 0));
        QVERIFY_THROWS_EXCEPTION(InputError, load_model(ModelSpec{"rows", 0, "/nonexistent.npy", "", "", {}}, 0));
    }
};

QTEST_GUILESS_MAIN(TestRowsModel)
#include "test_rows_model.moc"
