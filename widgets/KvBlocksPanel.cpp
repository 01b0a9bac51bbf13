#include "widgets/KvBlocksPanel.hpp"

#include "compute/experiments/serving/SchedulerLab.hpp"

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
#include <cmath>

namespace inferscope::widgets {

namespace {
bool isKvTable(const std::string& id) {
    return id.rfind("kv-block-", 0) == 0 || id == "prefix-sharing";
}

} // namespace

KvBlocksPanel::KvBlocksPanel(QWidget* parent)
    : LabPanel("kv-blocks", tr("KV blocks"),
               tr("The paged KV cache during continuous batching: each square is one block "
                  "of positions, coloured by the slot holding it; a small mark is a partly "
                  "filled last block (its empty tail is the only waste), shared blocks hold "
                  "a common prefix once for several requests."),
               parent),
      mapModel_(new TableModel(this)), prefixModel_(new TableModel(this)) {
    setAxis(Qt::Horizontal, tr("block (column)"), AxisScale::Linear);
    setAxis(Qt::Vertical, tr("block (row, block 0 at the top)"), AxisScale::Linear);
    for (int c = 0; c < kOwnerColours; ++c) {
        QStringList slotNumbers;
        for (int s = c + 1; s <= 3 * kOwnerColours; s += kOwnerColours)
            slotNumbers << QString::number(s);
        addSeries(tr("slots %1, ...").arg(slotNumbers.join(", ")), SeriesKind::Scatter);
    }
    addSeries(tr("partly filled last block"), SeriesKind::Scatter);
    addSeries(tr("shared by a prefix (reference count > 1)"), SeriesKind::Scatter);
    addSeries(tr("free"), SeriesKind::Scatter);
    for (int s = FirstOwner; s <= Free; ++s) {
        setSquareMarkers(s);
        setMarkerSize(s, 13);
    }
    setMarkerSize(PartlyFilled, 5);
    setMarkerSize(Free, 7);
    // Apart from the owners' palette: the empty tail a hole, shared dark, free pale.
    setSeriesColour(PartlyFilled, QColor(Qt::white));
    setSeriesColour(Shared, QColor(0x44, 0x44, 0x44));
    setSeriesColour(Free, QColor(0xC8, 0xC8, 0xC8));
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
    std::vector<std::pair<int, QList<QPointF>>> updates;
    QList<QPointF> points[Free + 1];
    const auto* map = compute::findTable(tables_, "kv-block-map");
    const auto* cells = compute::findTable(tables_, "kv-block-cells");
    const int index = snapshot_->currentIndex();
    if (!map || !cells || index < 0 || std::size_t(index) >= map->rows.size()) {
        for (int s = FirstOwner; s <= Free; ++s) updates.push_back({s, {}});
        setSeriesPoints(updates);
        setSummary({});
        return;
    }
    const auto label = std::get<std::string>(map->at(std::size_t(index), "snapshot"));
    std::vector<std::size_t> rows;
    for (std::size_t row = 0; row < cells->rows.size(); ++row)
        if (std::get<std::string>(cells->at(row, "snapshot")) == label) rows.push_back(row);
    // A near-square grid, at least 8 wide.
    const int columns = std::max(8, int(std::ceil(std::sqrt(double(rows.size())))));
    const int gridRows = (int(rows.size()) + columns - 1) / columns;
    for (const auto row : rows) {
        const int block = int(cells->number(row, "block"));
        const QPointF at(block % columns, gridRows - 1 - block / columns);
        const double references = cells->number(row, "reference count");
        const double fill = cells->number(row, "filled");
        if (references == 0) {
            points[Free] << at;
            continue;
        }
        if (references > 1) {
            points[Shared] << at;
        } else {
            const auto& slot = cells->at(row, "slot");
            const auto s =
                std::holds_alternative<std::int64_t>(slot) ? std::get<std::int64_t>(slot) : 0;
            points[FirstOwner + int(s % kOwnerColours)] << at;
        }
        if (fill < 100.0) points[PartlyFilled] << at;
    }
    for (int s = FirstOwner; s <= Free; ++s) updates.push_back({s, points[s]});
    setSeriesPoints(updates);
    const auto i = std::size_t(index);
    QLocale locale;
    setSummary(
        tr("%1: %2 of %3 blocks in use, %4 shared, %5 used of %6 allocated token slots "
           "(internal fragmentation %7%); reserving each slot's maximum context: %8 token "
           "slots")
            .arg(QString::fromStdString(label))
            .arg(map->number(i, "blocks in use"))
            .arg(rows.size())
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
