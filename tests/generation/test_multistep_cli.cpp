// samplescope-cli speculate and beam: their JSON (every round's and step's
// numbers consistent with each other, replay from a seed, the presets' draw
// counts, the diff, recorded rows as models) and every bad input refused
// with exit 2 and one line naming the field and the value.
#include <QtTest>

#include <nlohmann/json.hpp>

#include "engine/io/npy_writer.h"
#include "tests/support/cli_run.h"
#include "tests/support/ngram_builder.h"

using namespace samplescope;

namespace {

using Run = testing::CliRun;

Run cli(const QStringList& args) { return testing::run_cli(args); }

QString tiny_model_path() { return QString::fromStdString(testing::tiny_trigram_model_file()); }

// The tiny model without its last word "d": V = 5.
QString smaller_model_path() {
    static const std::string path = [] {
        testing::TinyNgram m = testing::tiny_trigram_model();
        m.words.pop_back();
        m.unigrams.pop_back();
        std::erase_if(m.bigrams, [](const auto& b) { return b.w == 5 || b.h1 == 5; });
        std::erase_if(m.trigrams, [](const auto& t) { return t.w == 5 || t.h1 == 5 || t.h2 == 5; });
        return testing::write_temp_file(testing::write_ngram_trie(m), "smaller.lm.bin");
    }();
    return QString::fromStdString(path);
}

QString rows_file(int t, int v, double scale, const std::string& name) {
    std::vector<double> values;
    for (int i = 0; i < t * v; ++i) values.push_back(std::sin(i * scale) * 2.0);
    return QString::fromStdString(testing::write_temp_file(encode_npy({static_cast<std::size_t>(t), static_cast<std::size_t>(v)}, values), name));
}

QStringList speculate(QStringList args) {
    return QStringList{"speculate", "--model-path", tiny_model_path()} + args;
}
QStringList beam(QStringList args) { return QStringList{"beam", "--model-path", tiny_model_path()} + args; }

nlohmann::json parsed(const Run& run) { return nlohmann::json::parse(run.out.toStdString()); }

}  // namespace

class TestMultistepCli : public QObject {
    Q_OBJECT

private slots:
    void speculateJson() {
        const Run run = cli(speculate({"--prompt", "a", "--k", "3", "--steps", "10", "--seed", "1", "--ignore-eos"}));
        QCOMPARE(run.code, 0);
        QVERIFY(run.err.isEmpty());
        const auto json = parsed(run);
        QCOMPARE(json["seed"].get<std::string>(), std::string("1"));
        QCOMPARE(json["k"].get<int>(), 3);
        QCOMPARE(json["tokens_generated"].get<int>(), 10);
        QCOMPARE(json["rules"]["name"].get<std::string>(), std::string("spec"));
        QCOMPARE(json["rules"]["rules"].size(), 5U);
        std::uint64_t draws = 0;
        std::size_t emitted = 0;
        std::uint64_t tested = 0;
        std::uint64_t accepted = 0;
        for (const auto& round : json["rounds"]) {
            QCOMPARE(round["draws_before"].get<std::uint64_t>(), draws);
            std::uint64_t taken = 0;
            bool stopped = false;
            for (const auto& at : round["positions"]) {
                taken += at["draft_u"].is_null() ? 0 : 1;
                QCOMPARE(at["tested"].get<bool>(), !stopped);
                if (!at["tested"].get<bool>()) continue;
                ++tested;
                ++taken;
                const double u = at["u"].get<double>();
                const double a = at["acceptance"].get<double>();
                QCOMPARE(at["accepted"].get<bool>(), u < a);
                QVERIFY(std::abs(a - std::min(1.0, at["p"].get<double>() / at["q"].get<double>())) < 1e-15);
                accepted += at["accepted"].get<bool>() ? 1 : 0;
                stopped = !at["accepted"].get<bool>();
            }
            taken += 1;  // the residual or bonus
            draws = round["draws_after"].get<std::uint64_t>();
            QCOMPARE(draws - round["draws_before"].get<std::uint64_t>(), taken);
            const auto& final = round["final"];
            QCOMPARE(final["kind"].get<std::string>(), std::string(stopped ? "residual" : "bonus"));
            double mass = 0.0;
            for (const auto& id : final["kept"]) mass += id["prob"].get<double>();
            QVERIFY(std::abs(mass - 1.0) < 1e-9 || final["kept_count"].get<std::size_t>() > 10);
            emitted += round["emitted"].size();
            QCOMPARE(round["emitted"].back()["token"].get<int>(), final["token"].get<int>());
        }
        QCOMPARE(emitted, 10U);
        QCOMPARE(json["draws_consumed"].get<std::uint64_t>(), draws);
        QCOMPARE(json["acceptance"]["tested"].get<std::uint64_t>(), tested);
        QCOMPARE(json["acceptance"]["accepted"].get<std::uint64_t>(), accepted);
        // The same seed writes the same bytes.
        QCOMPARE(cli(speculate({"--prompt", "a", "--k", "3", "--steps", "10", "--seed", "1", "--ignore-eos"})).out,
                 run.out);
    }

