// `inferscope-cli class-report MODEL -o report.html`: every chapter lab on the model, one
// self-contained HTML file setting the chapter's figures beside this machine's
// (compute/experiments/report); `--compare old.html new.html` diffs two reports' tables.
#include "app/cli/Arguments.hpp"
#include "app/cli/Backends.hpp"
#include "app/cli/Commands.hpp"
#include "app/cli/Output.hpp"
#include "compute/experiments/report/ClassReportLab.hpp"
#include "compute/experiments/report/ReportCompare.hpp"
#include "compute/experiments/report/ReportHtml.hpp"
#include "compute/session/LabSession.hpp"

#ifdef INFERSCOPE_CLI_PDF
#include "widgets/ReportPdf.hpp"
#include <QGuiApplication>
#endif

#include <atomic>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

namespace inferscope::cli {

namespace {

namespace ex = compute::experiments;

std::atomic<bool> interrupted{false};
extern "C" void onInterrupt(int) {
    interrupted.store(true);
}

// Ctrl-C and SIGTERM cancel the report (the job stops at its next check) instead of killing
// the process, so the temporary file is removed; restored when the report ends.
class InterruptCancels {
public:
    InterruptCancels() {
        interrupted.store(false);
        previousInt_ = std::signal(SIGINT, onInterrupt);
        previousTerm_ = std::signal(SIGTERM, onInterrupt);
    }
    ~InterruptCancels() {
        std::signal(SIGINT, previousInt_);
        std::signal(SIGTERM, previousTerm_);
    }
    InterruptCancels(const InterruptCancels&) = delete;
    InterruptCancels& operator=(const InterruptCancels&) = delete;

private:
    void (*previousInt_)(int) = SIG_DFL;
    void (*previousTerm_)(int) = SIG_DFL;
};

// The PDF is drawn by Qt (widgets/ReportPdf, the window's writer): a GUI application object
// without a window, on the offscreen platform unless one is chosen, for the length of the write.
void writeReportPdf(const ex::ClassReport& report, const std::filesystem::path& path) {
#ifdef INFERSCOPE_CLI_PDF
    std::unique_ptr<QGuiApplication> application;
    if (!QCoreApplication::instance()) {
        if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
        static int argc = 1;
        static char name[] = "inferscope-cli";
        static char* argv[] = {name, nullptr};
        application = std::make_unique<QGuiApplication>(argc, argv);
    } else if (!qobject_cast<QGuiApplication*>(QCoreApplication::instance())) {
        throw std::runtime_error("--pdf: this process has a Qt application without a GUI to "
                                 "draw with");
    }
    QString error;
    if (!widgets::writeReportPdf(report, QString::fromStdString(path.string()), &error))
        throw std::runtime_error("--pdf: " + error.toStdString());
#else
    (void)report;
    (void)path;
#endif
}

std::string readFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw UsageError("cannot read '" + path + "'");
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

int compare(const Arguments& a, std::ostream& out) {
    if (a.positionals().size() != 2)
        throw UsageError("--compare needs two reports: --compare OLD.html NEW.html", true);
    nlohmann::json reports[2];
    for (int i = 0; i < 2; ++i) {
        const auto& path = a.positionals()[std::size_t(i)];
        try {
            reports[i] = ex::extractReportJson(readFile(path));
        } catch (const std::invalid_argument& e) {
            throw UsageError(path + ": " + e.what());
        }
    }
    const auto comparison = ex::compareReports(reports[0], reports[1]);
    printTables(out, {comparison.summary, comparison.cells}, a.flag("--json"));
    return 0;
}

std::string joinedCommandLine(const CommandArgs& args) {
    std::string line = "inferscope-cli class-report";
    for (const auto& arg : args)
        line += " " + (arg.find(' ') == std::string::npos ? arg : "'" + arg + "'");
    return line;
}

} // namespace

static int runClassReport(const CommandArgs& args, std::ostream& out) {
    OptionSpec spec{{"-o", "--profile", "--pdf", "--items"},
                    {"--compare", "--json", "--quiet"},
                    {{"--output", "-o"}}};
    addBackendOptions(spec);
    Arguments a(args, spec);
    if (a.flag("--compare")) return compare(a, out);
    a.requirePositionals({"MODEL"});
    const auto output = a.value("-o");
    if (!output) throw UsageError("missing -o report.html", true);
    const auto pdf = a.value("--pdf");
#ifndef INFERSCOPE_CLI_PDF
    if (pdf)
        throw UsageError("--pdf: this inferscope-cli was built without Qt's GUI modules "
                         "(INFERSCOPE_BUILD_GUI=OFF); print the HTML instead");
#endif
    if (pdf) {
        const std::filesystem::path pdfPath(*pdf);
        const auto pdfFolder = pdfPath.has_parent_path() ? pdfPath.parent_path() : ".";
        if (!std::filesystem::is_directory(pdfFolder))
            throw UsageError("--pdf: the folder '" + pdfFolder.string() + "' does not exist");
    }
    ex::ClassReportRequest request;
    try {
        request.profile = ex::reportProfile(a.valueOr("--profile", "quick"));
    } catch (const std::invalid_argument& e) {
        throw UsageError(std::string("--profile: ") + e.what());
    }
    if (auto items = a.value("--items"))
        for (auto item : parsePositiveList(*items, "--items")) {
            if (item > 14) throw UsageError("--items: the chapter has items 1 to 14");
            request.items.insert(int(item));
        }
    const bool quiet = a.flag("--quiet");
    const BackendArguments backend = backendArguments(a);
    const auto modelPath = models::resolveModelPath(a.positional(0, "MODEL"));
    const std::filesystem::path target(*output);
    const auto folder = target.has_parent_path() ? target.parent_path() : ".";
    if (!std::filesystem::is_directory(folder))
        throw UsageError("-o: the folder '" + folder.string() + "' does not exist");

    InterruptCancels interrupts;
    compute::JobControl control;
    control.cancel = &interrupted;
    control.progress = [quiet](const std::string& stage, int percent) {
        if (quiet) return;
        std::cerr << "class-report: ";
        if (percent >= 0) std::cerr << "[" << percent << "%] ";
        std::cerr << stage << "\n";
    };
    request.modelFile = modelPath;
    request.commandLine = joinedCommandLine(args);
    compute::LabSession session;
    compute::LoadOptions load;
    load.choice = backend.choice;
    ex::ClassReport report;
    try {
        control.report("loading the model");
        session.load(modelPath, load, control);
        report = ex::ClassReportLab::run(session, request, control);
    } catch (const compute::JobCancelled&) {
        std::cerr << "class-report: cancelled; no file written\n";
        return 130;
    }
    // Written beside the target and renamed at the end: a cancelled or failed run leaves no
    // partial report.
    const auto temporary = target.string() + ".partial";
    {
        std::ofstream file(temporary, std::ios::binary | std::ios::trunc);
        file << ex::renderReportHtml(report);
        if (!file.flush()) {
            std::filesystem::remove(temporary);
            throw std::runtime_error("cannot write " + temporary);
        }
    }
    std::filesystem::rename(temporary, target);
    if (pdf) writeReportPdf(report, *pdf);
    std::size_t agree = 0, differ = 0, missing = 0;
    for (const auto& s : report.sections)
        (s.agreement == ex::Agreement::Agrees    ? agree
         : s.agreement == ex::Agreement::Differs ? differ
                                                 : missing)++;
    out << "wrote " << target.string() << (pdf ? " and " + *pdf : std::string()) << ": "
        << report.sections.size() << " items (" << agree << " agree, " << differ << " differ, "
        << missing << " not measured) in " << compute::fixed(report.totalSeconds, 1)
        << " s, profile " << report.profile << "\n";
    return 0;
}

extern const CliCommand classReportCommand{
    "class-report",
    "  class-report MODEL -o report.html [--pdf report.pdf] [--profile quick|full]\n"
    "               [--items 1,4,...] [--device N] [--format F]\n"
    "  class-report --compare OLD.html NEW.html [--json]\n"
    "                                   every chapter lab on the model: one self-contained\n"
    "                                   HTML file, the chapter's figure beside this\n"
    "                                   machine's for each item; --compare diffs two\n",
    runClassReport};

} // namespace inferscope::cli
