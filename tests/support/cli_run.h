// Runs `samplescope-cli ARGS` (the test target's SAMPLESCOPE_CLI) and
// collects its exit status, standard output and the lines of its standard
// error: what the bad-input tests check of every refusal.
#pragma once

#include <QProcess>
#include <QString>
#include <QStringList>

namespace samplescope::testing {

// Any subcommand's run: its exit status (-1 when it did not exit normally),
// standard output as bytes and standard error's lines.
struct CliRun {
    int code = -1;
    QByteArray out;
    QStringList err;
};

inline CliRun run_cli(const QStringList& args, int timeout_ms = 120000) {
    QProcess process;
    process.start(QStringLiteral(SAMPLESCOPE_CLI), args);
    process.waitForFinished(timeout_ms);
    return {process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1, process.readAllStandardOutput(),
            QString::fromUtf8(process.readAllStandardError()).split('\n', Qt::SkipEmptyParts)};
}

struct CliResult {
    int exit_code;  // -1 when the process did not exit normally
    QString out;
    QStringList err_lines;
};

inline CliResult run_trace_cli(const QStringList& args, int timeout_ms = 60000) {
    const CliRun run = run_cli(QStringList{"trace"} + args, timeout_ms);
    return CliResult{run.code, QString::fromUtf8(run.out), run.err};
}

}  // namespace samplescope::testing