    // Each preset's uniforms per round: vLLM 2k + 2, FlashInfer 2k + 1 (sampled rows).
    void presetsDrawCounts() {
        for (const auto& [rules, extra] : {std::pair{"vllm", 2}, std::pair{"flashinfer", 1}}) {
            const Run run = cli(speculate({"--prompt", "a", "--k", "2", "--steps", "9", "--seed", "4", "--ignore-eos",
                                           "--rules", rules}));
            QCOMPARE(run.code, 0);
            const auto json = parsed(run);
            for (const auto& round : json["rounds"]) {
                const auto k = round["k"].get<std::uint64_t>();
                QCOMPARE(round["draws_after"].get<std::uint64_t>() - round["draws_before"].get<std::uint64_t>(),
                         2 * k + (k > 0 ? static_cast<std::uint64_t>(extra) : 1));
            }
        }
    }

    void speculateDiff() {
        const Run run = cli(speculate({"--prompt", "a", "--k", "3", "--steps", "12", "--seed", "2", "--ignore-eos",
                                       "--diff", "vllm,flashinfer", "--temperature", "1.5"}));
        QCOMPARE(run.code, 0);
        const auto json = parsed(run);
        QCOMPARE(json["diff_summary"]["a"].get<std::string>(), std::string("vllm"));
        QCOMPARE(json["diff_summary"]["rounds"].get<std::size_t>(), json["rounds"].size());
        for (const auto& round : json["rounds"]) {
            QCOMPARE(round["diff"]["uniforms"].size(), round["k"].get<std::size_t>() + 1);
            QCOMPARE(round["diff"]["same_emitted"].get<bool>(), round["diff"]["emitted_a"] == round["diff"]["emitted_b"]);
        }
    }

    // Recorded rows as both models, the draft's from --draft-logits.
    void rowsModels() {
        const QString target = rows_file(8, 5, 0.7, "spec-target.npy");
        const QString draft = rows_file(8, 5, 1.3, "spec-draft.npy");
        const Run run = cli({"speculate", "--model", "rows", "--logits", target, "--draft", "rows", "--draft-logits",
                             draft, "--k", "3", "--steps", "8", "--seed", "3"});
        QCOMPARE(run.code, 0);
        const auto json = parsed(run);
        QCOMPARE(json["tokens_generated"].get<int>(), 8);
        QVERIFY(json["draft"].get<std::string>().find("spec-draft.npy") != std::string::npos);
    }

