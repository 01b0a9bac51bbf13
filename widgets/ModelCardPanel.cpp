#include "widgets/ModelCardPanel.hpp"
#include "models/tokenizer/PrintableBytes.hpp"

#include "widgets/LabJobs.hpp"
#include "widgets/TableModel.hpp"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLocale>
#include <QTableView>
#include <QVBoxLayout>

#include <cmath>

namespace inferscope::widgets {

namespace {
constexpr double kMiB = 1024.0 * 1024.0;

QTableView* makeView(TableModel* model, QWidget* parent) {
    auto* view = new QTableView(parent);
    view->setModel(model);
    view->verticalHeader()->hide();
    view->horizontalHeader()->setStretchLastSection(true);
    view->setSelectionBehavior(QAbstractItemView::SelectRows);
    view->setEditTriggers(QAbstractItemView::NoEditTriggers);
    view->setWordWrap(false);
    return view;
}
} // namespace

ModelCardPanel::ModelCardPanel(QWidget* parent)
    : LabPanel("model-card", tr("Model card"),
               tr("The loaded model's shape, what its stored weights weigh by tensor type, how "
                  "many bytes one token of context costs in the KV cache, and what the chosen "
                  "backend and format need on the device and the host against what they have."),
               parent),
      info_(new TableModel(this)), weights_(new TableModel(this)), kv_(new TableModel(this)),
      footprint_(new TableModel(this)) {
    setAxis(Qt::Horizontal, tr("tensor type"), AxisScale::Category);
    setAxis(Qt::Vertical, tr("stored weights (MiB)"), AxisScale::Linear);
    addSeries(tr("bytes by tensor type"), SeriesKind::Bars);
    setEmptyHint(tr("Open a model (Ctrl+O, or drop a GGUF file on the window): its shape and "
                    "weights show here."));
    infoView_ = makeView(info_, this);
    kvView_ = makeView(kv_, this);
    footprintView_ = makeView(footprint_, this);
    auto* tables = new QHBoxLayout;
    tables->addWidget(infoView_, 3);
    auto* right = new QVBoxLayout;
    right->addWidget(kvView_);
    right->addWidget(footprintView_);
    tables->addLayout(right, 2);
    extrasLayout()->addLayout(tables);
    infoView_->setMinimumHeight(160);
    kvView_->setMinimumHeight(120);
    footprintView_->setMinimumHeight(120);
    connect(weights_, &QAbstractItemModel::modelReset, this, &ModelCardPanel::rebuild);
    rebuild();
}

void ModelCardPanel::setModel(ModelRecordPtr model) {
    model_ = std::move(model);
    info_->setTable(model_ ? model_->info : compute::Table{});
    kv_->setTable(model_ ? model_->kvCache : compute::Table{});
    footprint_->setTable(model_ ? model_->footprint : compute::Table{});
    weights_->setTable(model_ ? model_->weightBytes : compute::Table{}); // rebuilds the summary
    infoView_->resizeColumnsToContents();
    kvView_->resizeColumnsToContents();
    footprintView_->resizeColumnsToContents();
}

std::vector<compute::Table> ModelCardPanel::dataTables() const {
    if (!model_) return {};
    std::vector<compute::Table> tables{info_->table(), weights_->table(), kv_->table()};
    if (!footprint_->table().columns.empty()) tables.push_back(footprint_->table());
    return tables;
}

void ModelCardPanel::rebuild() {
    QStringList types;
    QList<qreal> mebibytes;
    QLocale locale;
    double totalBytes = 0;
    for (int row = 0; row < weights_->rowCount(); ++row) {
        QString type = weights_->data(weights_->index(row, 0)).toString();
        double bytes = weights_->number(row, 2);
        if (type == "total") {
            totalBytes = bytes;
            continue;
        }
        types << type;
        mebibytes << bytes / kMiB;
    }
    setBarValues(WeightBytes, types, mebibytes);
    if (!model_) {
        setSummary({});
        return;
    }
    const auto& c = model_->config;
    setSummary(tr("%1: %2 layers, hidden %3, %4 heads / %5 KV heads · weights %6 MiB · KV cache "
                  "%7 B per token at fp16")
                   .arg(QString::fromStdString(
                       models::printableText(c.name.empty() ? c.architecture : c.name)))
                   .arg(c.layers)
                   .arg(c.hiddenSize)
                   .arg(c.heads)
                   .arg(c.kvHeads)
                   .arg(locale.toString(totalBytes / kMiB, 'f', 1))
                   .arg(locale.toString(qulonglong(c.kvBytesPerToken(2)))) +
               footprintSummary());
}

QString ModelCardPanel::footprintSummary() const {
    // The totals of the footprint table (compute::loadFootprintTable), device then host.
    for (int row = 0; row < footprint_->rowCount(); ++row) {
        if (footprint_->data(footprint_->index(row, 0)).toString() != "total") continue;
        const double device = footprint_->number(row, 1), host = footprint_->number(row, 2);
        QString text = tr(" · footprint: ");
        if (!std::isnan(device))
            text +=
                tr("%1 on the device, ").arg(QString::fromStdString(compute::humanBytes(device)));
        return text + tr("%1 on the host").arg(QString::fromStdString(compute::humanBytes(host)));
    }
    return {};
}

void ModelCardPanel::attach(const PanelContext& context) {
    connect(context.jobs, &LabJobs::modelLoaded, this,
            [this](const LoadedModelPtr& model) { setModel(model ? model->card : nullptr); });
}

} // namespace inferscope::widgets
