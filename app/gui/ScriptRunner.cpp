#include "app/gui/ScriptRunner.hpp"

#include "app/gui/MainWindow.hpp"
#include "app/gui/PanelRegistry.hpp"
#include "models/LoadedModel.hpp"
#include "widgets/ChartExport.hpp"
#include "widgets/FigureTextCheck.hpp"
#include "widgets/LabSelection.hpp"

#include <QCheckBox>
#include <QCoreApplication>
#include <QDir>
#include <QPixmap>
#include <QPlainTextEdit>
#include <QSpinBox>
#include <QTimer>
#include <cstdio>

namespace inferscope::gui {

ScriptRunner::ScriptRunner(MainWindow& window, CommandLineOptions options, QObject* parent)
    : QObject(parent), window_(window), options_(std::move(options)) {}

void ScriptRunner::start() {
    if (options_.prompt) window_.promptEditor()->setPlainText(*options_.prompt);
    if (options_.maxTokens) window_.maxTokensBox()->setValue(*options_.maxTokens);
    if (options_.chat) window_.chatToggle()->setChecked(*options_.chat);
    if (options_.scale) window_.setPresentationScale(*options_.scale);
    // Before the backend: a load the backend choice starts then has both.
    if (options_.int8Activations) window_.setInt8Activations(*options_.int8Activations);
    if (!options_.backend.isEmpty())
        window_.setBackendChoice(BackendChoice::fromKey(options_.backend));
    if (!options_.tab.isEmpty()) window_.showPanel(options_.tab);
    connect(&window_, &MainWindow::modelLoadFailed, this,
            [this](const QString& error) { finish(1, "could not load the model: " + error); });
    connect(&window_, &MainWindow::modelLoadCancelled, this,
            [this] { finish(1, "loading was cancelled"); });
    connect(&window_, &MainWindow::generationFinished, this,
            [this](bool ok) { stepFinished(ok, "generation failed"); });
    watchLabJobs();

    if (!options_.model.isEmpty()) {
        QString path = options_.model;
        if (path == "default") {
            try {
                path = QString::fromStdString(models::resolveModelPath("default").string());
            } catch (const std::exception& error) {
                QTimer::singleShot(0, this, [this, message = QString::fromUtf8(error.what())] {
                    finish(1, message);
                });
                return;
            }
        }
        connect(&window_, &MainWindow::modelLoaded, this, &ScriptRunner::afterModel);
        window_.loadModel(path);
    } else if (window_.isLoading()) {
        connect(&window_, &MainWindow::modelLoaded, this, &ScriptRunner::afterModel);
    } else {
        QTimer::singleShot(0, this, &ScriptRunner::afterModel);
    }
}

void ScriptRunner::watchLabJobs() {
    auto* jobs = window_.jobs();
    auto ended = [this](quint64 job, bool ok, const QString& error) {
        if (job != 0 && job == labJob_) {
            labJob_ = 0;
            stepFinished(ok, error);
        }
    };
    connect(jobs, &widgets::LabJobs::jobFinished, this,
            [ended](quint64 job, const QString&) { ended(job, true, {}); });
    connect(
        jobs, &widgets::LabJobs::jobFailed, this,
        [ended](quint64 job, const QString&, const QString& error) { ended(job, false, error); });
    connect(jobs, &widgets::LabJobs::jobDropped, this,
            [ended](quint64 job, const QString&) { ended(job, false, "cancelled"); });
}

void ScriptRunner::afterModel() {
    if (done_ || stepRunning_ || !steps_.isEmpty()) return;
    if (options_.chat) window_.chatToggle()->setChecked(*options_.chat); // the model may reset it
    if (options_.run) {
        const bool exporting = !options_.exportFolder.isEmpty();
        if (exporting) {
            steps_ << Step{"the profiled run", [this] {
                               savedProfile_ = window_.profileToggle()->isChecked();
                               savedMaxTokens_ = window_.maxTokensBox()->value();
                               window_.profileToggle()->setChecked(true);
                               window_.maxTokensBox()->setValue(kProfiledTokens);
                               std::fprintf(stderr,
                                            "inferscope: a profiled %d-token run for the kernel "
                                            "timings\n",
                                            kProfiledTokens);
                               return window_.generate();
                           }};
            steps_ << Step{"restoring the settings", [this] {
                               window_.profileToggle()->setChecked(savedProfile_);
                               window_.maxTokensBox()->setValue(savedMaxTokens_);
                               QTimer::singleShot(0, this, [this] { stepFinished(true); });
                               return true;
                           }};
        }
        steps_ << Step{"generation", [this] {
                           ran_ = true;
                           return window_.generate();
                       }};
        // Every panel's short job, in the registry's order; the GPU-only ones on Vulkan only.
        const bool gpu = window_.backendName().startsWith("vulkan");
        if (exporting)
            for (const auto& spec : panelRegistry()) {
                if (spec.gpuOnly && !gpu) continue;
                auto* panel = window_.panel(spec.id);
                steps_ << Step{spec.id, [this, panel, id = spec.id]() -> bool {
                                   const auto job = panel->runScripted();
                                   if (!job) { // no job of its own: nothing to wait for
                                       QTimer::singleShot(0, this, [this] { stepFinished(true); });
                                       return true;
                                   }
                                   std::fprintf(stderr, "inferscope: %s's scripted run\n",
                                                qPrintable(id));
                                   labJob_ = *job;
                                   return *job != 0;
                               }};
            }
    }
    runNextStep();
}

void ScriptRunner::runNextStep() {
    if (done_) return;
    if (steps_.isEmpty()) {
        stepRunning_ = false;
        return afterSteps();
    }
    const auto step = steps_.takeFirst();
    stepRunning_ = true;
    if (!step.start()) finish(1, "cannot run the script's next step (" + step.what + ")");
}

void ScriptRunner::stepFinished(bool ok, const QString& error) {
    if (done_ || !stepRunning_) return;
    stepRunning_ = false;
    if (!ok) return finish(1, error.isEmpty() ? QString("a step failed") : error);
    runNextStep();
}

void ScriptRunner::afterSteps() {
    if (done_) return;
    if (options_.layer) {
        window_.selection()->setLayer(*options_.layer);
        QCoreApplication::processEvents(); // relayout before the screenshot grabs the window
    }
    if (!options_.exportFolder.isEmpty() && !exportPanels()) return;
    if (!options_.screenshot.isEmpty()) {
        if (!window_.grab().save(options_.screenshot, "PNG"))
            return finish(1, "cannot write the screenshot " + options_.screenshot);
        std::fprintf(stderr, "inferscope: saved the window as %s\n",
                     qPrintable(options_.screenshot));
        // What the screenshot could not show whole (issue 48's walkthrough measures it).
        for (const auto& text : widgets::cutFigureTexts(window_))
            std::fprintf(stderr, "inferscope: text cut to fit: %s\n", qPrintable(text));
    }
    finish(0);
}

bool ScriptRunner::exportPanels() {
    QDir folder(options_.exportFolder);
    if (!folder.mkpath(".")) {
        finish(1, "cannot create the export folder " + folder.absolutePath());
        return false;
    }
    for (auto* panel : window_.panels()) {
        // An empty chart is no figure: leave it out and say what would have filled it.
        if (!panel->hasData() || panel->dataTables().empty()) {
            const QString why =
                !ran_ ? QString("no run in this script (add --run)") : panel->emptyReason();
            leftOut_.insert(panel->panelId(), why);
            std::fprintf(stderr, "inferscope: left out %s: %s\n", qPrintable(panel->panelId()),
                         qPrintable(why));
            continue;
        }
        QString error;
        auto written = widgets::ChartExport::exportAll(*panel, folder, &error);
        if (!error.isEmpty()) {
            finish(1, "export failed: " + error);
            return false;
        }
        exported_ << written;
    }
    if (exported_.isEmpty()) {
        finish(1, "export: no panel has data to export");
        return false;
    }
    std::fprintf(stderr, "inferscope: wrote %lld files into %s\n",
                 static_cast<long long>(exported_.size()), qPrintable(folder.absolutePath()));
    return true;
}

void ScriptRunner::finish(int status, const QString& message) {
    if (done_) return;
    done_ = true;
    if (!message.isEmpty()) std::fprintf(stderr, "inferscope: %s\n", qPrintable(message));
    emit finished(status);
    if (options_.quit) QCoreApplication::exit(status);
}

} // namespace inferscope::gui
