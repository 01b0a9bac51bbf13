#include "widgets/ModelCardPanel.hpp"

#include "widgets/LabJobs.hpp"
#include "widgets/TableModel.hpp"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLocale>
#include <QTableView>
#include <QVBoxLayout>

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
    : ChartPanel("model-card", tr("Model card"),
                 tr("The loaded model's shape, what its stored weights weigh by tensor type, and "
                    "how many bytes one token of context costs in the KV cache."),
                 parent),
      info_(new TableModel(this)), weights_(new TableModel(this)), kv_(new TableModel(this)) {
    setAxis(Qt::Horizontal, tr("tensor type"), AxisScale::Category);
    setAxis(Qt::Vertical, tr("stored weights (MiB)"), AxisScale::Linear);
    addSeries(tr("bytes by tensor type"), SeriesKind::Bars);
    setEmptyHint(tr("Open a model (Ctrl+O, or drop a GGUF file on the window): its shape and "
                    "weights show here."));
    infoView_ = makeView(info_, this);
    kvView_ = makeView(kv_, this);
    auto* tables = new QHBoxLayout;
    tables->addWidget(infoView_, 3);
    tables->addWidget(kvView_, 2);
    extrasLayout()->addLayout(tables);
    infoView_->setMinimumHeight(160);
    kvView_->setMinimumHeight(120);
    connect(weights_, &QAbstractItemModel::modelReset, this, &ModelCardPanel::rebuild);
    rebuild();
}

void ModelCardPanel::setModel(ModelRecordPtr model) {
    model_ = std::move(model);
    info_->setTable(model_ ? model_->info : compute::Table{});
    kv_->setTable(model_ ? model_->kvCache : compute::Table{});
    weights_->setTable(model_ ? model_->weightBytes : compute::Table{});
    infoView_->resizeColumnsToContents();
    kvView_->resizeColumnsToContents();
}

std::vector<compute::Table> ModelCardPanel::dataTables() const {
    if (!model_) return {};
    return {info_->table(), weights_->table(), kv_->table()};
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
                   .arg(QString::fromStdString(c.name.empty() ? c.architecture : c.name))
                   .arg(c.layers)
                   .arg(c.hiddenSize)
                   .arg(c.heads)
                   .arg(c.kvHeads)
                   .arg(locale.toString(totalBytes / kMiB, 'f', 1))
                   .arg(locale.toString(qulonglong(c.kvBytesPerToken(2)))));
}

void ModelCardPanel::subscribe(const LabJobs& jobs) {
    connect(&jobs, &LabJobs::modelLoaded, this,
            [this](const LoadedModelPtr& model) { setModel(model ? model->card : nullptr); });
}

} // namespace inferscope::widgets
