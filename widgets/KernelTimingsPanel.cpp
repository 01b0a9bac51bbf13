#include "widgets/KernelTimingsPanel.hpp"

#include "widgets/LabJobs.hpp"
#include "widgets/TableModel.hpp"

#include <QHeaderView>
#include <QLocale>
#include <QTableView>
#include <QVBoxLayout>
#include <algorithm>
#include <map>

namespace inferscope::widgets {

compute::Table kernelTimingsTable(const RunRecord& run) {
    compute::Table t;
    t.id = "kernel-timings";
    t.title = "GPU time per kernel (" + run.backend + ")";
    t.addColumn("kernel")
        .addColumn("prefill dispatches")
        .addColumn("prefill", "us", 1)
        .addColumn("decode dispatches")
        .addColumn("decode step", "us", 1)
        .addColumn("decode share", "%", 1);
    // Kernels in the order the step runs them: the decode step's order, then prefill-only ones.
    std::vector<std::string> order;
    for (const auto* list : {&run.decodeKernels, &run.prefillKernels})
        for (const auto& k : *list)
            if (std::find(order.begin(), order.end(), k.kernel) == order.end())
                order.push_back(k.kernel);
    double decodeTotal = 0;
    for (const auto& k : run.decodeKernels) decodeTotal += k.microseconds;
    auto find = [](const std::vector<KernelSample>& list, const std::string& name) {
        auto it = std::find_if(list.begin(), list.end(),
                               [&](const KernelSample& k) { return k.kernel == name; });
        return it == list.end() ? KernelSample{} : *it;
    };
    for (const auto& name : order) {
        auto prefill = find(run.prefillKernels, name), decode = find(run.decodeKernels, name);
        t.addRow({name, std::int64_t{prefill.dispatches}, prefill.microseconds,
                  std::int64_t{decode.dispatches}, decode.microseconds,
                  decodeTotal > 0 ? 100.0 * decode.microseconds / decodeTotal : 0.0});
    }
    return t;
}

KernelTimingsPanel::KernelTimingsPanel(QWidget* parent)
    : ChartPanel("kernel-timings", tr("Kernels"),
                 tr("GPU time of each kernel in the last decode step (timestamps, profiling on): "
                    "the matrix kernels that read the weights take most of it, which is why "
                    "decode is bound by memory bandwidth."),
                 parent),
      model_(new TableModel(this)) {
    setAxis(Qt::Horizontal, tr("kernel"), AxisScale::Category);
    setAxis(Qt::Vertical, tr("GPU time in the last decode step (µs)"), AxisScale::Linear);
    addSeries(tr("last decode step"), SeriesKind::Bars);
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
    run_ = std::move(run);
    model_->setTable(run_ ? kernelTimingsTable(*run_) : compute::Table{});
}

std::vector<compute::Table> KernelTimingsPanel::dataTables() const {
    if (model_->rowCount() == 0) return {};
    return {model_->table()};
}

void KernelTimingsPanel::rebuild() {
    QStringList names;
    QList<qreal> values;
    for (int row = 0; row < model_->rowCount(); ++row) {
        names << model_->data(model_->index(row, 0)).toString();
        values << model_->number(row, 4);
    }
    setBarValues(DecodeStep, names, values);
    if (!run_) {
        setSummary({});
    } else if (run_->decodeKernels.empty() && run_->prefillKernels.empty()) {
        setSummary(tr("Turn on kernel profiling (Vulkan backend) and generate to see the "
                      "breakdown; timestamps serialize the work, so it is a mode."));
    } else {
        double total = 0;
        for (const auto& k : run_->decodeKernels) total += k.microseconds;
        QLocale locale;
        setSummary(tr("Last decode step: %1 µs of GPU time in %2 kernels")
                       .arg(locale.toString(total, 'f', 0))
                       .arg(run_->decodeKernels.size()));
    }
}

void KernelTimingsPanel::subscribe(const LabJobs& jobs) {
    connect(&jobs, &LabJobs::runUpdated, this, &KernelTimingsPanel::setRun);
    connect(&jobs, &LabJobs::modelLoaded, this, [this] { setRun(nullptr); });
}

} // namespace inferscope::widgets