    void beamJson() {
        const Run run = cli(beam({"--prompt", "a b", "--width", "3", "--steps", "5"}));
        QCOMPARE(run.code, 0);
        const auto json = parsed(run);
        QCOMPARE(json["beam_rules"]["name"].get<std::string>(), std::string("hf"));
        QCOMPARE(json["early_stopping"].get<std::string>(), std::string("false"));
        QVERIFY(json["steps"].size() >= 1U && json["steps"].size() <= 5U);
        for (const auto& step : json["steps"]) {
            QVERIFY(step["candidates"].size() <= 6U);
            QVERIFY(step["kept"].size() <= 3U);
            std::size_t kept = 0;
            for (const auto& c : step["candidates"]) kept += c["fate"] == "kept" ? 1 : 0;
            QCOMPARE(kept, step["kept"].size());
        }
        QVERIFY(json["steps"].back()["done"].get<bool>());
        QVERIFY(!json["result"].empty());
        // Scores are logprob / length^1, HF's length the generated tokens.
        for (const auto& h : json["result"]) {
            QVERIFY(std::abs(h["score"].get<double>() - h["logprob"].get<double>() / h["length"].get<double>()) < 1e-12);
            QCOMPARE(h["length"].get<std::size_t>(), h["tokens"].size());
        }
        const Run vllm = cli(beam({"--prompt", "a b", "--width", "3", "--steps", "5", "--beam-rules", "vllm",
                                   "--length-penalty", "0"}));
        QCOMPARE(vllm.code, 0);
        const auto v = parsed(vllm);
        QVERIFY(v["early_stopping"].is_null());
        QCOMPARE(v["steps"].size(), 5U);  // no early stopping
        for (const auto& h : v["result"]) QCOMPARE(h["score"].get<double>(), h["logprob"].get<double>());
    }

    void badInput_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("message");
        const QString target_rows = rows_file(4, 6, 0.7, "bad-target.npy");
        const QString draft_rows = rows_file(4, 6, 1.1, "bad-draft.npy");
        const QString wide_rows = rows_file(4, 7, 1.1, "bad-wide.npy");
        const QString short_rows = rows_file(2, 6, 1.1, "bad-short.npy");
        const auto s = [](QStringList args) { return speculate(QStringList{"--prompt", "a"} + args); };
        QTest::newRow("k 0") << s({"--k", "0"}) << "--k must be an integer in [1, 32], got \"0\"";
        QTest::newRow("k 33") << s({"--k", "33"}) << "got \"33\"";
        QTest::newRow("k text") << s({"--k", "four"}) << "got \"four\"";
        QTest::newRow("k negative") << s({"--k", "-1"}) << "got \"-1\"";
        QTest::newRow("steps 0") << s({"--steps", "0"}) << "--steps must be an integer in [1, 100000], got \"0\"";
        QTest::newRow("steps 100001") << s({"--steps", "100001"}) << "got \"100001\"";
        QTest::newRow("unknown draft") << s({"--draft", "gpt"}) << "--draft must be ngram, ngram:trigram";
        QTest::newRow("missing draft") << s({"--draft", "ngram:bigram", "--draft-path", "/nonexistent/d.lm.bin"})
                                       << "/nonexistent/d.lm.bin";
        QTest::newRow("draft of another vocabulary") << s({"--draft-path", smaller_model_path()})
                                                     << "the draft's vocabulary has 5 tokens and the target's 6";
        QTest::newRow("draft rows without a file") << s({"--draft", "rows"}) << "--draft rows needs --draft-logits FILE";
        QTest::newRow("draft logits for an n-gram draft") << s({"--draft-logits", draft_rows})
                                                          << "--draft-logits is a rows draft's file";
        QTest::newRow("draft path for a rows draft") << s({"--draft", "rows", "--draft-path", "x.lm.bin"})
                                                     << "--draft-path names an n-gram draft";
        QTest::newRow("missing draft rows") << s({"--draft", "rows", "--draft-logits", "/nonexistent/d.npy"})
                                            << "/nonexistent/d.npy";
        QTest::newRow("draft rows of another V")
            << QStringList{"speculate", "--model", "rows", "--logits", target_rows, "--draft", "rows", "--draft-logits",
                           wide_rows, "--steps", "2"}
            << "the draft's vocabulary has 7 tokens and the target's 6";
        QTest::newRow("rows draft shorter than the steps")
            << QStringList{"speculate", "--model", "rows", "--logits", target_rows, "--draft", "rows", "--draft-logits",
                           short_rows, "--steps", "3"}
            << "(--draft) holds only 2 rows";
        QTest::newRow("rows target shorter than the steps")
            << QStringList{"speculate", "--model", "rows", "--logits", target_rows, "--draft", "rows", "--draft-logits",
                           draft_rows, "--steps", "5"}
            << "(--model) holds only 4 rows";
        QTest::newRow("unknown rules") << s({"--rules", "sglang"}) << "--rules must be one of spec, vllm, flashinfer, got \"sglang\"";
        QTest::newRow("diff of one") << s({"--diff", "vllm"}) << "--diff must be two presets A,B";
        QTest::newRow("diff of three") << s({"--diff", "vllm,spec,flashinfer"}) << "--diff must be two presets A,B";
        QTest::newRow("diff unknown") << s({"--diff", "vllm,hf"}) << "--diff must be one of spec, vllm, flashinfer, got \"hf\"";
        QTest::newRow("mirostat") << s({"--pipeline", "llamacpp", "--mirostat", "2"})
                                  << "--mirostat 2: speculative decoding cannot carry mirostat's mu";
        QTest::newRow("output ids") << s({"--output-ids", "2"}) << "--output-ids: speculate starts a request";
        QTest::newRow("skip draws") << s({"--skip-draws", "3"}) << "--skip-draws: speculate starts a request";
        QTest::newRow("temperature") << s({"--temperature", "-1"}) << "temperature";
        QTest::newRow("no prompt") << speculate({}) << "prompt: empty";

