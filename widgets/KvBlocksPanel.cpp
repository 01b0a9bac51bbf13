#include "widgets/KvBlocksPanel.hpp"

#include "compute/experiments/serving/SchedulerLab.hpp"

#include "widgets/KvBlocksFigure.hpp"
#include "widgets/LabJobs.hpp"
#include "widgets/PanelControls.hpp"
#include "widgets/TableModel.hpp"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QTableView>
#include <QVBoxLayout>

namespace inferscope::widgets {

namespace {
bool isKvTable(const std::string& id) {
    return id.rfind("kv-block-", 0) == 0 || id == "prefix-sharing";
}

} // namespace

KvBlocksPanel::KvBlocksPanel(QWidget* parent)
    : LabPanel("kv-blocks", tr("KV blocks"),
               tr("The paged KV cache during continuous batching: each sequence's block table "
                  "maps its logical blocks to physical ones (the number in a cell); the pool "
                  "on the right holds them. A partly filled last block's empty tail is the "
                  "only waste; a shared block holds a common prefix once for several "
                  "requests (the count written in it)."),
               parent),
      mapModel_(new TableModel(this)), prefixModel_(new TableModel(this)) {
    figure_ = new KvBlocksFigure(this);
    setFigure(figure_);
    setEmptyHint(tr("Run the Scheduler panel's \"Run static vs continuous\": its continuous run "
                    "snapshots the KV cache."));

    auto* controls = new QHBoxLayout;
    controls->addWidget(new QLabel(tr("Snapshot"), this));
    snapshot_ = new QComboBox(this);
    snapshot_->setObjectName("kvBlocksSnapshot");
    controls->addWidget(snapshot_, 1);
    extrasLayout()->addLayout(controls);
    extrasLayout()->addWidget(makeTableView(this, "kvBlocksMap", mapModel_, 170));
    extrasLayout()->addWidget(makeTableView(this, "kvBlocksPrefix", prefixModel_, 110));
    connect(snapshot_, &QComboBox::currentIndexChanged, this, [this] { draw(); });
}

void KvBlocksPanel::setTables(std::vector<compute::Table> tables) {
    tables_.clear();
    for (auto& t : tables)
        if (isKvTable(t.id)) tables_.push_back(std::move(t));
    const auto* map = compute::findTable(tables_, "kv-block-map");
    const auto* prefix = compute::findTable(tables_, "prefix-sharing");
    mapModel_->setTable(map ? *map : compute::Table{});
    prefixModel_->setTable(prefix ? *prefix : compute::Table{});
    {
        const QSignalBlocker block(snapshot_);
        snapshot_->clear();
        if (map)
            for (std::size_t row = 0; row < map->rows.size(); ++row)
                snapshot_->addItem(
                    QString::fromStdString(std::get<std::string>(map->at(row, "snapshot"))));
        snapshot_->setCurrentIndex(snapshot_->count() > 0 ? 0 : -1); // the peak comes first
    }
    draw();
}

void KvBlocksPanel::setSnapshot(int index) {
    snapshot_->setCurrentIndex(index);
}

int KvBlocksPanel::snapshot() const {
    return snapshot_->currentIndex();
}

void KvBlocksPanel::draw() {
    const auto* map = compute::findTable(tables_, "kv-block-map");
    const auto* blockTables = compute::findTable(tables_, "kv-block-tables");
    const auto* cells = compute::findTable(tables_, "kv-block-cells");
    const int index = snapshot_->currentIndex();
    if (!map || !cells || index < 0 || std::size_t(index) >= map->rows.size()) {
        figure_->clear();
        setFigureHasData(false);
        setSummary({});
        return;
    }
    const auto label = std::get<std::string>(map->at(std::size_t(index), "snapshot"));
    figure_->setSnapshot(blockTables, cells, label);
    setFigureHasData(!figure_->poolCells().empty());
    const auto i = std::size_t(index);
    QLocale locale;
    setSummary(
        tr("%1: %2 of %3 blocks in use, %4 shared, %5 used of %6 allocated token slots "
           "(internal fragmentation %7%); reserving each slot's maximum context: %8 token "
           "slots")
            .arg(QString::fromStdString(label))
            .arg(map->number(i, "blocks in use"))
            .arg(figure_->poolCells().size())
            .arg(map->number(i, "shared blocks"))
            .arg(locale.toString(map->number(i, "used token slots"), 'f', 0))
            .arg(locale.toString(map->number(i, "allocated token slots"), 'f', 0))
            .arg(locale.toString(map->number(i, "internal fragmentation"), 'f', 1))
            .arg(locale.toString(map->number(i, "reserving max context: token slots"), 'f', 0)));
}

void KvBlocksPanel::clear() {
    setTables({});
}

std::vector<compute::Table> KvBlocksPanel::dataTables() const {
    return tables_;
}

void KvBlocksPanel::attach(const PanelContext& context) {
    context.jobs->listen<compute::experiments::SchedulerLab>(
        this, [this](const std::vector<compute::Table>& tables) { setTables(tables); });
    connect(context.jobs, &LabJobs::modelLoaded, this, [this](const LoadedModelPtr& model) {
        backend_ = QString::fromStdString(model->backend);
        clear();
    });
}

QString KvBlocksPanel::emptyReason() const {
    return tr("batching runs on the GPU engine; the backend (%1) serves one sequence")
        .arg(backend_);
}

} // namespace inferscope::widgets
