#include "widgets/KernelTimingsPanel.hpp"

#include "compute/SampleSpread.hpp"
#include "compute/experiments/run/RunEvidence.hpp"
#include "compute/experiments/run/RunTables.hpp"
#include "widgets/LabJobs.hpp"
#include "widgets/TableModel.hpp"

#include <QHeaderView>
#include <QLocale>
#include <QTableView>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <map>

namespace inferscope::widgets {

KernelTimingsPanel::KernelTimingsPanel(QWidget* parent)
    : LabPanel("kernel-timings", tr("Kernels"),
               tr("GPU time of each kernel per decode step, the mean over the run's steps "
                  "(timestamps, profiling on); one step alone is noise. "
                  "The line under the chart gives the matrix kernels' share and, where the "
                  "run measured it, the bytes/s they reach against the device's read "
                  "bandwidth."),
               parent),
      model_(new TableModel(this)) {
    setHorizontalBars(); // long names, listed down the side
    setAxis(Qt::Horizontal, tr("kernel"), AxisScale::Category);
    setAxis(Qt::Vertical, tr("GPU time per decode step, mean over the run (µs)"),
            AxisScale::Linear);
    addSeries(tr("mean over the decode steps"), SeriesKind::Bars);
    setEmptyHint(tr("Tick \"Profile kernels\" (Vulkan backend), then press Generate: each "
                    "kernel's GPU time lands here."));
    auto* view = new QTableView(this);
    view->setObjectName("kernelTable");
    view->setModel(model_);
    view->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    view->setMaximumHeight(180);
    extrasLayout()->addWidget(view);
    connect(model_, &QAbstractItemModel::modelReset, this, &KernelTimingsPanel::rebuild);
    connect(model_, &QAbstractItemModel::rowsInserted, this, &KernelTimingsPanel::rebuild);
    rebuild();
}

void KernelTimingsPanel::setRun(RunRecordPtr run) {
    auto profiled = [](const RunRecordPtr& r) {
        return r && (!r->decodeKernels.empty() || !r->prefillKernels.empty());
    };
    if (run && !profiled(run) && profiled(run_) && run_->backend == run->backend) {
        if (!fromEarlierRun_) {
            fromEarlierRun_ = true;
            rebuild(); // the summary now says which run the bars are from
        }
        return;
    }
    fromEarlierRun_ = false;
    run_ = std::move(run);
    model_->setTable(run_ ? compute::experiments::kernelTimingsTable(*run_) : compute::Table{});
}

std::vector<compute::Table> KernelTimingsPanel::dataTables() const {
    if (model_->rowCount() == 0) return {};
    return {model_->table()};
}

void KernelTimingsPanel::rebuild() {
    QStringList names;
    QList<qreal> values;
    // The mean over every profiled decode step (column "decode mean"); a kernel without one
    // (prefill only) shows its last-step figure, 0.
    for (int row = 0; row < model_->rowCount(); ++row) {
        names << model_->data(model_->index(row, 0)).toString();
        const double mean = model_->number(row, 6); // NaN: an empty cell
        values << (std::isnan(mean) ? model_->number(row, 4) : mean);
    }
    setBarValues(DecodeStep, names, values);
    if (!run_) {
        setSummary({});
    } else if (run_->decodeKernels.empty() && run_->prefillKernels.empty()) {
        setSummary(tr("Turn on kernel profiling (Vulkan backend) and generate to see the "
                      "breakdown; timestamps serialize the work, so it is a mode."));
    } else {
        double total = 0, matrices = 0, last = 0;
        for (const auto& k : run_->decodeKernels) last += k.microseconds;
        // The mean step: every profiled decode step's kernels summed, over the steps.
        const double steps = double(run_->stepSeconds.size());
        std::vector<std::pair<std::string, double>> kernels;
        for (const auto& k : run_->decodeKernelsTotal) {
            const double mean = steps > 0 ? k.microseconds / steps : 0;
            total += mean;
            if (compute::experiments::isMatrixKernel(k.kernel)) matrices += mean;
            kernels.emplace_back(k.kernel, mean);
        }
        QLocale locale;
        // The step-to-step spread of the whole step's GPU time, where the run kept it.
        QString spread;
        const auto& perStep = run_->decodeStepGpuMicroseconds;
        if (perStep.size() >= 2)
            spread =
                tr(" ± %1").arg(locale.toString(compute::sampleStandardDeviation(perStep), 'f', 0));
        QString text = tr("Mean decode step over %1 steps: %2%6 µs of GPU time in %3 kernels "
                          "(the last step alone: %4 µs); the matrix kernels %5%")
                           .arg(steps)
                           .arg(locale.toString(total, 'f', 0))
                           .arg(run_->decodeKernels.size())
                           .arg(locale.toString(last, 'f', 0))
                           .arg(locale.toString(total > 0 ? 100 * matrices / total : 0.0, 'f', 0))
                           .arg(spread);
        // The bandwidth claim needs both figures from this run; without them it is left out.
        const auto use = compute::experiments::matrixBandwidthUse(kernels, run_->decodeWeightBytes,
                                                                  run_->readBytesPerSecond);
        if (use) {
            text += tr(" · they read %1 MB of weights at %2 GB/s, %3% of the %4 GB/s measured "
                       "read bandwidth: %5")
                        .arg(locale.toString(double(use->weightBytes) / 1e6, 'f', 1),
                             locale.toString(use->achieved / 1e9, 'f', 1),
                             locale.toString(use->fraction() * 100, 'f', 0),
                             locale.toString(use->measured / 1e9, 'f', 1),
                             use->bandwidthBound() ? tr("bound by memory bandwidth")
                                                   : tr("not bound by memory bandwidth"));
        } else {
            text += tr(" · no bandwidth measurement in this run, so no claim about what bounds "
                       "it");
        }
        if (fromEarlierRun_)
            text = tr("From the last profiled run (%1 tokens; later runs had profiling off): ")
                       .arg(run_->generatedTokens) +
                   text;
        setSummary(text);
    }
}

void KernelTimingsPanel::attach(const PanelContext& context) {
    auto* jobs = context.jobs;
    connect(jobs, &LabJobs::runProgressed, this,
            [this](const RunDeltaPtr& delta) { setRun(live_.apply(*delta)); });
    connect(jobs, &LabJobs::runFinished, this, &KernelTimingsPanel::setRun);
    connect(jobs, &LabJobs::modelLoaded, this, [this](const LoadedModelPtr& model) {
        backend_ = QString::fromStdString(model->backend);
        setRun(nullptr);
    });
}

QString KernelTimingsPanel::emptyReason() const {
    return tr("the backend (%1) has no GPU timestamps; kernel timings need a Vulkan device")
        .arg(backend_);
}

} // namespace inferscope::widgets
