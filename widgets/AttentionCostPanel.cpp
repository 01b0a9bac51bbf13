#include "widgets/AttentionCostPanel.hpp"

#include "compute/experiments/attention/AttentionHeadLab.hpp"
#include "widgets/TableModel.hpp"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QPushButton>
#include <QTableView>

#include <cmath>

namespace inferscope::widgets {

AttentionCostPanel::AttentionCostPanel(QWidget* parent)
    : LabPanel("attention-cost", tr("One attention head, cached vs uncached"),
               tr("One generation step of a single attention head (dimension 64) on the "
                  "device: without a cache the whole n x n score matrix is rebuilt, written "
                  "and read; with it only the new token's 1 x n row. Both checked against "
                  "a CPU loop."),
               parent),
      model_(new TableModel(this)) {
    setAxis(Qt::Horizontal, tr("sequence length n (log scale)"), AxisScale::Log);
    setAxis(Qt::Vertical, tr("time per step (ms, log scale)"), AxisScale::Log);
    addSeries(tr("uncached: n x n scores"), SeriesKind::Line);
    addSeries(tr("cached: 1 x n row"), SeriesKind::Line);
    setEmptyHint(tr("Press \"Time one head\" below: both kernels run at n = 256 ... 4,096 on "
                    "the device."));
    auto* row = new QHBoxLayout;
    row->addWidget(new QLabel(tr("Up to n ="), this));
    maxLength_ = new QComboBox(this);
    maxLength_->setObjectName("attentionMaxLength");
    for (int n : {512, 1024, 2048, 4096}) maxLength_->addItem(QLocale().toString(n), n);
    maxLength_->setCurrentIndex(2); // 2,048: about ten seconds on lavapipe; 4,096 adds ~20 s
    maxLength_->setToolTip(tr("The longest sequence measured (its score matrix is n x n x 4 "
                              "bytes: 64 MiB at 4,096)"));
    row->addWidget(maxLength_);
    controls_ = new JobControls(this, "attention", tr("Time one head"), false);
    row->addWidget(controls_->runButton());
    row->addWidget(controls_->cancelButton());
    row->addWidget(controls_->progressLabel(), 1);
    extrasLayout()->addLayout(row);
    auto* view = new QTableView(this);
    view->setObjectName("attentionTable");
    view->setModel(model_);
    view->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    view->verticalHeader()->hide();
    view->setMaximumHeight(170);
    extrasLayout()->addWidget(view);
    connect(controls_->runButton(), &QPushButton::clicked, this, [this] { run(lengths()); });
    connect(controls_, &JobControls::ended, this, [this](bool ok, const QString& error) {
        emit jobEnded(tr("Attention head timing"), ok, error);
    });
    connect(model_, &QAbstractItemModel::modelReset, this, &AttentionCostPanel::rebuild);
    rebuild();
}

void AttentionCostPanel::attach(const PanelContext& context) {
    controls_->attach(*context.jobs);
    context.jobs->listen<compute::experiments::AttentionHeadLab>(
        this, [this](const compute::experiments::AttentionHeadLab::Result& result) {
            setTables(compute::experiments::AttentionHeadLab::tables(result));
        });
}

quint64 AttentionCostPanel::run(const std::vector<std::uint32_t>& lengths) {
    if (lengths.empty()) return 0;
    compute::experiments::AttentionHeadRequest request;
    request.options.lengths = lengths;
    return controls_->run([&](LabJobs& jobs) {
        return jobs.runLab<compute::experiments::AttentionHeadLab>(request);
    });
}

std::optional<quint64> AttentionCostPanel::runScripted() {
    std::vector<std::uint32_t> lengths;
    for (std::uint32_t n = 256; n <= kScriptMaxLength; n *= 2) lengths.push_back(n);
    return run(lengths);
}

std::vector<std::uint32_t> AttentionCostPanel::lengths() const {
    std::vector<std::uint32_t> all;
    const auto max = std::uint32_t(maxLength_->currentData().toInt());
    for (std::uint32_t n = 256; n <= max; n *= 2) all.push_back(n);
    return all;
}

void AttentionCostPanel::setTables(const std::vector<compute::Table>& tables) {
    model_->setTable(!tables.empty() ? tables.front() : compute::Table{});
}

std::vector<compute::Table> AttentionCostPanel::dataTables() const {
    if (model_->rowCount() == 0) return {};
    return {model_->table()};
}

void AttentionCostPanel::rebuild() {
    QList<QPointF> uncached, cached;
    const auto& t = model_->table();
    for (std::size_t r = 0; r < t.rows.size(); ++r) {
        const double n = t.number(r, "n");
        uncached.append(QPointF(n, t.number(r, "uncached")));
        cached.append(QPointF(n, t.number(r, "cached")));
    }
    setSeriesPoints({{Uncached, uncached}, {Cached, cached}});
    if (t.rows.empty()) {
        setSummary({});
        return;
    }
    // The longest length measured: bytes and time both ways, from the table itself.
    const std::size_t last = t.rows.size() - 1;
    QLocale locale;
    setSummary(
        tr("n = %1: uncached %2 ms for %3 of scores, cached %4 ms for %5 (%6x faster)")
            .arg(locale.toString(qint64(t.number(last, "n"))))
            .arg(locale.toString(t.number(last, "uncached"), 'f', 2))
            .arg(QString::fromStdString(compute::humanBytes(t.number(last, "uncached scores"))))
            .arg(locale.toString(t.number(last, "cached"), 'f', 3))
            .arg(QString::fromStdString(compute::humanBytes(t.number(last, "cached scores"))))
            .arg(locale.toString(t.number(last, "time ratio"), 'f', 0)));
}

} // namespace inferscope::widgets
