// Runs `samplescope-cli trace ARGS` (the test target's SAMPLESCOPE_CLI) and
// collects its exit status, standard output and the lines of its standard
// error: what the bad-input tests check of every refusal.
#pragma once

#include <QProcess>
#include <QString>
#include <QStringList>

namespace samplescope::testing {

struct CliResult {
    int exit_code;  // -1 when the process did not exit normally
    QString out;
    QStringList err_lines;
};

inline CliResult run_trace_cli(const QStringList& args, int timeout_ms = 60000) {
    QProcess process;
    process.start(QStringLiteral(SAMPLESCOPE_CLI), QStringList{"trace"} + args);
    process.waitForFinished(timeout_ms);
    return CliResult{process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1,
                     QString::fromUtf8(process.readAllStandardOutput()),
                     QString::fromUtf8(process.readAllStandardError()).split('\n', Qt::SkipEmptyParts)};
}

}  // namespace samplescope::testing
