#include "widgets/BatchingPanel.hpp"

#include "widgets/LabJobs.hpp"
#include "widgets/TableModel.hpp"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QPushButton>
#include <QSpinBox>
#include <QTableView>
#include <QVBoxLayout>

namespace inferscope::widgets {

namespace {
double cellNumber(const compute::Table& table, std::size_t row, const char* column) {
    const auto& cell = table.at(row, column);
    if (std::holds_alternative<std::monostate>(cell)) return 0;
    return table.number(row, column);
}
} // namespace

BatchingPanel::BatchingPanel(QWidget* parent)
    : LabPanel("batching", tr("Batching"),
               tr("B sequences decode one token per step together. Throughput (tokens/s) and "
                  "each request's latency (ms per token) as multiples of B = 1: batching "
                  "makes the server better and every user worse. Dashed: the roofline's "
                  "throughput if each step only had to read the weights once and each "
                  "sequence's KV cache at the measured bandwidth. The knee is where an added "
                  "sequence stops buying throughput."),
               parent),
      model_(new TableModel(this)) {
    setAxis(Qt::Horizontal, tr("batch size B (sequences per step, log scale)"), AxisScale::Log);
    setAxis(Qt::Vertical, tr("x the measured B = 1 (log scale)"), AxisScale::Log);
    addSeries(tr("throughput (tokens/s)"), SeriesKind::Line);
    addSeries(tr("latency per request (ms/token)"), SeriesKind::Line);
    addSeries(tr("roofline throughput (weights + KV at the measured bandwidth)"),
              SeriesKind::DashedLine);
    addSeries(tr("knee"), SeriesKind::Scatter);
    setMarkerSize(Knee, 14);
    setEmptyHint(tr("Press \"Measure batching\" below: B = 1, 2, 4, ... sequences decode "
                    "together on the GPU engine."));

    auto* controls = new QHBoxLayout;
    controls->addWidget(new QLabel(tr("Largest B"), this));
    largest_ = new QSpinBox(this);
    largest_->setObjectName("batchingLargest");
    largest_->setRange(1, 64);
    largest_->setValue(64);
    largest_->setToolTip(tr("B = 1, 2, 4, ... up to this (capped by the KV cache, said in the "
                            "table's notes)"));
    controls->addWidget(largest_);
    controls->addWidget(new QLabel(tr("Cache per sequence"), this));
    context_ = new QSpinBox(this);
    context_->setObjectName("batchingContext");
    context_->setRange(1, 4096);
    context_->setValue(64);
    context_->setSuffix(tr(" tokens"));
    controls->addWidget(context_);
    controls_ = new JobControls(this, "batching", tr("Measure batching"));
    controls->addWidget(controls_->runButton());
    controls->addWidget(controls_->cancelButton());
    controls->addWidget(controls_->progressLabel(), 1);
    extrasLayout()->addLayout(controls);

    auto* view = new QTableView(this);
    view->setObjectName("batchingTable");
    view->setModel(model_);
    view->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    view->setMaximumHeight(200);
    extrasLayout()->addWidget(view);

    connect(controls_->runButton(), &QPushButton::clicked, this, [this] { run(request()); });
    connect(controls_, &JobControls::ended, this, [this](bool ok, const QString& error) {
        emit jobEnded(tr("Batching sweep"), ok, error);
    });
}

compute::experiments::BatchingRequest BatchingPanel::request() const {
    compute::experiments::BatchingRequest r;
    r.batches.clear();
    for (int b = 1; b <= largest_->value(); b *= 2) r.batches.push_back(std::uint32_t(b));
    if (r.batches.back() != std::uint32_t(largest_->value()))
        r.batches.push_back(std::uint32_t(largest_->value()));
    r.context = std::uint32_t(context_->value());
    return r;
}

void BatchingPanel::setLargestBatch(int batch) {
    largest_->setValue(batch);
}

void BatchingPanel::setTables(std::vector<compute::Table> tables) {
    tables_ = std::move(tables);
    const auto* sweep = compute::findTable(tables_, "batching-sweep");
    const auto* knee = compute::findTable(tables_, "batching-knee");
    model_->setTable(sweep ? *sweep : compute::Table{});
    QList<QPointF> throughput, latency, roofline, kneePoint;
    if (sweep && !sweep->rows.empty()) {
        const double firstTokens = sweep->number(0, "tokens/s");
        for (std::size_t row = 0; row < sweep->rows.size(); ++row) {
            const double b = sweep->number(row, "B");
            throughput << QPointF(b, sweep->number(row, "throughput"));
            latency << QPointF(b, sweep->number(row, "latency"));
            const double floor = cellNumber(*sweep, row, "roofline weights+KV");
            if (floor > 0 && firstTokens > 0) roofline << QPointF(b, b * 1e3 / floor / firstTokens);
        }
    }
    if (knee && !knee->rows.empty())
        kneePoint << QPointF(knee->number(0, "B"), knee->number(0, "throughput"));
    setSeriesPoints(
        {{Throughput, throughput}, {Latency, latency}, {Roofline, roofline}, {Knee, kneePoint}});
    if (!sweep || sweep->rows.empty()) {
        setSummary({});
        return;
    }
    QLocale locale;
    const std::size_t last = sweep->rows.size() - 1;
    QString text = tr("B = %1: throughput %2x, latency %3x")
                       .arg(sweep->number(last, "B"))
                       .arg(locale.toString(sweep->number(last, "throughput"), 'f', 2))
                       .arg(locale.toString(sweep->number(last, "latency"), 'f', 2));
    if (knee && !knee->rows.empty())
        text += tr(" · knee at B = %1 (%2 tokens/s; the bend after it exceeds the steps' "
                   "spread)")
                    .arg(knee->number(0, "B"))
                    .arg(locale.toString(knee->number(0, "tokens/s"), 'f', 1));
    else
        text += tr(" · no knee beyond the noise within the measured B");
    const double floor = cellNumber(*sweep, 0, "roofline weights+KV");
    const double spread = cellNumber(*sweep, 0, "step sd");
    if (floor > 0)
        text += tr(" · B = %1 step %2%3 ms vs roofline floor %4 ms")
                    .arg(sweep->number(0, "B"))
                    .arg(locale.toString(sweep->number(0, "step"), 'f', 1))
                    .arg(spread > 0 ? tr(" ± %1").arg(locale.toString(spread, 'f', 1)) : QString())
                    .arg(locale.toString(floor, 'f', 1));
    setSummary(text);
}

void BatchingPanel::clear() {
    setTables({});
}

std::vector<compute::Table> BatchingPanel::dataTables() const {
    return tables_;
}

void BatchingPanel::attach(const PanelContext& context) {
    controls_->attach(*context.jobs);
    context.jobs->listen<compute::experiments::BatchingLab>(
        this, [this](const std::vector<compute::Table>& tables) { setTables(tables); });
    connect(context.jobs, &LabJobs::modelLoaded, this, [this](const LoadedModelPtr& model) {
        backend_ = QString::fromStdString(model->backend);
        clear();
    });
}

quint64 BatchingPanel::run(const compute::experiments::BatchingRequest& request) {
    return controls_->run(
        [&](LabJobs& jobs) { return jobs.runLab<compute::experiments::BatchingLab>(request); });
}

std::optional<quint64> BatchingPanel::runScripted() {
    setLargestBatch(kScriptLargestBatch);
    auto scripted = request();
    scripted.steps = kScriptSteps;
    return run(scripted);
}

QString BatchingPanel::emptyReason() const {
    return tr("batching runs on the GPU engine; the backend (%1) serves one sequence")
        .arg(backend_);
}

} // namespace inferscope::widgets