        const auto b = [](QStringList args) { return beam(QStringList{"--prompt", "a"} + args); };
        QTest::newRow("width 0") << b({"--width", "0"}) << "--width must be an integer in [1, 64], got \"0\"";
        QTest::newRow("width 65") << b({"--width", "65"}) << "got \"65\"";
        QTest::newRow("width text") << b({"--width", "wide"}) << "got \"wide\"";
        QTest::newRow("beam steps 0") << b({"--steps", "0"}) << "--steps must be an integer in [1, 1000], got \"0\"";
        QTest::newRow("beam steps 1001") << b({"--steps", "1001"}) << "got \"1001\"";
        QTest::newRow("length penalty nan") << b({"--length-penalty", "nan"}) << "--length-penalty must be a finite number, got \"nan\"";
        QTest::newRow("length penalty text") << b({"--length-penalty", "long"}) << "got \"long\"";
        QTest::newRow("length penalty 1e999") << b({"--length-penalty", "1e999"}) << "got \"1e999\"";
        QTest::newRow("early stopping") << b({"--early-stopping", "maybe"}) << "--early-stopping must be true, false or never, got \"maybe\"";
        QTest::newRow("beam rules") << b({"--beam-rules", "sglang"}) << "--beam-rules must be hf or vllm, got \"sglang\"";
        QTest::newRow("vllm early stopping") << b({"--beam-rules", "vllm", "--early-stopping", "true"})
                                             << "vLLM's beam search has no early stopping";
        QTest::newRow("vllm repetition penalty") << b({"--beam-rules", "vllm", "--repetition-penalty", "1.2"})
                                                 << "vLLM's beam search applies no penalty";
        QTest::newRow("repetition penalty 0") << b({"--repetition-penalty", "0"}) << "repetition_penalty";
        QTest::newRow("repetition penalty text") << b({"--repetition-penalty", "x"}) << "repetition_penalty must be a number, got \"x\"";
        QTest::newRow("beam without prompt") << beam({}) << "prompt: empty";
        QTest::newRow("beam missing model") << QStringList{"beam", "--model-path", "/nonexistent/m.lm.bin", "--prompt", "a"}
                                            << "/nonexistent/m.lm.bin";
        QTest::newRow("beam rows shorter than the steps")
            << QStringList{"beam", "--model", "rows", "--logits", short_rows, "--steps", "3"} << "holds only 2 rows";
    }
    void badInput() {
        QFETCH(QStringList, args);
        QFETCH(QString, message);
        const Run run = cli(args);
        QCOMPARE(run.code, 2);
        QCOMPARE(run.err.size(), 1);
        QVERIFY2(run.err[0].contains(message), qPrintable(run.err[0]));
        QVERIFY(run.out.isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestMultistepCli)
#include "test_multistep_cli.moc"
